"""Edits approved as diffs in the editor (SPEC §11 "Diff approvals"): a client that sets
``experimental.pseudoclaude.approvals`` gets ``pseudoclaude/approve`` with the path, ``before``
and ``after`` of a write (the command line and folder of a command); other clients keep
``window/showMessageRequest``. A denial or a failed request changes nothing on disk; a cancelled
run cancels its pending approval request."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from pytest_lsp.client import captured_exception_key

from pseudoclaude.api.protocol import (
    CONTEXT,
    REQUEST_CANCELLED,
    RUN,
    SESSIONS_RESUME,
)

EDIT = {"name": "edit_file",
        "arguments": {"path": "notes.txt", "old_text": "beta", "new_text": "BETA"}}
WRITE = {"name": "write_file", "arguments": {"path": "notes.txt", "content": "gamma\n"}}
NEW = {"name": "write_file", "arguments": {"path": "src/new.py", "content": "print('hi')\n"}}
READ = {"name": "read_file", "arguments": {"path": "notes.txt"}}
"""An existing file is read before the agent changes it (a stale write is refused)."""


def notes(env: Any) -> Path:
    path: Path = env.folders[0] / "notes.txt"
    return path


def leftovers(env: Any) -> list[str]:
    """Temporary files of an atomic write left in the workspace."""
    return [p.name for p in env.folders[0].rglob("*.tmp")]


async def results(client: LanguageClient, env: Any) -> list[dict[str, Any]]:
    """The tool result envelopes of the current session, in order (from its log), but for
    the reads before the writes."""
    return [e for e in env.envelopes() if e["tool"] != "read_file"]


async def test_deny_leaves_the_file_byte_identical(approving: LanguageClient,
                                                   env: Any) -> None:
    env.approve_answer = {"decision": "deny"}
    before, stamp = notes(env).read_bytes(), notes(env).stat().st_mtime_ns
    env.fake.add_turns({"tool_calls": [READ, WRITE]}, {"text": "not written"})
    result = await env.call(approving, RUN, {"prompt": "rewrite the notes"})
    assert result["stopReason"] == "completed"
    assert notes(env).read_bytes() == before and notes(env).stat().st_mtime_ns == stamp
    assert leftovers(env) == []
    assert len(env.approve_requests) == 1 and env.approvals == []  # no showMessageRequest
    [envelope] = await results(approving, env)
    assert envelope == {"ok": False, "tool": "write_file", "content": "",
                        "error_type": "permission_denied",
                        "error": "write_file was denied by the user",
                        "metadata": {"source": "user"}}


async def test_the_params_carry_path_before_and_after_exactly(approving: LanguageClient,
                                                              env: Any) -> None:
    env.fake.add_turns({"tool_calls": [READ, EDIT]}, {"text": "edited"})
    result = await env.call(approving, RUN, {"prompt": "shout beta"})
    [params] = env.approve_requests
    assert params == {
        "workspace": env.folders[0].as_uri(), "sessionId": result["sessionId"],
        "tool": "edit_file", "arguments": EDIT["arguments"], "kind": "write",
        "path": "notes.txt", "before": "alpha\nbeta\n", "after": "alpha\nBETA\n",
        "rule": "Edit(notes.txt)",
        "reason": "default mode asks before edits (approvals.write: ask)"}
    assert notes(env).read_text() == "alpha\nBETA\n"


async def test_allow_once_writes_and_the_next_write_asks_again(approving: LanguageClient,
                                                               env: Any) -> None:
    env.fake.add_turns({"tool_calls": [NEW]}, {"tool_calls": [READ, EDIT]}, {"text": "done"})
    result = await env.call(approving, RUN, {"prompt": "make a script, then shout beta"})
    assert result["stopReason"] == "completed"
    first, second = env.approve_requests
    assert (first["path"], first["before"], first["after"]) == (
        "src/new.py", "", "print('hi')\n")
    assert second["path"] == "notes.txt" and second["before"] == "alpha\nbeta\n"
    assert (env.folders[0] / "src" / "new.py").read_text() == "print('hi')\n"
    assert notes(env).read_text() == "alpha\nBETA\n"
    assert [e["ok"] for e in await results(approving, env)] == [True, True]


async def test_allow_for_the_session_covers_the_next_write(approving: LanguageClient,
                                                           env: Any) -> None:
    env.approve_answer = {"decision": "allowSession"}
    env.fake.add_turns({"tool_calls": [READ, EDIT]}, {"text": "done"})
    await env.call(approving, RUN, {"prompt": "shout beta"})
    env.fake.add_turns({"tool_calls": [NEW]}, {"text": "done"})
    await env.call(approving, RUN, {"prompt": "make a script"})
    assert len(env.approve_requests) == 1
    assert notes(env).read_text() == "alpha\nBETA\n"
    assert (env.folders[0] / "src" / "new.py").exists()


async def test_a_command_is_shown_with_its_folder(approving: LanguageClient, env: Any) -> None:
    env.approve_answer = {"decision": "deny"}
    env.fake.add_turns({"tool_calls": [{"name": "run_command", "arguments": {
        "command": "touch", "args": ["a file"]}}]}, {"text": "not run"})
    await env.call(approving, RUN, {"prompt": "touch it"})
    [params] = env.approve_requests
    assert params["kind"] == "runCommand" and params["tool"] == "run_command"
    assert params["command"] == "touch 'a file'"
    assert params["cwd"] == str(env.folders[0].resolve())
    assert (params["rule"], params["reason"]) == ("Bash(touch:*)",
                                                  "default mode asks before commands")
    assert not {"path", "before", "after"} & set(params)
    assert not (env.folders[0] / "a file").exists()


@pytest.mark.parametrize("answer", [{"decision": "maybe"}, None,
                                    RuntimeError("the diff view failed")])
async def test_an_invalid_answer_or_an_error_is_a_denial(approving: LanguageClient, env: Any,
                                                         answer: Any) -> None:
    env.approve_answer = answer
    before = notes(env).read_bytes()
    env.fake.add_turns({"tool_calls": [READ, EDIT]}, {"text": "not written"})
    result = await env.call(approving, RUN, {"prompt": "shout beta"})
    if isinstance(answer, Exception):  # the client's handler failed on purpose: not an error
        approving._pytest_item.stash[captured_exception_key] = None  # of the test itself
        # (cleared first: a failed assertion below must not also report it at teardown)
    assert result["stopReason"] == "completed"
    assert notes(env).read_bytes() == before and leftovers(env) == []
    [envelope] = await results(approving, env)
    assert (envelope["error_type"], envelope["metadata"]) == (
        "permission_denied", {"source": "user"})
    invalid = "edit_file was not approved: the editor's answer to pseudoclaude/approve is not "
    if answer is None:
        assert envelope["error"] == invalid + "valid (decision: is required; got null)"
    elif isinstance(answer, dict):
        assert envelope["error"] == invalid + (
            "valid (decision: invalid enum value 'maybe'; got {\"decision\": \"maybe\"})")
    else:  # a failed ask names the tool, as every other denial does
        assert envelope["error"].startswith("edit_file was not approved: "), envelope["error"]
        assert envelope["error"].endswith(
            "could not ask for approval: RuntimeError: the diff view failed"), envelope["error"]


async def test_an_edit_that_cannot_apply_is_not_asked(approving: LanguageClient,
                                                      env: Any) -> None:
    env.fake.add_turns({"tool_calls": [READ, {"name": "edit_file", "arguments": {
        "path": "notes.txt", "old_text": "delta", "new_text": "x"}}]}, {"text": "no"})
    await env.call(approving, RUN, {"prompt": "edit"})
    assert env.approve_requests == []
    [envelope] = await results(approving, env)
    assert envelope["error_type"] == "no_match"


async def test_a_client_without_the_capability_gets_show_message_request(
        not_approving: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"tool_calls": [READ, EDIT]}, {"text": "edited"})
    await env.call(not_approving, RUN, {"prompt": "shout beta"})
    [asked] = env.approvals
    assert asked.type == types.MessageType.Warning
    assert asked.message == (
        "PseudoClaude wants to use edit_file: notes.txt\n"
        'Arguments: {"path": "notes.txt", "old_text": "beta", "new_text": "BETA"}\n'
        "Always allow adds the rule Edit(notes.txt) to this folder's "
        ".PseudoClaude/permissions.local.yaml")
    assert [a.title for a in asked.actions] == ["Allow once", "Allow for this session",
                                                "Always allow", "Deny"]
    assert env.approve_requests == []
    assert notes(env).read_text() == "alpha\nBETA\n"


async def test_cancelling_the_run_cancels_the_pending_approval(approving: LanguageClient,
                                                               env: Any) -> None:
    env.approve_answer = "hold"
    before = notes(env).read_bytes()
    env.fake.add_turns({"tool_calls": [READ, EDIT]})  # the run ends before another turn
    future = asyncio.ensure_future(approving.protocol.send_request_async(
        RUN, {"prompt": "shout beta"}, msg_id="run-with-approval"))
    await env.until(lambda: env.approve_requests)
    approving.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-with-approval"))
    with pytest.raises(JsonRpcException) as canceled:
        await asyncio.wait_for(future, 20)
    assert canceled.value.code == REQUEST_CANCELLED
    await env.until(lambda: env.approve_cancelled)
    assert env.approve_cancelled == env.approve_ids  # $/cancelRequest for that very request
    assert notes(env).read_bytes() == before and leftovers(env) == []
    await env.until(lambda: any(e["kind"] == "stop" for e in env.events))
    assert [e for e in env.events if e["kind"] == "stop"][-1]["stopReason"] == "canceled"
    context = await env.call(approving, CONTEXT)
    assert context["messageCount"] == 4
    items = await env.items(approving)
    assert [i["kind"] for i in items] == ["user", "toolCall", "toolCall"]
    assert items[2]["status"] == "canceled" and items[2]["inContext"]
    [envelope] = await results(approving, env)
    assert envelope["error_type"] == "canceled"
    resumed = await env.call(approving, SESSIONS_RESUME, {"sessionId": context["sessionId"]})
    assert resumed["badLines"] == 0 and resumed["repaired"] == 0
    env.approve_answer = {"decision": "allowOnce"}  # the gate is free again
    # (the file did not change since the read of the canceled run: no new read needed)
    env.fake.add_turns({"tool_calls": [EDIT]}, {"text": "edited"})
    result = await env.call(approving, RUN, {"prompt": "shout beta now"})
    assert result["stopReason"] == "completed" and len(env.approve_requests) == 2
    assert notes(env).read_text() == "alpha\nBETA\n"
