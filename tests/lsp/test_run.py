"""``pseudoclaude/run`` through a real server (SPEC §8): streamed events, progress, the
context meter, cancellation, editor approvals and provider errors."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import CONTEXT, REQUEST_CANCELLED, RUN


async def test_run_streams_events_progress_and_context(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"tool_calls": [env.read_file("notes.txt")]},
                       {"text": ["The notes say ", "alpha and beta."]})
    result = await env.call(client, RUN, {"prompt": "what do the notes say?"})
    assert result["stopReason"] == "completed" and result["iterations"] == 2
    assert result["text"] == "The notes say alpha and beta."
    assert result["usage"]["inputTokens"] > 0 and "error" not in result
    await env.until(lambda: any(e["kind"] == "stop" for e in env.events))
    kinds = [e["kind"] for e in env.events]
    for kind in ("text", "toolCall", "toolResult", "usage", "stop"):
        assert kind in kinds
    uri = env.folders[0].as_uri()
    assert all(e["workspace"] == uri and e["sessionId"] == result["sessionId"]
               for e in env.events)
    tool_result = next(e for e in env.events if e["kind"] == "toolResult")
    assert tool_result["name"] == "read_file" and not tool_result["isError"]
    assert len(tool_result["preview"]) <= 200 and tool_result["bytes"] > 0
    await env.until(lambda: len(env.context_usage) >= 2)
    usage = env.context_usage[-1]
    assert usage["sessionId"] == result["sessionId"] and usage["contextWindow"] == 200_000
    assert usage["autoCompactThreshold"] == 167_000 and usage["estimatedTokens"] > 0
    reports = list(client.progress_reports.values())
    assert reports and isinstance(reports[-1][0], types.WorkDoneProgressBegin)
    assert isinstance(reports[-1][-1], types.WorkDoneProgressEnd)
    context = await env.call(client, CONTEXT)
    assert context["sessionId"] == result["sessionId"] and context["messageCount"] == 4
    assert not context["autoCompactTripped"] and context["autoCompactFailures"] == 0


async def test_cancel_a_run(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"tool_calls": [env.read_file("notes.txt")]},
                       {"text": "late", "delay": 30})
    future = asyncio.ensure_future(client.protocol.send_request_async(
        RUN, {"prompt": "go"}, msg_id="run-to-cancel"))
    await env.until(lambda: len(env.fake.requests) >= 2)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-to-cancel"))
    with pytest.raises(JsonRpcException) as canceled:
        await asyncio.wait_for(future, 20)
    assert canceled.value.code == REQUEST_CANCELLED
    await env.until(lambda: any(e["kind"] == "stop" for e in env.events))
    assert [e for e in env.events if e["kind"] == "stop"][-1]["stopReason"] == "canceled"
    context = await env.call(client, CONTEXT)  # still serving
    assert context["messageCount"] == 3
    items = await env.items(client)
    assert [i["kind"] for i in items] == ["user", "toolCall"]
    assert items[1]["status"] == "done"  # the read finished; the model's next turn was cut


async def test_approval_deny_leaves_a_denied_result(client: LanguageClient, env: Any) -> None:
    env.approval_answer = "Deny"
    env.fake.add_turns({"tool_calls": [{"name": "run_command",
                                        "arguments": {"command": "touch", "args": ["x"]}}]},
                       {"text": "ok, not run"})
    result = await env.call(client, RUN, {"prompt": "touch x"})
    assert result["stopReason"] == "completed"
    [asked] = env.approvals
    assert asked.type == types.MessageType.Warning and "run_command" in asked.message
    assert asked.message.endswith("\nAlways allow adds the rule Bash(touch:*) to this folder's "
                                  ".PseudoClaude/permissions.local.yaml")
    assert [a.title for a in asked.actions] == ["Allow once", "Allow for this session",
                                                "Always allow", "Deny"]
    assert not (env.folders[0] / "x").exists()
    messages = env.log_messages()
    envelope = json.loads(messages[2]["tool_result"]["content"])
    assert (envelope["error_type"], envelope["error"], envelope["metadata"]) == (
        "permission_denied", "run_command was denied by the user", {"source": "user"})
    assert messages[2]["tool_result"]["is_error"]
    call = (await env.items(client))[1]
    assert call["kind"] == "toolCall" and call["status"] == "denied"
    assert call["error"] == envelope["error"] and call["preview"] == envelope["error"]


async def test_approval_dismissed_is_a_denial_and_allow_runs(client: LanguageClient,
                                                             env: Any) -> None:
    env.approval_answer = None
    env.fake.add_turns({"tool_calls": [{"name": "run_command",
                                        "arguments": {"command": "touch", "args": ["x"]}}]},
                       {"text": "not run"})
    await env.call(client, RUN, {"prompt": "touch x"})
    assert not (env.folders[0] / "x").exists()
    [envelope] = env.envelopes()
    assert (envelope["error_type"], envelope["error"], envelope["metadata"]) == (
        "permission_denied", "run_command was not approved: the approval request was dismissed",
        {"source": "user"})
    env.approval_answer = "Allow once"
    env.fake.add_turns({"tool_calls": [{"name": "run_command",
                                        "arguments": {"command": "touch", "args": ["x"]}}]},
                       {"text": "done"})
    await env.call(client, RUN, {"prompt": "touch x now"})
    assert (env.folders[0] / "x").exists()


async def test_provider_error_ends_the_run_with_error(client: LanguageClient,
                                                      env: Any) -> None:
    env.fake.add_turns({"error": "auth"})
    result = await env.call(client, RUN, {"prompt": "hi"})
    assert result["stopReason"] == "error" and result["error"]
    assert "sk-test-lsp" not in json.dumps(result) + json.dumps(env.events)
    assert any(e["kind"] == "error" for e in env.events)
