"""Every custom request, command and notification of SPEC §8 through a real server."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from pseudoclaude.session import load_session
from pseudoclaude.session.repair import is_valid

REQUESTS = ["pseudoclaude/run", "pseudoclaude/compact", "pseudoclaude/context",
            "pseudoclaude/memory/show", "pseudoclaude/memory/remember",
            "pseudoclaude/memory/forget", "pseudoclaude/sessions/list",
            "pseudoclaude/sessions/resume", "pseudoclaude/sessions/new",
            "pseudoclaude/sessions/messages"]


async def call(client: LanguageClient, method: str, params: Any = None) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async(method, params), 60)


def read(path: str) -> dict[str, Any]:
    return {"name": "read_file", "arguments": {"path": path}}


async def until(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.02)


async def test_initialize_advertises_the_custom_surface(client: LanguageClient,
                                                       env: Any) -> None:
    caps = env.initialized.capabilities
    experimental = caps.experimental["pseudoclaude"]
    assert experimental["version"] == 1
    assert experimental["requests"] == REQUESTS
    assert experimental["notifications"] == ["pseudoclaude/event",
                                              "pseudoclaude/memoryChanged",
                                              "pseudoclaude/contextUsage"]
    commands = [m.replace("/", ".") for m in REQUESTS]
    assert experimental["commands"] == commands
    assert set(commands) <= set(caps.execute_command_provider.commands)


async def test_run_streams_events_progress_and_context(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"tool_calls": [read("notes.txt")]},
                       {"text": ["The notes say ", "alpha and beta."]})
    result = await call(client, "pseudoclaude/run", {"prompt": "what do the notes say?"})
    assert result["stopReason"] == "completed" and result["iterations"] == 2
    assert result["text"] == "The notes say alpha and beta."
    assert result["usage"]["inputTokens"] > 0 and "error" not in result
    await until(lambda: any(e["kind"] == "stop" for e in env.events))
    kinds = [e["kind"] for e in env.events]
    for kind in ("text", "toolCall", "toolResult", "usage", "stop"):
        assert kind in kinds
    uri = env.folders[0].as_uri()
    assert all(e["workspace"] == uri and e["sessionId"] == result["sessionId"]
               for e in env.events)
    tool_result = next(e for e in env.events if e["kind"] == "toolResult")
    assert tool_result["name"] == "read_file" and not tool_result["isError"]
    assert len(tool_result["preview"]) <= 200 and tool_result["bytes"] > 0
    await until(lambda: len(env.context_usage) >= 2)
    usage = env.context_usage[-1]
    assert usage["sessionId"] == result["sessionId"] and usage["contextWindow"] == 200_000
    assert usage["autoCompactThreshold"] == 167_000 and usage["estimatedTokens"] > 0
    reports = list(client.progress_reports.values())
    assert reports and isinstance(reports[-1][0], types.WorkDoneProgressBegin)
    assert isinstance(reports[-1][-1], types.WorkDoneProgressEnd)
    context = await call(client, "pseudoclaude/context")
    assert context["sessionId"] == result["sessionId"] and context["messageCount"] == 4
    assert not context["autoCompactTripped"] and context["autoCompactFailures"] == 0


async def test_context_answers_fast_while_a_run_streams(client: LanguageClient,
                                                        env: Any) -> None:
    env.fake.add_turns({"text": "slow", "stall": 1.5})
    run = asyncio.ensure_future(call(client, "pseudoclaude/run", {"prompt": "go"}))
    await until(lambda: len(env.fake.requests) >= 1)
    latencies = []
    for _ in range(10):
        t = time.perf_counter()
        context = await call(client, "pseudoclaude/context")
        latencies.append(time.perf_counter() - t)
        assert context["messageCount"] == 1
    assert sorted(latencies)[len(latencies) // 2] < 0.05, latencies
    with pytest.raises(JsonRpcException) as busy:
        await call(client, "pseudoclaude/run", {"prompt": "second"})
    assert busy.value.code == -32803 and "in progress" in busy.value.message
    for method in ("pseudoclaude/compact", "pseudoclaude/sessions/new"):
        with pytest.raises(JsonRpcException) as refused:
            await call(client, method, {})
        assert refused.value.code == -32803
    assert (await run)["stopReason"] == "completed"


async def test_cancel_a_run(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"tool_calls": [read("notes.txt")]}, {"text": "late", "delay": 30})
    future = asyncio.ensure_future(client.protocol.send_request_async(
        "pseudoclaude/run", {"prompt": "go"}, msg_id="run-to-cancel"))
    await until(lambda: len(env.fake.requests) >= 2)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-to-cancel"))
    with pytest.raises(JsonRpcException) as canceled:
        await asyncio.wait_for(future, 20)
    assert canceled.value.code == -32800
    await until(lambda: any(e["kind"] == "stop" for e in env.events))
    assert [e for e in env.events if e["kind"] == "stop"][-1]["stopReason"] == "canceled"
    context = await call(client, "pseudoclaude/context")  # still serving
    messages = await call(client, "pseudoclaude/sessions/messages", {})
    assert messages["total"] == context["messageCount"] == 3


async def test_approval_deny_leaves_a_denied_result(client: LanguageClient, env: Any) -> None:
    env.approval_answer = "Deny"
    env.fake.add_turns({"tool_calls": [{"name": "run_command",
                                        "arguments": {"command": "touch", "args": ["x"]}}]},
                       {"text": "ok, not run"})
    result = await call(client, "pseudoclaude/run", {"prompt": "touch x"})
    assert result["stopReason"] == "completed"
    [asked] = env.approvals
    assert asked.type == types.MessageType.Warning and "run_command" in asked.message
    assert [a.title for a in asked.actions] == ["Allow once", "Allow for this session", "Deny"]
    assert not (env.folders[0] / "x").exists()
    messages = (await call(client, "pseudoclaude/sessions/messages", {}))["messages"]
    envelope = json.loads(messages[2]["tool_result"]["content"])
    assert envelope["error_type"] == "denied" and messages[2]["tool_result"]["is_error"]


async def test_approval_dismissed_is_a_denial_and_allow_runs(client: LanguageClient,
                                                             env: Any) -> None:
    env.approval_answer = None
    env.fake.add_turns({"tool_calls": [{"name": "run_command",
                                        "arguments": {"command": "touch", "args": ["x"]}}]},
                       {"text": "not run"})
    await call(client, "pseudoclaude/run", {"prompt": "touch x"})
    assert not (env.folders[0] / "x").exists()
    env.approval_answer = "Allow once"
    env.fake.add_turns({"tool_calls": [{"name": "run_command",
                                        "arguments": {"command": "touch", "args": ["x"]}}]},
                       {"text": "done"})
    await call(client, "pseudoclaude/run", {"prompt": "touch x now"})
    assert (env.folders[0] / "x").exists()


async def test_sessions_new_list_resume_messages(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"text": "first answer"}, {"text": "second answer"})
    first = await call(client, "pseudoclaude/run", {"prompt": "first question"})
    new = await call(client, "pseudoclaude/sessions/new")
    assert new["sessionId"] != first["sessionId"]
    second = await call(client, "pseudoclaude/run", {"prompt": "second question"})
    assert second["sessionId"] == new["sessionId"]
    listed = (await call(client, "pseudoclaude/sessions/list"))["sessions"]
    assert [s["id"] for s in listed] == [new["sessionId"], first["sessionId"]]
    assert listed[0]["active"] and not listed[1]["active"]
    assert listed[1]["title"] == "first question" and listed[1]["messageCount"] == 2
    assert listed[1]["model"] and listed[1]["bytes"] > 0
    assert {"createdAt", "updatedAt"} <= set(listed[1])
    resumed = await call(client, "pseudoclaude/sessions/resume",
                         {"sessionId": first["sessionId"]})
    assert resumed == {"sessionId": first["sessionId"], "messageCount": 2, "badLines": 0,
                       "repaired": 0}
    page = await call(client, "pseudoclaude/sessions/messages", {"offset": 1, "limit": 1})
    assert page == {"total": 2, "messages": [{"role": "assistant",
                                              "content": "first answer"}]}
    other = await call(client, "pseudoclaude/sessions/messages",
                       {"sessionId": new["sessionId"]})
    assert other["messages"][0] == {"role": "user", "content": "second question"}
    latest = await call(client, "pseudoclaude/sessions/resume", {"sessionId": "latest"})
    assert latest["sessionId"] in (first["sessionId"], new["sessionId"])
    with pytest.raises(JsonRpcException) as unknown:
        await call(client, "pseudoclaude/sessions/resume", {"sessionId": "20990101-000000-abcd"})
    assert unknown.value.code == -32803 and "no session" in unknown.value.message


async def test_compact(client: LanguageClient, env: Any) -> None:
    with pytest.raises(JsonRpcException) as no_session:
        await call(client, "pseudoclaude/compact")
    assert no_session.value.code == -32803 and "no active session" in no_session.value.message
    env.fake.add_turns(*({"text": f"answer {i} " + "x" * 20_000} for i in range(8)))
    env.fake.script.rules.insert(0, {"when": {"has_tools": False, "body_contains": "<summary>"},
                                     "reply": {"text": "<summary>the gist</summary>"},
                                     "times": None})
    for i in range(8):
        await call(client, "pseudoclaude/run", {"prompt": f"question {i}"})
    before = await call(client, "pseudoclaude/context")
    result = await call(client, "pseudoclaude/compact", {"instructions": "keep the gist"})
    assert result["summarized"] and result["afterTokens"] < result["beforeTokens"]
    after = await call(client, "pseudoclaude/context")
    assert after["messageCount"] < before["messageCount"]
    assert any(e["kind"] == "compact" and e["layer"] == 2 for e in env.events)
    summary_request = [r for r in env.fake.requests if "<summary>" in json.dumps(r["body"])]
    assert "keep the gist" in json.dumps(summary_request[-1]["body"])


async def test_memory_remember_show_forget_and_hand_edit(client: LanguageClient,
                                                         env: Any) -> None:
    remembered = await call(client, "pseudoclaude/memory/remember",
                            {"text": "The build uses make.", "level": "project",
                             "title": "Build tool"})
    assert remembered["filename"] == "project_knowledge_build-tool.md"
    path = Path(remembered["uri"].removeprefix("file://"))
    assert path.is_file() and "The build uses make." in path.read_text()
    await until(lambda: any(m["source"] == "remember" for m in env.memory_changed))
    shown = await call(client, "pseudoclaude/memory/show")
    assert "## Project Memory" in shown["index"] and "Build tool" in shown["index"]
    assert not shown["truncated"]
    project = next(s for s in shown["stores"] if s["level"] == "project")
    assert project["indexUri"].endswith("/memory/MEMORY.md")
    assert project["notes"][0]["filename"] == remembered["filename"]
    assert project["notes"][0]["uri"] == remembered["uri"]
    index = Path(project["indexUri"].removeprefix("file://"))
    index.write_text(index.read_text() + "- [user_preference] Tabs — by hand (x.md)\n")
    await until(lambda: any(m["source"] == "hand-edit" for m in env.memory_changed))
    changed = next(m for m in env.memory_changed if m["source"] == "hand-edit")
    assert changed["level"] == "project" and changed["workspace"] == env.folders[0].as_uri()
    assert "by hand" in (await call(client, "pseudoclaude/memory/show"))["index"]
    forgotten = await call(client, "pseudoclaude/memory/forget",
                           {"level": "project", "filename": remembered["filename"]})
    assert forgotten == {"removed": True} and not path.exists()
    again = await call(client, "pseudoclaude/memory/forget",
                       {"level": "project", "filename": remembered["filename"]})
    assert again == {"removed": False}


async def test_commands_return_the_same_results(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"text": "hello"})
    by_command = await asyncio.wait_for(client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="pseudoclaude.run", arguments=[{"prompt": "hi"}])),
        60)
    assert by_command["stopReason"] == "completed" and by_command["text"] == "hello"
    for method in ("pseudoclaude/context", "pseudoclaude/sessions/list",
                   "pseudoclaude/memory/show"):
        direct = await call(client, method, {})
        command = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=method.replace("/", "."), arguments=[{}]))
        assert command == direct
    no_args = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="pseudoclaude.context"))
    assert no_args == await call(client, "pseudoclaude/context")
    with pytest.raises(JsonRpcInvalidParams):
        await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="pseudoclaude.run", arguments=[{"prompt": ""}]))


INVALID: list[tuple[str, Any, str]] = [
    ("pseudoclaude/run", {}, "prompt"),
    ("pseudoclaude/run", {"prompt": 5}, "prompt"),
    ("pseudoclaude/run", {"prompt": "  "}, "prompt"),
    ("pseudoclaude/run", {"prompt": "x", "sessionId": "../etc"}, "sessionId"),
    ("pseudoclaude/run", "a string", "params"),
    ("pseudoclaude/run", {"prompt": "x", "workspace": "file:///nowhere"}, "workspace"),
    ("pseudoclaude/run", {"prompt": "x", "workspace": 7}, "workspace"),
    ("pseudoclaude/compact", {"instructions": ["x"]}, "instructions"),
    ("pseudoclaude/context", [1, 2], "params"),
    ("pseudoclaude/memory/show", {"workspace": "file:///elsewhere"}, "workspace"),
    ("pseudoclaude/memory/remember", {"level": "project"}, "text"),
    ("pseudoclaude/memory/remember", {"text": "x", "level": "team"}, "level"),
    ("pseudoclaude/memory/remember", {"text": "x", "level": "user", "type": "gossip"}, "type"),
    ("pseudoclaude/memory/remember", {"text": "key sk-ant-api03-abcdefghijklmnopqrstuvwx",
                                      "level": "user"}, "text"),
    ("pseudoclaude/memory/forget", {"level": "project"}, "filename"),
    ("pseudoclaude/memory/forget", {"level": "project", "filename": "../x.md"}, "filename"),
    ("pseudoclaude/sessions/list", 3, "params"),
    ("pseudoclaude/sessions/resume", {}, "sessionId"),
    ("pseudoclaude/sessions/resume", {"sessionId": "yesterday"}, "sessionId"),
    ("pseudoclaude/sessions/new", "x", "params"),
    ("pseudoclaude/sessions/messages", {"offset": -1}, "offset"),
    ("pseudoclaude/sessions/messages", {"limit": 0}, "limit"),
    ("pseudoclaude/sessions/messages", {"limit": "ten"}, "limit"),
]


async def test_invalid_params_everywhere(client: LanguageClient) -> None:
    for method, params, field in INVALID:
        with pytest.raises(JsonRpcInvalidParams) as error:
            await call(client, method, params)
        assert field in error.value.message, (method, params, error.value.message)
    for method in REQUESTS:  # null and [] mean {}: read-only ones still answer
        if method in ("pseudoclaude/context", "pseudoclaude/sessions/list",
                      "pseudoclaude/memory/show"):
            assert await call(client, method, None) == await call(client, method, [])
    assert (await call(client, "pseudoclaude/context"))["messageCount"] == 0  # still serving


async def test_two_folders_are_independent(two_folders: LanguageClient, env: Any) -> None:
    client = two_folders
    one, two = (p.as_uri() for p in env.folders)
    with pytest.raises(JsonRpcInvalidParams) as which:
        await call(client, "pseudoclaude/context")
    assert "workspace" in which.value.message and one in which.value.message
    env.fake.add_turns({"text": "from one"}, {"text": "from two"})
    a = await call(client, "pseudoclaude/run", {"prompt": "in one", "workspace": one})
    b = await call(client, "pseudoclaude/run", {"prompt": "in two", "workspace": two})
    assert a["sessionId"] != b["sessionId"]
    assert (env.folders[0] / ".PseudoClaude" / "sessions" / a["sessionId"]).is_dir()
    assert (env.folders[1] / ".PseudoClaude" / "sessions" / b["sessionId"]).is_dir()
    await call(client, "pseudoclaude/memory/remember",
               {"text": "only in one", "level": "project", "workspace": one})
    show_two = await call(client, "pseudoclaude/memory/show", {"workspace": two})
    assert "only in one" not in show_two["index"]
    listed = await call(client, "pseudoclaude/sessions/list", {"workspace": two})
    assert [s["id"] for s in listed["sessions"]] == [b["sessionId"]]
    client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
        event=types.WorkspaceFoldersChangeEvent(
            added=[], removed=[types.WorkspaceFolder(uri=two, name="two")])))
    assert (await call(client, "pseudoclaude/context"))["sessionId"] == a["sessionId"]


async def test_settings_from_configuration_apply_to_new_runs(client: LanguageClient,
                                                             env: Any) -> None:
    client.set_configuration({"maxIterations": 1}, section="pseudoclaude")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    await asyncio.sleep(0.5)
    env.fake.add_turns({"tool_calls": [read("notes.txt")]}, {"text": "never"})
    result = await call(client, "pseudoclaude/run", {"prompt": "go"})
    assert result["stopReason"] == "max_iterations" and result["iterations"] == 1


async def test_provider_error_ends_the_run_with_error(client: LanguageClient,
                                                      env: Any) -> None:
    env.fake.add_turns({"error": "auth"})
    result = await call(client, "pseudoclaude/run", {"prompt": "hi"})
    assert result["stopReason"] == "error" and result["error"]
    assert "sk-test-lsp" not in json.dumps(result) + json.dumps(env.events)
    assert any(e["kind"] == "error" for e in env.events)


async def test_shutdown_leaves_a_valid_session(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"tool_calls": [read("README.md")]}, {"text": "done"})
    result = await call(client, "pseudoclaude/run", {"prompt": "read the readme"})
    store_dir = env.folders[0] / ".PseudoClaude"
    from pseudoclaude.session import SessionStore

    loaded = load_session(SessionStore(store_dir), result["sessionId"])
    assert is_valid(loaded.messages) and len(loaded.messages) == 4
