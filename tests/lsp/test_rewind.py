"""``pseudoclaude/sessions/turns``, ``pseudoclaude/rewind/preview``, ``pseudoclaude/rewind``
and ``pseudoclaude/sessions/fork`` through a real server: a file a command created and one it
deleted come back, the conversation goes back, a fork keeps its source, bad params are
``InvalidParams`` naming the field, and a rewind during a run fails fast."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import (
    CONTEXT,
    INVALID_PARAMS,
    REWIND,
    REWIND_FILE,
    REWIND_PREVIEW,
    RUN,
    SESSION_BUSY,
    SESSIONS_FORK,
    SESSIONS_LIST,
    SESSIONS_TURNS,
)
from pseudoclaude.checkpoints import git_available

pytestmark = pytest.mark.skipif(not git_available(), reason="needs the git command")


def command(*args: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "run_command",
                            "arguments": {"command": "sh", "args": ["-c", *args]}}]}


async def test_rewind_takes_back_a_command_and_the_conversation(client: LanguageClient,
                                                                env: Any) -> None:
    root = env.folders[0]
    env.fake.add_turns({"text": "hello"},
                       command("rm notes.txt && echo made > made.txt"), {"text": "ran it"})
    first = await env.call(client, RUN, {"prompt": "say hello"})
    await env.call(client, RUN, {"prompt": "run the command"})
    assert not (root / "notes.txt").exists() and (root / "made.txt").exists()
    turns = (await env.call(client, SESSIONS_TURNS))["turns"]
    assert [(t["turn"], t["prompt"], t["filesChanged"]) for t in turns] == [
        (1, "say hello", 0), (2, "run the command", 2)]
    preview = await env.call(client, REWIND_PREVIEW, {"turn": 2, "mode": "both"})
    assert preview["turn"] == 2 and preview["prompt"] == "run the command"
    assert sorted((f["path"], f["action"], f["conflict"]) for f in preview["files"]) == [
        ("made.txt", "delete", False), ("notes.txt", "create", False)]
    assert preview["droppedMessages"] == 4 and "Rewind would take" in preview["message"]
    assert (root / "made.txt").exists()  # a preview changes nothing
    made = await env.call(client, REWIND_FILE, {"turn": 2, "path": "made.txt"})
    assert made == {"path": "made.txt", "current": "made\n", "restored": None,
                    "binary": False}
    notes = await env.call(client, REWIND_FILE, {"turn": 2, "path": "notes.txt"})
    assert notes["current"] is None and notes["restored"] == "alpha\nbeta\n"
    with pytest.raises(JsonRpcException) as other:
        await env.call(client, REWIND_FILE, {"turn": 2, "path": "README.md"})
    assert other.value.code == INVALID_PARAMS and "path" in other.value.message
    done = await env.call(client, REWIND, {"turn": 2, "mode": "both"})
    assert sorted(done["restoredFiles"]) == ["made.txt", "notes.txt"]
    assert done["conflicts"] == [] and done["messageCount"] == 2
    assert done["message"].startswith("Rewound to before prompt 2")
    assert (root / "notes.txt").read_text() == "alpha\nbeta\n" and not (root / "made.txt").exists()
    assert [t["turn"] for t in (await env.call(client, SESSIONS_TURNS))["turns"]] == [1]
    context = await env.call(client, CONTEXT)
    assert context["checkpoints"] == {"covers": "all", "skipped": []}  # no problem to report
    forked = await env.call(client, SESSIONS_FORK, {"sessionId": first["sessionId"]})
    assert forked["sessionId"] != first["sessionId"]
    listed = [s["id"] for s in (await env.call(client, SESSIONS_LIST))["sessions"]]
    assert forked["sessionId"] in listed and first["sessionId"] in listed


@pytest.mark.parametrize(("params", "field"), [
    ({"turn": 0, "mode": "code"}, "turn"),
    ({"turn": 1, "mode": "everything"}, "mode"),
    ({"mode": "code"}, "turn"),
    ({"turn": 9, "mode": "code"}, "turn"),
])
async def test_bad_params_name_the_field(client: LanguageClient, env: Any,
                                         params: dict[str, Any], field: str) -> None:
    env.fake.add_turns({"text": "hello"})
    await env.call(client, RUN, {"prompt": "say hello"})
    for method in (REWIND_PREVIEW, REWIND):
        with pytest.raises(JsonRpcException) as bad:
            await env.call(client, method, params)
        assert bad.value.code == INVALID_PARAMS, bad.value.message
        assert field in bad.value.message


async def test_a_rewind_during_a_run_fails_fast(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"text": "hello"}, {"text": "slow", "stall": 30})
    await env.call(client, RUN, {"prompt": "say hello"})
    running = asyncio.ensure_future(env.call(client, RUN, {"prompt": "take your time"}))
    assert await asyncio.to_thread(  # the run's request (not the memory update) is out
        env.fake.wait_for, lambda r: any("take your time" in json.dumps(x["body"]["messages"])
                                         and x["body"].get("tools") for x in r), 20)
    with pytest.raises(JsonRpcException) as busy:
        await env.call(client, REWIND, {"turn": 1, "mode": "conversation"})
    assert busy.value.code == SESSION_BUSY and "is busy: process" in busy.value.message
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError, JsonRpcException):
        await running


async def test_conflicts_are_left_alone_unless_forced(client: LanguageClient, env: Any) -> None:
    """A file changed by hand since the agent's last checkpoint is a conflict: marked in the
    preview, left alone by a rewind, put back with ``force``; the others are restored."""
    root = env.folders[0]
    env.fake.add_turns(command("echo agent > notes.txt && echo made > made.txt"),
                       {"text": "done"})
    await env.call(client, RUN, {"prompt": "change two files"})
    (root / "notes.txt").write_text("mine now\n")
    preview = await env.call(client, REWIND_PREVIEW, {"turn": 1, "mode": "code"})
    assert {f["path"]: f["conflict"] for f in preview["files"]} == {
        "notes.txt": True, "made.txt": False}
    kept = await env.call(client, REWIND, {"turn": 1, "mode": "code"})
    assert kept["conflicts"] == ["notes.txt"] and kept["restoredFiles"] == ["made.txt"]
    assert (root / "notes.txt").read_text() == "mine now\n" and not (root / "made.txt").exists()
    forced = await env.call(client, REWIND, {"turn": 1, "mode": "code", "force": True})
    assert forced["restoredFiles"] == ["notes.txt"] and forced["conflicts"] == []
    assert (root / "notes.txt").read_text() == "alpha\nbeta\n"


async def test_a_file_that_cannot_be_read_is_named_and_the_rest_rewinds(
        client: LanguageClient, env: Any) -> None:
    """A command replaces a snapshotted file with something no one can read as a file (a
    pipe: unreadable as root too): every snapshot still works, ``context`` and the preview
    name the file, and the other files are rewound."""
    root = env.folders[0]
    env.fake.add_turns(command("echo made > made.txt && rm notes.txt && mkfifo notes.txt"),
                       {"text": "done"})
    await env.call(client, RUN, {"prompt": "make a pipe"})
    context = await env.call(client, CONTEXT)
    assert context["checkpoints"]["covers"] == "all"
    assert "cannot be read: notes.txt" in context["checkpoints"]["problem"]
    assert "failed" not in context["checkpoints"]["problem"]  # no snapshot failed
    preview = await env.call(client, REWIND_PREVIEW, {"turn": 1, "mode": "code"})
    assert [(f["path"], f["action"]) for f in preview["files"]] == [("made.txt", "delete")]
    assert "cannot be read: notes.txt" in preview["message"]
    assert "cannot be restored" not in preview["message"]
    done = await env.call(client, REWIND, {"turn": 1, "mode": "code"})
    assert done["restoredFiles"] == ["made.txt"] and not (root / "made.txt").exists()


async def test_the_preview_says_edits_in_the_editor_cannot_be_rewound(editing: Any,
                                                                      env: Any) -> None:
    """An edit of unsaved work went to the editor, not to disk: no rewind can take it back,
    and the preview says so."""
    editor = env.editor
    editor.open("notes.txt", "alpha\nbeta\n")
    editor.type("notes.txt", "alpha\nbeta\nunsaved line\n")
    edit = {"name": "edit_file",
            "arguments": {"path": "notes.txt", "old_text": "beta", "new_text": "BETA"}}
    env.fake.add_turns({"tool_calls": [env.read_file("notes.txt"), edit]}, {"text": "done"})
    await env.call(editing, RUN, {"prompt": "edit it"})
    assert editor.text("notes.txt") == "alpha\nBETA\nunsaved line\n"
    preview = await env.call(editing, REWIND_PREVIEW, {"turn": 1, "mode": "both"})
    assert preview["files"] == []
    assert "edits to notes.txt went into your editor without being saved" in preview["message"]
