"""The agent lives in the editor (SPEC §12): the documents the client syncs are what the agent
reads; its writes to a document with unsaved changes go to the editor (``workspace/applyEdit``),
never to disk under the user's work; the prompt carries the editor's context; code actions on a
range; the editor's diagnostics as a tool and after each write.

The client here plays the editor: it keeps the documents it opened, applies the server's
``applyEdit`` to them (then sends ``didChange``, as VS Code does) and answers
``pseudoclaude/diagnostics`` from ``editor.problems``."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp.client import captured_exception_key

from pseudoclaude.api.protocol import CODE_ACTIONS, RUN, SESSIONS_MESSAGES

DISK = "alpha\nbeta\n"
UNSAVED = "alpha\nbeta\nunsaved line\n"


def notes(env: Any) -> Path:
    path: Path = env.folders[0] / "notes.txt"
    return path


EDIT = {"name": "edit_file",
        "arguments": {"path": "notes.txt", "old_text": "beta", "new_text": "BETA"}}
READ = {"name": "read_file", "arguments": {"path": "notes.txt"}}
"""An existing file is read before the agent changes it (a stale write is refused)."""


async def run(editor: Any, env: Any, *turns: dict[str, Any], **params: Any) -> Any:
    """A prompt whose model answers ``turns``, then "done"."""
    env.fake.add_turns(*turns, {"text": "done"})
    return await env.call(editor.client, RUN, {"prompt": "go", **params})


# -- reads -------------------------------------------------------------------------------------

async def test_a_dirty_document_is_read_as_the_editor_has_it(editing: Any, env: Any) -> None:
    editor = env.editor
    editor.open("notes.txt", DISK)
    editor.type("notes.txt", UNSAVED)
    search = {"name": "search_code", "arguments": {"pattern": "unsaved"}}
    await run(editor, env, {"tool_calls": [env.read_file("notes.txt"), search]})
    read, found = env.envelopes()
    assert read["ok"] and read["unsaved"] is True and read["content"] == UNSAVED
    assert found["unsaved"] is True and found["content"] == "notes.txt:3: unsaved line"
    assert found["metadata"]["unsaved_files"] == ["notes.txt"]
    assert notes(env).read_text() == DISK

    editor.close("notes.txt")  # after didClose the disk is read again
    await run(editor, env, {"tool_calls": [env.read_file("notes.txt")]})
    again = env.envelopes()[-1]
    assert again["content"] == DISK and "unsaved" not in again


async def test_an_open_clean_document_reads_and_writes_the_disk(editing: Any,
                                                                env: Any) -> None:
    editor = env.editor
    editor.open("notes.txt", DISK)
    await run(editor, env, {"tool_calls": [env.read_file("notes.txt")]}, {"tool_calls": [EDIT]})
    read, edit = env.envelopes()
    assert "unsaved" not in read and "unsaved" not in edit and edit["ok"]
    assert notes(env).read_text() == "alpha\nBETA\n" and editor.edits == []


# -- writes ------------------------------------------------------------------------------------

async def test_an_edit_of_unsaved_work_goes_to_the_editor_and_not_to_disk(
        editing: Any, env: Any) -> None:
    editor = env.editor
    editor.open("notes.txt", DISK)
    editor.type("notes.txt", UNSAVED)
    stamp = notes(env).stat().st_mtime_ns
    write = {"name": "write_file",
             "arguments": {"path": "notes.txt", "content": "alpha\nBETA\nunsaved line\nend\n"}}
    # (after its own edit, the write needs no new read: the session knows the editor's text)
    await run(editor, env, {"tool_calls": [READ, EDIT]}, {"tool_calls": [write]})
    assert notes(env).read_text() == DISK and notes(env).stat().st_mtime_ns == stamp
    assert editor.text("notes.txt") == "alpha\nBETA\nunsaved line\nend\n"
    first, second = editor.applied
    if editor.versions[0] is not None:  # a client that takes documentChanges
        assert editor.versions == [2, 3]  # the version each edit was made on
    [edit] = first  # the smallest edit: "beta" -> "BETA", nothing else
    assert (edit.range.start.line, edit.range.start.character, edit.range.end.line,
            edit.range.end.character, edit.new_text) == (1, 0, 1, 4, "BETA")
    assert [e.new_text for e in second] == ["end\n"]
    _, edited, wrote = env.envelopes()
    assert edited["ok"] and edited["unsaved"] is True and "in the editor" in edited["content"]
    assert wrote["ok"] and wrote["unsaved"] is True


def edits_of(params: types.ApplyWorkspaceEditParams) -> tuple[str, list[Any]]:
    """The document and the text edits of one ``workspace/applyEdit``."""
    if params.edit.document_changes:
        [change] = params.edit.document_changes
        assert isinstance(change, types.TextDocumentEdit)
        return change.text_document.uri, list(change.edits)
    [(uri, edits)] = (params.edit.changes or {}).items()
    return uri, list(edits)


def apply_as_lsp_says(text: str, edits: list[Any]) -> str:
    """``edits`` applied the LSP way: every range refers to ``text`` as it was before any of
    them, and they must not overlap (ASCII text: a character is an offset in any encoding)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(at: types.Position) -> int:
        assert at.line < len(lines) and at.character <= len(lines[at.line]), (at, text)
        return starts[at.line] + at.character

    spans = sorted((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits)
    for (_, end, _), (start, _, _) in itertools.pairwise(spans):
        assert end <= start, spans  # overlapping edits are not an LSP edit
    for start, end, new in reversed(spans):
        text = text[:start] + new + text[end:]
    return text


HUNKS_BEFORE = "one\ntwo\nthree\nfour\nfive\nsix\n"
HUNKS_AFTER = "one\nadded a\nadded b\ntwo\nthree\nFOUR\nfive\nsix\nseven\n"


async def test_the_ranges_of_several_hunks_all_refer_to_the_text_before_the_edit(
        editing: Any, env: Any) -> None:
    """Two lines added above a later change do not move that change's range: applied to the
    old text as the LSP says, the ranges the server sent give exactly the new text."""
    editor = env.editor
    editor.open("notes.txt", DISK)
    editor.type("notes.txt", HUNKS_BEFORE)
    write = {"name": "write_file", "arguments": {"path": "notes.txt", "content": HUNKS_AFTER}}
    await run(editor, env, {"tool_calls": [READ, write]})
    [params] = editor.edits
    uri, edits = edits_of(params)
    assert uri == editor.uri("notes.txt") and len(edits) == 3  # three hunks, one edit
    assert apply_as_lsp_says(HUNKS_BEFORE, edits) == HUNKS_AFTER
    [four] = [e for e in edits if e.new_text == "FOUR"]
    assert (four.range.start.line, four.range.end.line) == (3, 3)  # "four" was line 3 before
    assert editor.text("notes.txt") == HUNKS_AFTER and notes(env).read_text() == DISK
    _, wrote = env.envelopes()
    assert wrote["ok"] and wrote["unsaved"] is True


async def test_a_folder_reached_through_a_symlink_reads_and_edits_the_editors_text(
        linked_editing: Any, env: Any) -> None:
    """The workspace folder is a symbolic link, and the client names the document by the
    link's path: the agent still reads the unsaved text and edits it in the editor."""
    editor = env.editor
    assert env.folders[0].is_symlink()
    on_disk = env.folders[0].resolve() / "notes.txt"
    editor.open("notes.txt", DISK)
    editor.type("notes.txt", UNSAVED)
    stamp = on_disk.stat().st_mtime_ns
    await run(editor, env, {"tool_calls": [env.read_file("notes.txt")]}, {"tool_calls": [EDIT]})
    read, edited = env.envelopes()
    assert read["ok"] and read["unsaved"] is True and read["content"] == UNSAVED
    assert edited["ok"] and edited["unsaved"] is True and "in the editor" in edited["content"]
    [params] = editor.edits
    uri, _ = edits_of(params)
    assert uri == editor.uri("notes.txt")  # the document the client has open, by its name
    assert editor.text("notes.txt") == UNSAVED.replace("beta", "BETA")
    assert on_disk.read_text() == DISK and on_disk.stat().st_mtime_ns == stamp


async def test_a_client_without_apply_edit_is_refused_and_nothing_changes(
        no_apply: Any, env: Any) -> None:
    editor = env.editor
    editor.open("notes.txt", DISK)
    editor.type("notes.txt", UNSAVED)
    await run(editor, env, {"tool_calls": [EDIT]})
    [envelope] = env.envelopes()
    assert envelope["ok"] is False and envelope["error_type"] == "unsaved"
    assert "unsaved changes in the editor" in envelope["error"]
    assert notes(env).read_text() == DISK and editor.text("notes.txt") == UNSAVED
    assert editor.edits == []


@pytest.mark.parametrize("answer", [
    types.ApplyWorkspaceEditResult(applied=False, failure_reason="the file is read-only"),
    JsonRpcException(message="no such buffer", code=-32603),
])
async def test_an_edit_the_editor_rejects_is_a_tool_error(editing: Any, env: Any,
                                                          answer: Any) -> None:
    editor = env.editor
    editor.open("notes.txt", DISK)
    editor.type("notes.txt", UNSAVED)
    editor.answer = answer
    await run(editor, env, {"tool_calls": [READ, EDIT]})
    _, envelope = env.envelopes()
    assert envelope["ok"] is False and envelope["error_type"] == "editor_error"
    reason = "the file is read-only" if isinstance(answer, types.ApplyWorkspaceEditResult) \
        else "no such buffer"
    assert reason in envelope["error"]
    assert notes(env).read_text() == DISK and editor.text("notes.txt") == UNSAVED
    if isinstance(answer, Exception):  # the client's handler failed on purpose: not an error
        editing._pytest_item.stash[captured_exception_key] = None  # of the test itself


async def test_the_diff_shows_the_editors_text_and_a_moved_version_fails_as_changed(
        approving_editor: Any, env: Any) -> None:
    editor = env.editor
    editor.open("notes.txt", DISK)
    editor.type("notes.txt", UNSAVED)

    def answer(params: Any) -> Any:
        editor.type("notes.txt", UNSAVED + "typed while asked\n")  # the user types on
        return {"decision": "allowOnce"}

    env.approve_answer = answer

    await run(editor, env, {"tool_calls": [READ, EDIT]})
    [asked] = env.approve_requests
    assert asked["before"] == UNSAVED and asked["after"] == UNSAVED.replace("beta", "BETA")
    _, envelope = env.envelopes()
    assert envelope["error_type"] == "changed"
    assert editor.text("notes.txt") == UNSAVED + "typed while asked\n"
    assert notes(env).read_text() == DISK and editor.edits == []


# -- context -----------------------------------------------------------------------------------

SELECTION = {"path": "notes.txt", "text": "beta\n",
             "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}}
CONTEXT = {"activeFile": "notes.txt", "selection": SELECTION,
           "openFiles": ["notes.txt", "README.md"]}


async def test_the_context_reaches_the_model_before_the_prompt_and_the_log_keeps_it(
        editing: Any, env: Any) -> None:
    editor = env.editor
    await run(editor, env, context=CONTEXT, prompt="what does this do?")
    body = [r for r in env.fake.requests if r["body"].get("tools")][-1]["body"]
    first_user = next(m for m in body["messages"] if m["role"] == "user")
    blocks = first_user["content"]
    assert blocks[0]["type"] == "text" and blocks[0]["text"].startswith("Editor context")
    assert "- Active file: notes.txt" in blocks[0]["text"]
    assert "- Selection in notes.txt, line 2:\n```\nbeta\n```" in blocks[0]["text"]
    assert "- Open files: notes.txt, README.md" in blocks[0]["text"]
    assert (blocks[1]["type"], blocks[1]["text"]) == ("text", "what does this do?")
    [prompt] = [m for m in env.log_messages() if m["role"] == "user" and m.get("content")]
    assert prompt["content"] == "what does this do?" and prompt["context"] == CONTEXT
    items = (await env.call(editor.client, SESSIONS_MESSAGES, {}))["items"]
    [user] = [i for i in items if i["kind"] == "user"]
    assert user["text"] == "what does this do?" and user["context"] == CONTEXT


@pytest.mark.parametrize("bad", ["/etc/passwd", "../outside.txt", "C:\\x.py", ""])
async def test_a_context_path_that_is_not_relative_is_invalid(editing: Any, env: Any,
                                                              bad: str) -> None:
    editor = env.editor
    with pytest.raises(JsonRpcException) as info:
        await env.call(editor.client, RUN, {"prompt": "x", "context": {"activeFile": bad}})
    assert "context.activeFile" in str(info.value)


# -- code actions ------------------------------------------------------------------------------

def command_of(action: Any) -> tuple[str, Any]:
    """The command and argument of a code action. pygls's client reads the server's
    ``CodeAction`` as the first type of the union ``Command | CodeAction`` that fits (both have
    a ``title`` and a ``command``), so the action's command arrives as the text of a dict."""
    command = action.command
    if isinstance(command, str):
        command = ast.literal_eval(command)
    else:
        command = {"command": command.command, "arguments": command.arguments}
    [argument] = command["arguments"]
    return command["command"], argument


def _range(a: int, b: int, c: int, d: int) -> types.Range:
    return types.Range(start=types.Position(line=a, character=b),
                       end=types.Position(line=c, character=d))


async def test_code_actions_on_a_range_carry_the_selection(editing: Any, env: Any) -> None:
    editor = env.editor
    editor.open("notes.txt", UNSAVED)
    problem = types.Diagnostic(range=_range(1, 0, 1, 4), message="beta is undefined",
                               severity=types.DiagnosticSeverity.Error, source="lint")
    actions = await editor.client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=editor.uri("notes.txt")),
        range=_range(1, 0, 2, 0), context=types.CodeActionContext(diagnostics=[problem])))
    assert [a.title for a in actions or []] == list(CODE_ACTIONS.values())
    by_command = dict(command_of(a) for a in actions or [])
    assert set(by_command) == set(CODE_ACTIONS)
    explain = by_command["pseudoclaude.codeAction.explain"]
    assert explain == {"path": "notes.txt", "text": "beta\n",
                       "range": {"start": {"line": 1, "character": 0},
                                 "end": {"line": 2, "character": 0}}}
    fix = by_command["pseudoclaude.codeAction.fix"]
    assert fix["diagnostics"] == [{"path": "notes.txt", "severity": "error", "source": "lint",
                                   "message": "beta is undefined",
                                   "range": {"start": {"line": 1, "character": 0},
                                             "end": {"line": 1, "character": 4}}}]

    at_cursor = await editor.client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=editor.uri("notes.txt")),
        range=_range(1, 2, 1, 2), context=types.CodeActionContext(diagnostics=[])))
    assert not at_cursor  # no lightbulb at every cursor position
    on_problem = await editor.client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=editor.uri("notes.txt")),
        range=_range(1, 2, 1, 2), context=types.CodeActionContext(diagnostics=[problem])))
    [only] = on_problem or []
    assert only.title == "PseudoClaude: Fix"
    assert command_of(only) == ("pseudoclaude.codeAction.fix", {
        "path": "notes.txt", "text": "beta\n", "diagnostics": fix["diagnostics"],
        "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}})


# -- diagnostics -------------------------------------------------------------------------------

PROBLEM = {"path": "notes.txt", "severity": "error", "message": "BETA is not defined",
           "source": "pyright", "range": {"start": {"line": 1, "character": 0},
                                          "end": {"line": 1, "character": 4}}}


async def test_get_diagnostics_and_the_new_problems_after_a_write(diagnosing: Any,
                                                                  env: Any) -> None:
    editor = env.editor
    old = {**PROBLEM, "message": "an old warning", "severity": "warning"}
    editor.problems = [old]
    editor.after_edit = [old, PROBLEM]
    editor.open("notes.txt", DISK)
    editor.type("notes.txt", UNSAVED)
    get = {"name": "get_diagnostics", "arguments": {"paths": ["notes.txt"]}}
    await run(editor, env, {"tool_calls": [get]}, {"tool_calls": [READ, EDIT]})
    tools = [t["name"] for t in [r for r in env.fake.requests if r["body"].get("tools")][-1][
        "body"]["tools"]]
    assert "get_diagnostics" in tools
    listed, _, edited = env.envelopes()
    assert listed["content"] == "notes.txt:2: warning: an old warning (pyright)"
    assert listed["metadata"] == {"count": 1, "errors": 0, "warnings": 1}
    assert edited["ok"] and "New problems the editor reports in notes.txt:\n" \
        "notes.txt:2: error: BETA is not defined (pyright)" in edited["content"]
    assert edited["metadata"]["diagnostics"] == [PROBLEM]
    assert editor.diagnostics_asked[0]["paths"] == ["notes.txt"]

    editor.after_edit = None  # a write that brings no new problem says so
    again = {"name": "edit_file",
             "arguments": {"path": "notes.txt", "old_text": "alpha", "new_text": "ALPHA"}}
    await run(editor, env, {"tool_calls": [again]})
    last = env.envelopes()[-1]
    assert "The editor reports no new errors or warnings in notes.txt (waited 2." in \
        last["content"]
    assert last["metadata"]["diagnostics"] == []


async def test_a_client_that_does_not_answer_diagnostics_is_not_offered_the_tool(
        editing: Any, env: Any) -> None:
    editor = env.editor
    editor.open("notes.txt", DISK)
    editor.type("notes.txt", UNSAVED)
    await run(editor, env, {"tool_calls": [READ, EDIT]}, {"tool_calls": [
        {"name": "get_diagnostics", "arguments": {}}]})
    tools = [t["name"] for t in [r for r in env.fake.requests if r["body"].get("tools")][-1][
        "body"]["tools"]]
    assert "get_diagnostics" not in tools and "read_file" in tools
    _, edited, unknown = env.envelopes()
    assert edited["ok"] and "The editor reports" not in edited["content"]
    assert "diagnostics" not in edited["metadata"]
    assert unknown["error_type"] == "unknown_tool" and editor.diagnostics_asked == []


async def test_typing_in_the_editor_after_the_agent_read_makes_its_write_stale(
        editing: Any, env: Any) -> None:
    """The user types into the open document after the agent read it: the agent's edit is
    refused as stale (the editor's unsaved text is the file's content), nothing is applied."""
    editor = env.editor
    editor.open("notes.txt", DISK)
    await run(editor, env, {"tool_calls": [env.read_file("notes.txt")]})
    editor.type("notes.txt", UNSAVED)
    await run(editor, env, {"tool_calls": [EDIT]})
    refused = env.envelopes()[-1]
    assert not refused["ok"] and refused["error_type"] == "stale"
    assert "changed outside this session" in refused["error"]
    assert editor.edits == [] and notes(env).read_text() == DISK
