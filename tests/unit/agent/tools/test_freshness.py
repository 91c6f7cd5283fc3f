"""Stale writes are refused (:mod:`pseudoclaude.agent.tools.freshness`): a session writes an
existing file only when it knows what the file holds now (it read or wrote those bytes)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.agent.editor import OpenText
from pseudoclaude.agent.tools import ToolError, ToolRegistry
from pseudoclaude.agent.tools.freshness import FileLedger, WriteBoard, ledger_entries
from pseudoclaude.llm.editor import Diagnostic
from pseudoclaude.llm.types import Message, ToolCall, ToolResult
from pseudoclaude.session import SessionStore, SessionWriter
from pseudoclaude.session.results import tool_results
from pseudoclaude.session.timeline import FORK


def run(registry: ToolRegistry, name: str, **args: Any) -> dict[str, Any]:
    result = asyncio.run(registry.execute(ToolCall("c1", name, args)))
    body: dict[str, Any] = json.loads(result.content)
    assert result.is_error == (not body["ok"])
    return body


def sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    return root.resolve()


def session(ws: Path, sid: str = "A", board: WriteBoard | None = None) -> ToolRegistry:
    tools = ToolRegistry(ws)
    tools.set_files(FileLedger(sid, board))
    return tools


def refused(body: dict[str, Any]) -> str:
    assert body["ok"] is False and body["error_type"] == "stale", body
    return str(body["error"])


# -- never read ----------------------------------------------------------------------------------

def test_an_existing_file_never_read_is_not_written(ws: Path) -> None:
    tools = session(ws)
    error = refused(run(tools, "write_file", path="a.txt", content="new\n"))
    assert "has not read it" in error and "read_file" in error and "nothing was written" in error
    refused(run(tools, "edit_file", path="a.txt", old_text="two", new_text="2"))
    assert (ws / "a.txt").read_text() == "one\ntwo\nthree\n"


def test_a_whole_read_allows_the_write(ws: Path) -> None:
    tools = session(ws)
    read = run(tools, "read_file", path="a.txt")
    assert read["metadata"]["sha256"] == sha("one\ntwo\nthree\n")
    body = run(tools, "edit_file", path="a.txt", old_text="two", new_text="2")
    assert body["ok"] and body["metadata"]["sha256"] == sha("one\n2\nthree\n")
    assert (ws / "a.txt").read_text() == "one\n2\nthree\n"


def test_a_partial_read_counts_as_a_read(ws: Path) -> None:
    tools = session(ws)
    read = run(tools, "read_file", path="a.txt", offset=2, limit=1)
    assert read["content"] == "two\n"
    assert read["metadata"]["sha256"] == sha("one\ntwo\nthree\n")  # of the whole file
    assert run(tools, "write_file", path="a.txt", content="all new\n")["ok"]
    assert (ws / "a.txt").read_text() == "all new\n"


def test_a_failed_read_is_no_read(ws: Path) -> None:
    tools = session(ws)
    assert run(tools, "read_file", path="a.txt", offset=99)["error_type"] == "invalid_arguments"
    refused(run(tools, "write_file", path="a.txt", content="x"))


def test_no_ledger_no_check(ws: Path) -> None:
    """A registry without a session's ledger (the tools alone) writes as before."""
    assert run(ToolRegistry(ws), "write_file", path="a.txt", content="x\n")["ok"]


# -- new files, own writes, deleted files --------------------------------------------------------

def test_a_new_file_needs_no_read_and_the_agents_own_write_is_known(ws: Path) -> None:
    tools = session(ws)
    created = run(tools, "write_file", path="src/new.py", content="x = 1\n")
    assert created["ok"] and created["metadata"]["created"] is True
    assert created["metadata"]["sha256"] == sha("x = 1\n")
    # it wrote those bytes: edits (and rewrites) need no read
    assert run(tools, "edit_file", path="src/new.py", old_text="1", new_text="2")["ok"]
    assert run(tools, "write_file", path="src/new.py", content="x = 3\n")["ok"]
    assert (ws / "src" / "new.py").read_text() == "x = 3\n"


def test_a_file_deleted_since_it_was_read_is_a_new_file(ws: Path) -> None:
    tools = session(ws)
    run(tools, "read_file", path="a.txt")
    (ws / "a.txt").unlink()
    assert run(tools, "write_file", path="a.txt", content="again\n")["metadata"]["created"]


def test_a_file_created_by_someone_else_after_the_start_must_be_read(ws: Path) -> None:
    tools = session(ws)
    (ws / "b.txt").write_text("theirs\n")
    refused(run(tools, "write_file", path="b.txt", content="mine\n"))
    assert (ws / "b.txt").read_text() == "theirs\n"


# -- changed since ---------------------------------------------------------------------------------

def test_a_change_on_disk_since_the_read_is_refused(ws: Path) -> None:
    tools = session(ws)
    run(tools, "read_file", path="a.txt")
    (ws / "a.txt").write_text("one\ntwo\nthree\nfour\n")  # the user, another program
    error = refused(run(tools, "edit_file", path="a.txt", old_text="two", new_text="2"))
    assert "changed outside this session" in error and "Read it again" in error
    refused(run(tools, "write_file", path="a.txt", content="x\n"))
    assert (ws / "a.txt").read_text() == "one\ntwo\nthree\nfour\n"
    run(tools, "read_file", path="a.txt")  # read again: known again
    assert run(tools, "edit_file", path="a.txt", old_text="two", new_text="2")["ok"]


def test_a_change_after_the_agents_own_write_is_refused(ws: Path) -> None:
    tools = session(ws)
    run(tools, "write_file", path="n.txt", content="mine\n")
    (ws / "n.txt").write_text("someone else's\n")
    assert "changed outside this session" in refused(
        run(tools, "write_file", path="n.txt", content="mine again\n"))


def test_a_touch_is_no_change(ws: Path) -> None:
    tools = session(ws)
    run(tools, "read_file", path="a.txt")
    os.utime(ws / "a.txt", (1_000_000_000, 1_000_000_000))
    assert run(tools, "edit_file", path="a.txt", old_text="two", new_text="2")["ok"]


def test_the_same_bytes_written_back_are_no_change(ws: Path) -> None:
    tools = session(ws)
    run(tools, "read_file", path="a.txt")
    text = (ws / "a.txt").read_text()
    (ws / "a.txt").write_text("something else\n")
    (ws / "a.txt").write_text(text)
    assert run(tools, "write_file", path="a.txt", content="x\n")["ok"]


def test_a_command_that_changes_a_read_file_makes_it_stale(ws: Path) -> None:
    """The agent's own commands count as outside changes: it does not know what they wrote."""
    tools = session(ws)
    run(tools, "read_file", path="a.txt")
    script = "open('a.txt', 'a').write('four\\n')"
    assert run(tools, "run_command", command=sys.executable, args=["-c", script])["ok"]
    assert "changed outside this session" in refused(
        run(tools, "edit_file", path="a.txt", old_text="two", new_text="2"))


def test_an_approval_is_not_asked_for_a_stale_write(ws: Path) -> None:
    tools = session(ws)
    call = ToolCall("c1", "write_file", {"path": "a.txt", "content": "x\n"})
    with pytest.raises(ToolError) as stale:
        asyncio.run(tools.prepare(call))
    assert stale.value.error_type == "stale"
    run(tools, "read_file", path="a.txt")
    preview = asyncio.run(tools.prepare(call))
    assert preview.before == "one\ntwo\nthree\n"
    result = json.loads(asyncio.run(tools.execute(call, preview)).content)
    assert result["ok"] and result["metadata"]["sha256"] == sha("x\n")
    # the approved write is known: an edit after it needs no read
    assert run(tools, "edit_file", path="a.txt", old_text="x", new_text="y")["ok"]


def test_a_spilled_result_or_a_file_outside_the_workspace_is_not_recorded(tmp_path: Path,
                                                                           ws: Path) -> None:
    spill = tmp_path / "spill"
    spill.mkdir()
    (spill / "r.txt").write_text("spilled\n")
    tools = ToolRegistry(ws, extra_read_roots=[spill])
    files = FileLedger("A")
    tools.set_files(files)
    assert run(tools, "read_file", path=str(spill / "r.txt"))["ok"]
    assert files.known(spill / "r.txt") is None


# -- the editor ------------------------------------------------------------------------------------

class Editor:
    def __init__(self) -> None:
        self.docs: dict[Path, OpenText] = {}
        self.can_apply_edit = True
        self.can_diagnose = False
        self.every_file = False

    def open_text(self, path: Path) -> OpenText | None:
        return self.docs.get(path)

    async def apply_edit(self, path: Path, label: str, before: OpenText, after: str) -> None:
        self.docs[path] = OpenText(after, (before.version or 0) + 1)

    async def diagnostics(self, paths: Sequence[str] | None) -> list[Diagnostic]:
        return []


def test_unsaved_changes_in_the_editor_since_the_read_count(ws: Path) -> None:
    tools = session(ws)
    editor = Editor()
    tools.set_editor(editor)
    run(tools, "read_file", path="a.txt")  # the file on disk
    editor.docs[ws / "a.txt"] = OpenText("one\nTWO\nthree\n", 2)  # the user types, unsaved
    assert "changed outside this session" in refused(
        run(tools, "edit_file", path="a.txt", old_text="one", new_text="1"))
    read = run(tools, "read_file", path="a.txt")  # the editor's text
    assert read["unsaved"] and read["metadata"]["sha256"] == sha("one\nTWO\nthree\n")
    body = run(tools, "edit_file", path="a.txt", old_text="one", new_text="1")
    assert body["ok"] and body["unsaved"]
    assert editor.docs[ws / "a.txt"].text == "1\nTWO\nthree\n"
    # it wrote the editor's text: a further edit needs no read
    assert run(tools, "edit_file", path="a.txt", old_text="three", new_text="3")["ok"]
    # the user saves: the file on disk is what the session wrote, still known
    (ws / "a.txt").write_text(editor.docs[ws / "a.txt"].text)
    del editor.docs[ws / "a.txt"]
    assert run(tools, "edit_file", path="a.txt", old_text="3", new_text="three")["ok"]


# -- two sessions ----------------------------------------------------------------------------------

def test_another_sessions_write_is_named(ws: Path) -> None:
    board = WriteBoard()
    a, b = session(ws, "A-session", board), session(ws, "B-session", board)
    run(a, "read_file", path="a.txt")
    run(b, "read_file", path="a.txt")
    assert run(b, "edit_file", path="a.txt", old_text="two", new_text="2")["ok"]
    error = refused(run(a, "edit_file", path="a.txt", old_text="three", new_text="3"))
    assert "another session of this workspace (B-session)" in error
    assert "changed outside this session" not in error
    # never read by C, last written by B: the refusal says so
    c = session(ws, "C-session", board)
    assert "B-session" in refused(run(c, "write_file", path="a.txt", content="c\n"))
    # a later change by someone else is not B's
    (ws / "a.txt").write_text("outside\n")
    assert "changed outside this session" in refused(
        run(a, "write_file", path="a.txt", content="a\n"))
    run(a, "read_file", path="a.txt")
    assert run(a, "write_file", path="a.txt", content="a\n")["ok"]
    assert (ws / "a.txt").read_text() == "a\n"


# -- the ledger from a session's log ---------------------------------------------------------------

def envelope(tool: str, path: str, digest: str, ok: bool = True) -> str:
    body: dict[str, Any] = {"ok": ok, "tool": tool, "content": "…"}
    if ok:
        body["metadata"] = {"path": path, "sha256": digest}
    else:
        body |= {"error_type": "stale", "error": "x"}
    return json.dumps(body)


def result(call_id: str, tool: str, path: str, digest: str, ok: bool = True) -> Message:
    return Message(role="user", tool_result=ToolResult(
        call_id, tool, envelope(tool, path, digest, ok), is_error=not ok))


def test_the_ledger_comes_back_from_the_log(tmp_path: Path) -> None:
    """Every result line counts, even one a compaction later summarized away; a fork's
    history counts; failed results, other tools and files outside the workspace do not."""
    store = SessionStore(tmp_path / "data")
    with SessionWriter.create(store) as writer:
        sid = writer.session_id
        writer.append_message(Message(role="user", content="go"))
        writer.append_message(result("c1", "read_file", "a.txt", "h1"))
        writer.append_message(result("c2", "write_file", "b/c.txt", "h2"))
        writer.append_message(result("c3", "edit_file", "a.txt", "h3"))
        writer.append_message(result("c4", "write_file", "d.txt", "h4", ok=False))
        writer.append_message(result("c5", "search_code", "e.txt", "h5"))
        writer.append_message(result("c6", "read_file", "/elsewhere/spill.txt", "h6"))
        writer.append_replace("compact", [Message(role="user", content="a summary")])
        writer.append_message(result("c7", "read_file", "f.txt", "h7"))
        writer.append_replace(FORK, [result("c8", "read_file", "g.txt", "h8")])
        writer.append_replace("rewind", [result("c1", "read_file", "a.txt", "h1")])
    log = store.log_path(sid)
    root = tmp_path / "ws"
    entries = list(ledger_entries(tool_results(log, containing=b"sha256"), root))
    assert entries == [(str(root / "a.txt"), "h1"), (str(root / "b/c.txt"), "h2"),
                       (str(root / "a.txt"), "h3"), (str(root / "f.txt"), "h7"),
                       (str(root / "g.txt"), "h8")]
    files = FileLedger(sid, load=lambda: ledger_entries(tool_results(log), root))
    assert files.known(root / "a.txt") == "h3"
    assert list(tool_results(tmp_path / "no-such.jsonl")) == []


def test_a_resumed_ledger_allows_a_write_of_an_unchanged_file(ws: Path) -> None:
    """What the results carried (their envelopes, as the log keeps them) is what a resumed
    session knows."""
    first = session(ws)
    logged = [asyncio.run(first.execute(ToolCall("c1", "read_file", {"path": "a.txt"})))]
    again = ToolRegistry(ws)
    again.set_files(FileLedger("A", load=lambda: ledger_entries(logged, ws)))
    assert run(again, "edit_file", path="a.txt", old_text="two", new_text="2")["ok"]
