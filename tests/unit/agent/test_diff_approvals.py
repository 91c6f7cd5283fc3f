"""Edits approved as diffs (SPEC §11 "Diff approvals" and its Details): what the approval
request carries (path, before, after; command line and folder), edits that cannot apply fail
without asking, a file changed after it was shown is not written (``changed``), a denial leaves
the disk byte-identical; the terminal shows a unified diff."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.agent.approvals import (
    ApprovalRequest,
    Decision,
    Denial,
    summarize,
)
from pseudoclaude.agent.runner import Runner
from pseudoclaude.agent.tools import ToolRegistry
from pseudoclaude.cli.approver import TerminalApprover, unified_diff
from pseudoclaude.compact import CompactConfig, CompactRuntime
from pseudoclaude.conversation import Conversation
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.provider import Provider, Stop, StreamEvent, ToolCallComplete, ToolSpec
from pseudoclaude.llm.types import Message, ToolCall
from pseudoclaude.permissions import Approvals
from support import policy_gate

ASK = Approvals(run_command="ask", write="ask")


class Approver:
    """Answers ``answer`` after running ``during`` (what happens while the user looks), and
    records every request."""

    def __init__(self, answer: Decision | None = "allow_once",
                 during: Callable[[], None] | None = None) -> None:
        self.answer = answer
        self.during = during
        self.requests: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> Decision | None:
        self.requests.append(request)
        if self.during is not None:
            self.during()
        return self.answer


class OneTurn:
    """A provider whose first turn makes ``calls`` and whose next turns answer ``done``."""

    name = "scripted"
    model = "scripted-model"

    def __init__(self, calls: list[ToolCall]) -> None:
        self.calls = calls

    async def stream(self, system: str, messages: list[Message], tools: list[ToolSpec],
                     **_: object) -> AsyncGenerator[StreamEvent, None]:
        calls, self.calls = self.calls, []
        for call in calls:
            yield ToolCallComplete(call)
        yield Stop("tool_use" if calls else "end_turn")

    async def aclose(self) -> None:
        return None


def run_calls(root: Path, approver: Approver, *calls: ToolCall,
              policy: Approvals = ASK) -> list[dict[str, Any]]:
    """Run the calls through a real :class:`Runner` and gate; their result envelopes."""
    conversation = Conversation()
    provider = OneTurn(list(calls))

    async def source() -> Provider:
        return provider

    async def system_prompt() -> str:
        return "SYSTEM"

    runner = Runner(
        conversation,
        compact=CompactRuntime(conversation, config=CompactConfig(window=200_000),
                               spill_dir=root.parent / "spill", workspace=root),
        provider=source, tools=ToolRegistry(root), gate=policy_gate(policy, approver, root=root),
        system_prompt=system_prompt, emit=lambda event: None)
    result = asyncio.run(runner.run("go"))
    assert result.stop_reason == "completed"
    return [json.loads(m.tool_result.content) for m in conversation.messages()
            if m.tool_result is not None]


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (temporary files included) with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    return ws


def write(path: str, content: str, call_id: str = "w1") -> ToolCall:
    return ToolCall(call_id, "write_file", {"path": path, "content": content})


def edit(path: str, old: str, new: str, call_id: str = "e1") -> ToolCall:
    return ToolCall(call_id, "edit_file", {"path": path, "old_text": old, "new_text": new})


# -- before / after -----------------------------------------------------------------------------

def test_a_new_file_is_shown_from_empty(root: Path) -> None:
    approver = Approver()
    [result] = run_calls(root, approver, write(str(root / "sub" / "new.txt"), "hello\n"))
    [request] = approver.requests
    assert (request.tool, request.approval_class, request.call_id) == ("write_file", "write", "w1")
    assert (request.path, request.before, request.after) == ("sub/new.txt", "", "hello\n")
    assert request.command is None and request.cwd is None
    assert result["ok"] and result["metadata"]["created"] is True
    assert (root / "sub" / "new.txt").read_text() == "hello\n"


def test_overwriting_shows_the_whole_file_before_and_after(root: Path) -> None:
    approver = Approver()
    [result] = run_calls(root, approver, write("a.txt", "ONE\n"))
    [request] = approver.requests
    assert (request.path, request.before, request.after) == ("a.txt", "one\ntwo\nthree\n",
                                                             "ONE\n")
    assert result["ok"] and result["metadata"]["created"] is False
    assert (root / "a.txt").read_text() == "ONE\n"


def test_an_edit_shows_the_whole_file_with_the_change(root: Path) -> None:
    (root / "a.txt").chmod(0o640)
    approver = Approver()
    [result] = run_calls(root, approver, edit("./a.txt", "two\n", "2\n"))
    [request] = approver.requests
    assert request.path == "a.txt"
    assert request.before == "one\ntwo\nthree\n" and request.after == "one\n2\nthree\n"
    assert result["ok"] and result["metadata"] == {
        "path": "a.txt", "line": 2, "bytes": 12,
        "sha256": hashlib.sha256(b"one\n2\nthree\n").hexdigest()}
    assert (root / "a.txt").read_bytes() == b"one\n2\nthree\n"
    assert (root / "a.txt").stat().st_mode & 0o777 == 0o640


def test_a_crlf_edit_shows_the_converted_text(root: Path) -> None:
    (root / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    approver = Approver()
    [result] = run_calls(root, approver, edit("w.txt", "a\nb\n", "x\ny\n"))
    [request] = approver.requests
    assert request.before == "a\r\nb\r\nc\r\n" and request.after == "x\r\ny\r\nc\r\n"
    assert result["ok"] and (root / "w.txt").read_bytes() == b"x\r\ny\r\nc\r\n"


def test_a_command_shows_its_command_line_and_folder(root: Path) -> None:
    approver = Approver(answer="deny")
    call = ToolCall("r1", "run_command", {"command": "touch", "args": ["my file", "b"]})
    [result] = run_calls(root, approver, call)
    [request] = approver.requests
    assert request.command == "touch 'my file' b" and request.cwd == str(root.resolve())
    assert request.path is None and request.before is None and request.after is None
    assert result["error_type"] == "permission_denied" and not (root / "my file").exists()
    assert result["error"] == "run_command was denied by the user"
    assert result["metadata"] == {"source": "user"}


# -- what is never asked ------------------------------------------------------------------------

@pytest.mark.parametrize(("call", "error_type"), [
    (edit("a.txt", "four", "4"), "no_match"),
    (edit("a.txt", "t", "T"), "ambiguous_match"),
    (edit("../outside.txt", "x", "y"), "outside_workspace"),
    (write("../outside.txt", "x"), "outside_workspace"),
    (edit("bin.dat", "x", "y"), "binary_file"),
    (write("bin.dat", "text now"), "binary_file"),
    (edit("missing.txt", "x", "y"), "not_found"),
    (write("a.txt/child", "x"), "not_found"),
    (write("sub", "x"), "is_directory"),
])
def test_a_change_that_cannot_apply_fails_without_asking(root: Path, call: ToolCall,
                                                         error_type: str) -> None:
    (root / "bin.dat").write_bytes(b"x\x00y")
    (root / "sub").mkdir()
    (root.parent / "outside.txt").write_text("x")
    before = snapshot(root)
    approver = Approver()
    [result] = run_calls(root, approver, call)
    assert approver.requests == []
    assert result["ok"] is False and result["error_type"] == error_type, result
    assert snapshot(root) == before and (root.parent / "outside.txt").read_text() == "x"


@pytest.mark.parametrize("call", [edit("../outside.txt", "x", "y"), write("../outside.txt", "x")])
def test_a_change_outside_the_workspace_is_refused_by_the_engine(root: Path,
                                                                 call: ToolCall) -> None:
    """The permission engine refuses a path outside the workspace (source ``sandbox``, with
    the file tools' own error type) before anything is computed or asked."""
    outside = root.parent / "outside.txt"
    outside.write_text("x")
    before = snapshot(root)
    approver = Approver()
    [result] = run_calls(root, approver, call)
    assert approver.requests == []
    assert result["ok"] is False and result["error_type"] == "outside_workspace", result
    assert result["error"] == (f"{call.name} is not allowed: ../outside.txt is outside the "
                               f"workspace ({outside.resolve()})")
    assert result["metadata"] == {"source": "sandbox"}
    assert snapshot(root) == before and outside.read_text() == "x"


def test_allowed_writes_are_not_previewed(root: Path) -> None:
    """With ``approvals.write: allow`` nothing is shown, so nothing is computed before:
    overwriting a binary file works as before (SPEC §6)."""
    (root / "bin.dat").write_bytes(b"x\x00y")
    approver = Approver()
    [result] = run_calls(root, approver, write("bin.dat", "text"),
                         policy=Approvals(write="allow"))
    assert approver.requests == [] and result["ok"]
    assert (root / "bin.dat").read_text() == "text"


def test_allow_for_the_session_covers_the_next_write_without_a_preview(root: Path) -> None:
    approver = Approver(answer="allow_session")
    results = run_calls(root, approver, write("a.txt", "first\n"),
                        edit("a.txt", "first", "second", call_id="e2"))
    assert [r["ok"] for r in results] == [True, True] and len(approver.requests) == 1
    assert (root / "a.txt").read_text() == "second\n"


# -- deny, dismiss, changed ---------------------------------------------------------------------

@pytest.mark.parametrize("answer", ["deny", None])
@pytest.mark.parametrize("call", [write("a.txt", "gone\n"), edit("a.txt", "two", "2"),
                                  write("new/b.txt", "b")])
def test_a_denial_leaves_the_disk_byte_identical(root: Path, call: ToolCall,
                                                 answer: Decision | None) -> None:
    before = snapshot(root)
    stamp = (root / "a.txt").stat().st_mtime_ns
    approver = Approver(answer=answer)
    [result] = run_calls(root, approver, call)
    assert len(approver.requests) == 1 and result["error_type"] == "permission_denied"
    assert result["error"] == (f"{call.name} was denied by the user" if answer == "deny" else
                               f"{call.name} was not approved: the approval request was "
                               "dismissed")
    assert result["metadata"] == {"source": "user"}
    assert snapshot(root) == before and (root / "a.txt").stat().st_mtime_ns == stamp
    assert not (root / "new").exists()


@pytest.mark.parametrize("call", [write("a.txt", "mine\n"), edit("a.txt", "two", "2")])
def test_a_file_changed_after_it_was_shown_is_not_written(root: Path, call: ToolCall) -> None:
    def someone_edits() -> None:
        (root / "a.txt").write_text("one\ntwo\nthree\nfour\n")

    approver = Approver(during=someone_edits)
    [result] = run_calls(root, approver, call)
    assert result["ok"] is False and result["error_type"] == "changed", result
    assert "nothing was written" in result["error"]
    assert (root / "a.txt").read_text() == "one\ntwo\nthree\nfour\n"
    assert snapshot(root) == {"a.txt": b"one\ntwo\nthree\nfour\n"}  # no temporary file left


def test_a_new_file_created_meanwhile_is_not_overwritten(root: Path) -> None:
    approver = Approver(during=lambda: (root / "b.txt").write_text("theirs"))
    [result] = run_calls(root, approver, write("b.txt", "mine"))
    assert result["error_type"] == "changed" and (root / "b.txt").read_text() == "theirs"


def test_a_file_removed_meanwhile_is_not_recreated(root: Path) -> None:
    approver = Approver(during=(root / "a.txt").unlink)
    [result] = run_calls(root, approver, edit("a.txt", "two", "2"))
    assert result["error_type"] == "changed" and not (root / "a.txt").exists()


def test_a_file_turned_binary_meanwhile_is_changed(root: Path) -> None:
    approver = Approver(during=lambda: (root / "a.txt").write_bytes(b"\x00"))
    [result] = run_calls(root, approver, write("a.txt", "text"))
    assert result["error_type"] == "changed" and (root / "a.txt").read_bytes() == b"\x00"


def test_the_same_text_written_again_meanwhile_is_not_a_change(root: Path) -> None:
    """Only the content counts: a save that leaves the text as shown does not block."""
    approver = Approver(during=lambda: (root / "a.txt").write_text("one\ntwo\nthree\n"))
    [result] = run_calls(root, approver, edit("a.txt", "two", "2"))
    assert result["ok"] and (root / "a.txt").read_text() == "one\n2\nthree\n"


# -- the unified diff ---------------------------------------------------------------------------

def test_unified_diff_of_an_edit() -> None:
    text = unified_diff("src/a.txt", "one\ntwo\nthree\n", "one\n2\nthree\n")
    assert text == ("--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,3 +1,3 @@\n"
                    " one\n-two\n+2\n three\n")


def test_unified_diff_of_a_new_file_and_missing_final_newlines() -> None:
    assert unified_diff("n.txt", "", "x\ny") == (
        "--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n")
    assert unified_diff("n.txt", "a", "a\n") == (
        "--- a/n.txt\n+++ b/n.txt\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n")
    assert unified_diff("n.txt", "same\n", "same\n").startswith("(no change")


def test_unified_diff_never_sends_control_characters() -> None:
    text = unified_diff("a\x1b[2J.txt", "", "\x1b]0;pwned\x07 ok\r\nline\rx\u2028y\n")
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert "+\\x1b]0;pwned\\x07 ok\n" in text and "+line\\x0dx\u2028y\n" in text
    assert "--- a/a\\x1b[2J.txt" in text
    output = io.StringIO()
    request = ApprovalRequest("write_file", {}, "write_file: \x1b[2Jx", "write",
                              path="\x1b[2Jx", before="", after="\x9b31m\n")
    assert asyncio.run(TerminalApprover((io.StringIO("d\n"), output)).ask(request)) == "deny"
    assert "\x1b" not in output.getvalue() and "\x9b" not in output.getvalue()
    assert unified_diff("b", "", "if ok:\u202e x\n") == (
        "--- a/b\n+++ b/b\n@@ -0,0 +1 @@\n+if ok:\\u202e x\n")


def test_unified_diff_colours_and_limit() -> None:
    coloured = unified_diff("a", "x\n", "y\n", colour=True)
    assert "\x1b[31m-x\x1b[0m\n" in coloured and "\x1b[32m+y\x1b[0m\n" in coloured
    assert "\x1b[36m@@ -1 +1 @@\x1b[0m" in coloured and "\x1b[1m--- a/a\x1b[0m" in coloured
    long = unified_diff("a", "", "".join(f"{i}\n" for i in range(1000)), max_lines=10)
    assert long.count("\n") == 11 and long.endswith("... 993 more lines of the diff not shown\n")


def test_the_terminal_shows_the_diff_before_asking(root: Path) -> None:
    output = io.StringIO()
    approver = TerminalApprover((io.StringIO("d\n"), output))
    gate = policy_gate(ASK, approver, root=root)
    call = edit("a.txt", "two\n", "2\n")
    registry = ToolRegistry(root)
    assert asyncio.run(gate.check(call, "write", lambda: registry.prepare(call))) == Denial(
        "edit_file was denied by the user", "user")
    shown = output.getvalue()
    assert shown.startswith("\nPseudoClaude wants to edit_file: a.txt\n--- a/a.txt\n+++ b/a.txt\n")
    assert "-two\n+2\n" in shown and "\x1b[" not in shown  # not a terminal: no colour
    assert "  [a]lways adds the rule Edit(a.txt) to .PseudoClaude/permissions.local.yaml\n" in shown
    assert shown.index("+2") < shown.index("Allow? [o]nce / [s]ession / [a]lways / [d]eny")
    assert "arguments:" not in shown
    assert (root / "a.txt").read_text() == "one\ntwo\nthree\n"


def test_the_terminal_shows_a_command_with_its_folder(root: Path) -> None:
    output = io.StringIO()
    call = ToolCall("r1", "run_command", {"command": "ls", "args": ["-l"]})
    gate = policy_gate(ASK, TerminalApprover((io.StringIO("o\n"), output)), root=root)
    registry = ToolRegistry(root)
    assert asyncio.run(gate.check(call, "runCommand", lambda: registry.prepare(call))) is None
    assert f"run_command: ls -l\n  in: {root.resolve()}\n  arguments:" in output.getvalue()


def test_the_diff_is_coloured_on_a_pseudo_terminal(root: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    leader, follower = pty.openpty()
    try:
        os.write(leader, b"o\n")
        request = ApprovalRequest("write_file", {"path": "a.txt", "content": "new\n"},
                                  summarize(write("a.txt", "new\n")), "write",
                                  path="a.txt", before="old\n", after="new\n")
        approver = TerminalApprover(tty_path=os.ttyname(follower))
        assert asyncio.run(approver.ask(request)) == "allow_once"
        shown = _read_until(leader, b"[d]eny: ").decode()
        assert "\x1b[1m--- a/a.txt\x1b[0m" in shown and "\x1b[32m+new\x1b[0m" in shown
        assert "\x1b[31m-old\x1b[0m" in shown and "[o]nce / [s]ession / [d]eny" in shown
        monkeypatch.setenv("NO_COLOR", "1")
        os.write(leader, b"d\n")
        assert asyncio.run(approver.ask(request)) == "deny"
        shown = _read_until(leader, b"[d]eny: ").decode()
        assert "-old" in shown and "\x1b[" not in shown
    finally:
        os.close(leader)
        os.close(follower)


def _read_until(fd: int, marker: bytes, timeout: float = 30.0) -> bytes:
    """What the terminal shows until ``marker`` (or the end, or ``timeout``)."""
    out = b""
    deadline = time.monotonic() + timeout
    while marker not in out and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the other side is closed
                break
            if not chunk:
                break
            out += chunk
    return out


def test_pseudoclaude_run_shows_the_diff_on_a_terminal(tmp_path: Path) -> None:
    """The real CLI on a pseudo-terminal: the coloured diff, then the question; ``o`` edits."""
    ws = tmp_path / "ws"
    (ws / ".PseudoClaude").mkdir(parents=True)
    (ws / ".PseudoClaude" / "config.yaml").write_text(
        "approvals:\n  write: ask\nmemory:\n  enabled: false\n")
    (ws / "a.txt").write_text("one\ntwo\n")
    turns = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}},
                             {"name": "edit_file", "arguments": {
                                 "path": "a.txt", "old_text": "two", "new_text": "2"}}]},
             {"text": "Edited."}]
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC", "OPENAI"))
           and k != "NO_COLOR"} | {"HOME": str(tmp_path / "home"),
                                   "ANTHROPIC_API_KEY": "sk-test-cli-diff"}
    leader, follower = pty.openpty()
    try:
        with FakeModelServer({"turns": turns}) as fake:
            proc = subprocess.Popen(
                [sys.executable, "-m", "pseudoclaude", "run", "--workspace", str(ws),
                 "--base-url", fake.base_url, "shout", "two"],
                stdin=follower, stdout=subprocess.PIPE, stderr=follower, env=env,
                start_new_session=True)
            os.close(follower)
            follower = -1
            shown = _read_until(leader, b"[d]eny: ")
            os.write(leader, b"o\n")
            stdout, _ = proc.communicate(timeout=60)
        shown += _read_until(leader, b"\x00", timeout=1)
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    text = shown.decode("utf-8", "replace").replace("\r\n", "\n")
    assert proc.returncode == 0, text
    assert "PseudoClaude wants to edit_file: a.txt\n" in text
    assert "\x1b[1m--- a/a.txt\x1b[0m\n\x1b[1m+++ b/a.txt\x1b[0m\n" in text
    assert "\x1b[31m-two\x1b[0m\n\x1b[32m+2\x1b[0m\n" in text
    assert text.index("+2") < text.index("Allow? [o]nce / [s]ession / [a]lways / [d]eny")
    assert stdout == b"Edited.\n" and (ws / "a.txt").read_text() == "one\n2\n"
