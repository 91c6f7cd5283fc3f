"""The file tools with an editor (:class:`~pseudoclaude.agent.editor.Editor`): which text a
read sees, where a write goes, and what is refused, for an LSP-like editor (open documents
only) and an ACP-like one (every file)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.agent.editor import OpenText
from pseudoclaude.agent.tools import ToolError, ToolRegistry
from pseudoclaude.llm.editor import Diagnostic
from pseudoclaude.llm.types import ToolCall


class FakeEditor:
    def __init__(self, *, apply: bool = True, every_file: bool = False) -> None:
        self.docs: dict[Path, OpenText] = {}
        self.applied: list[tuple[str, str]] = []
        self.can_apply_edit = apply
        self.can_diagnose = False
        self.every_file = every_file

    def open_text(self, path: Path) -> OpenText | None:
        return self.docs.get(path)

    async def apply_edit(self, path: Path, label: str, before: OpenText, after: str) -> None:
        current = self.docs.get(path, OpenText(""))
        if current != before:
            raise ToolError("changed", f"{label} changed in the editor")
        self.docs[path] = OpenText(after, (before.version or 0) + 1)
        self.applied.append((label, after))

    async def diagnostics(self, paths: Sequence[str] | None) -> list[Diagnostic]:
        return []


def run(registry: ToolRegistry, name: str, preview: Any = None, **args: Any) -> dict[str, Any]:
    result = asyncio.run(registry.execute(ToolCall("c1", name, args), preview))
    body: dict[str, Any] = json.loads(result.content)
    return body


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    return tmp_path.resolve()


def registry(ws: Path, editor: FakeEditor) -> ToolRegistry:
    tools = ToolRegistry(ws)
    tools.set_editor(editor)
    return tools


def test_a_clean_open_document_is_read_and_written_on_disk(ws: Path) -> None:
    editor = FakeEditor()
    editor.docs[ws / "a.txt"] = OpenText("one\ntwo\n", 3)
    tools = registry(ws, editor)
    assert "unsaved" not in run(tools, "read_file", path="a.txt")
    body = run(tools, "edit_file", path="a.txt", old_text="two", new_text="2")
    assert body["ok"] and "unsaved" not in body and editor.applied == []
    assert (ws / "a.txt").read_text() == "one\n2\n"


def test_a_document_that_got_unsaved_changes_after_the_diff_is_not_written(ws: Path) -> None:
    editor = FakeEditor()
    tools = registry(ws, editor)
    call = ToolCall("c1", "edit_file", {"path": "a.txt", "old_text": "two", "new_text": "2"})
    preview = asyncio.run(tools.prepare(call))
    assert preview.before == "one\ntwo\n"
    editor.docs[ws / "a.txt"] = OpenText("one\ntwo\nthree\n", 4)  # the user types meanwhile
    body = run(tools, "edit_file", preview, **call.arguments)
    assert body["error_type"] == "changed" and (ws / "a.txt").read_text() == "one\ntwo\n"


def test_unsaved_work_without_edits_from_the_agent_fails_before_asking(ws: Path) -> None:
    editor = FakeEditor(apply=False)
    editor.docs[ws / "a.txt"] = OpenText("one\ntwo\nmine\n", 2)
    tools = registry(ws, editor)
    call = ToolCall("c1", "write_file", {"path": "a.txt", "content": "x\n"})
    with pytest.raises(ToolError) as info:
        asyncio.run(tools.prepare(call))
    assert info.value.error_type == "unsaved"
    assert run(tools, "write_file", **call.arguments)["error_type"] == "unsaved"
    assert (ws / "a.txt").read_text() == "one\ntwo\n"
    assert run(tools, "read_file", path="a.txt")["content"] == "one\ntwo\nmine\n"


def test_an_editor_of_every_file_reads_and_writes_everything_through_it(ws: Path) -> None:
    editor = FakeEditor(every_file=True)
    editor.docs[ws / "a.txt"] = OpenText("one\ntwo\n")  # what the disk has: not unsaved
    tools = registry(ws, editor)
    assert "unsaved" not in run(tools, "read_file", path="a.txt")
    created = run(tools, "write_file", path="new/b.txt", content="b\n")
    assert created["ok"] and created["metadata"]["created"] is True
    assert created["unsaved"] is True  # the editor holds it; the disk does not
    assert editor.applied == [("new/b.txt", "b\n")] and not (ws / "new").exists()
    edited = run(tools, "edit_file", path="a.txt", old_text="two", new_text="2")
    assert edited["ok"] and editor.docs[ws / "a.txt"].text == "one\n2\n"
    assert (ws / "a.txt").read_text() == "one\ntwo\n"
    # a search reads the disk: each answer would be a request to the editor
    found = run(tools, "search_code", pattern="two")
    assert found["content"] == "a.txt:2: two" and "unsaved" not in found


def test_get_diagnostics_is_offered_only_by_an_editor_that_answers_them(ws: Path) -> None:
    editor = FakeEditor()
    tools = registry(ws, editor)
    assert "get_diagnostics" not in tools.names
    assert run(tools, "get_diagnostics")["error_type"] == "unknown_tool"
    editor.can_diagnose = True
    assert "get_diagnostics" in tools.names
    body = run(tools, "get_diagnostics", paths=["a.txt"])
    assert body["ok"] and body["content"] == "the editor reports no problems in a.txt"
    assert run(tools, "get_diagnostics", paths=["../x"])["error_type"] == "outside_workspace"
