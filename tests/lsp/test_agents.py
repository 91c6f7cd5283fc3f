"""Sub-agents through the LSP server (SPEC §13 "Sub-agents"): the ``agent`` tool's isolated
context and child log, parallel sub-agents, approvals naming them, cancel, roles' tools and
model, the nesting and unknown-type errors, ``agents/list`` after a restart."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import RUN

AGENTS_LIST = "pseudoclaude/agents/list"
EXPLORE = "You are an explore sub-agent"
GENERAL = "You are a general-purpose sub-agent"


def agent_call(prompt: str, kind: str | None = None, **extra: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {"prompt": prompt, "description": prompt[:20], **extra}
    if kind is not None:
        arguments["subagent_type"] = kind
    return {"name": "agent", "arguments": arguments}


def rule(system: str, reply: dict[str, Any], times: int = 1, **when: Any) -> dict[str, Any]:
    return {"when": {"system_contains": system, **when}, "reply": reply, "times": times}


def tools_of(request: dict[str, Any]) -> list[str]:
    return [t["name"] for t in request["body"].get("tools", [])]


def system_of(request: dict[str, Any]) -> str:
    return json.dumps(request["body"].get("system", ""))


def sub_requests(env: Any, marker: str) -> list[dict[str, Any]]:
    return [r for r in env.fake.requests if marker in system_of(r)]


def parent_requests(env: Any) -> list[dict[str, Any]]:
    return [r for r in env.fake.requests if r["body"].get("tools")
            and "sub-agent:" not in system_of(r) and "You are a" not in system_of(r)[:40]]


async def test_a_sub_agent_answers_in_its_own_context_and_log(client: LanguageClient,
                                                             env: Any) -> None:
    env.fake.script.rules[:0] = [
        rule(EXPLORE, {"tool_calls": [env.read_file("notes.txt")]}, last_is_tool_result=False),
        rule(EXPLORE, {"text": "SUBANSWER: notes.txt holds two words"},
             last_is_tool_result=True)]
    env.fake.add_turns({"tool_calls": [agent_call("find the words", "explore")]},
                       {"text": "the sub-agent found them"})
    result = await env.call(client, RUN, {"prompt": "what is in the notes?"})
    assert result["stopReason"] == "completed"
    explore = sub_requests(env, EXPLORE)
    assert len(explore) == 2
    assert sorted(tools_of(explore[0])) == ["find_files", "load_skill", "read_file",
                                            "search_code"]
    assert "find the words" in json.dumps(explore[0]["body"]["messages"])
    parents = [r for r in env.fake.requests if r["body"].get("tools") and r not in explore]
    assert "agent" in tools_of(parents[0])
    assert "- explore: " in system_of(parents[0]) and "- general-purpose: " in system_of(
        parents[0])
    last = json.dumps(parents[-1]["body"]["messages"])
    assert "SUBANSWER" in last  # the answer, not its tool results
    assert "alpha" not in last and "beta" not in last
    # the events of the sub-agent carry its id; the session's own do not
    calls = [e for e in env.events if e["kind"] == "toolCall"]
    assert [c.get("agentId") is None for c in calls] == [True, False]
    agent_id = calls[1]["agentId"]
    assert not any(e["kind"] == "stop" and e.get("agentId") for e in env.events)
    # the child log
    sid = result["sessionId"]
    log = env.folders[0] / ".PseudoClaude" / "sessions" / sid / "agents" / f"{agent_id}.jsonl"
    first = json.loads(log.read_text().splitlines()[0])
    assert first["type"] == "agent" and first["parent"] == sid
    assert first["agentId"] == agent_id and first["subagentType"] == "explore"
    assert first["description"] == "find the words" and first["callId"] == calls[0]["id"]
    listed = await env.call(client, AGENTS_LIST, {})
    [info] = listed["agents"]
    assert info["agentId"] == agent_id and info["status"] == "completed"
    assert info["usage"]["outputTokens"] > 0 and "T" in info["startedAt"]
    page = await env.call(client, "pseudoclaude/sessions/messages", {"agentId": agent_id})
    assert any("SUBANSWER" in json.dumps(item) for item in page["items"])
    second = await env.second_server()  # after a restart: from the logs
    try:
        again = await env.call(second, AGENTS_LIST, {"sessionId": sid})
        assert [a["agentId"] for a in again["agents"]] == [agent_id]
        assert again["agents"][0]["status"] == "completed"
    finally:
        await second.shutdown_session()


async def test_two_sub_agents_of_one_turn_overlap(client: LanguageClient, env: Any) -> None:
    env.fake.script.rules[:0] = [
        rule("TASK-ONE", {"text": "one done", "hold": "one"}),
        rule("TASK-TWO", {"text": "two done"})]
    # the sub-agents' requests carry their prompts as the last user text
    env.fake.script.rules[0]["when"] = {"last_user_contains": "TASK-ONE"}
    env.fake.script.rules[1]["when"] = {"last_user_contains": "TASK-TWO"}
    env.fake.add_turns({"tool_calls": [agent_call("TASK-ONE"), agent_call("TASK-TWO")]},
                       {"text": "both done"})
    run = asyncio.ensure_future(env.call(client, RUN, {"prompt": "do both"}))

    def both_asked(requests: list[dict[str, Any]]) -> bool:
        texts = [json.dumps(r["body"]["messages"]) for r in requests]
        return any("TASK-ONE" in t for t in texts) and any("TASK-TWO" in t for t in texts)

    # TASK-TWO's sub-agent asks while TASK-ONE's request is held: they run at once
    assert await asyncio.to_thread(env.fake.wait_for, both_asked, 30)
    one = [r for r in env.fake.requests if r["reply"] == "rule 0"]
    assert one and not one[0]["completed"]
    env.fake.release("one")
    result = await run
    assert result["stopReason"] == "completed"
    last = json.dumps(env.fake.requests[-1]["body"]["messages"])
    assert "one done" in last and "two done" in last


async def test_a_sub_agent_asks_through_the_parent_naming_itself(approving: LanguageClient,
                                                                 env: Any) -> None:
    """Its approval names it, and so does the Notification hooks' payload of that question."""
    told = env.tmp / "notified.jsonl"
    (env.tmp / "hooks.yaml").write_text(json.dumps({"hooks": [{
        "name": "tell", "event": "Notification",
        "action": {"type": "shell", "command": f"cat >> {told}"}}]}))
    write = {"name": "write_file", "arguments": {"path": "made.txt", "content": "x\n"}}
    env.fake.script.rules[:0] = [
        rule(GENERAL, {"tool_calls": [write]}, last_is_tool_result=False),
        rule(GENERAL, {"text": "wrote it"}, last_is_tool_result=True)]
    env.fake.add_turns({"tool_calls": [agent_call("write made.txt", name="writer")]},
                       {"text": "done"})
    result = await env.call(approving, RUN, {"prompt": "make a file"})
    assert result["stopReason"] == "completed"
    [asked] = env.approve_requests
    assert asked["tool"] == "write_file" and asked["agentId"].startswith("agent-")
    assert asked["agentName"] == "writer" and asked["sessionId"] == result["sessionId"]
    assert (env.folders[0] / "made.txt").read_text() == "x\n"
    [envelope] = [e for e in env.envelopes() if e["tool"] == "agent"]
    assert envelope["ok"] and envelope["metadata"]["files"] == ["made.txt"]
    assert "made.txt" in envelope["content"]
    await env.until(lambda: told.exists() and told.read_text().rstrip().endswith("}"),
                    what="the Notification hook")
    [payload] = [json.loads(line) for line in told.read_text().splitlines()]
    assert payload["kind"] == "approval" and payload["agent_id"] == asked["agentId"]
    assert payload["agent_type"] == "general-purpose"


async def test_cancelling_the_run_cancels_its_sub_agent(client: LanguageClient,
                                                        env: Any) -> None:
    env.fake.script.rules[:0] = [rule(GENERAL, {"text": "never", "hold": "never"})]
    env.fake.add_turns({"tool_calls": [agent_call("wait forever")]})
    run = asyncio.ensure_future(client.protocol.send_request_async(
        RUN, {"prompt": "start one"}, msg_id="run-with-agent"))
    assert await asyncio.to_thread(env.fake.wait_for,
                                   lambda rs: any(GENERAL in system_of(r) for r in rs), 30)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-with-agent"))
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(run, 30)
    assert [e for e in env.events if e["kind"] == "stop"][-1]["stopReason"] == "canceled"
    [info] = (await env.call(client, AGENTS_LIST, {}))["agents"]
    assert info["status"] == "canceled"
    env.log_messages()  # the parent's log loads
    page = await env.call(client, "pseudoclaude/sessions/messages",
                          {"agentId": info["agentId"]})
    assert page["total"] >= 1  # and the child's
    env.fake.release("never")


async def test_stopping_one_foreground_sub_agent_leaves_the_run_and_the_other(
        client: LanguageClient, env: Any) -> None:
    env.fake.script.rules[:0] = [
        {"when": {"last_user_contains": "STUCK-ONE"}, "times": None,
         "reply": {"text": "never", "hold": "stuck"}},
        {"when": {"last_user_contains": "QUICK-ONE"}, "times": None,
         "reply": {"text": "quick answer", "hold": "quick"}}]
    env.fake.add_turns({"tool_calls": [agent_call("STUCK-ONE"), agent_call("QUICK-ONE")]},
                       {"text": "went on without it"})
    run = asyncio.ensure_future(env.call(client, RUN, {"prompt": "two helpers"}))

    def both_asked(requests: list[dict[str, Any]]) -> bool:
        texts = [json.dumps(r["body"]["messages"]) for r in requests]
        return any("STUCK-ONE" in t for t in texts) and any("QUICK-ONE" in t for t in texts)

    assert await asyncio.to_thread(env.fake.wait_for, both_asked, 30)
    listed = (await env.call(client, AGENTS_LIST, {}))["agents"]
    stuck = next(a["agentId"] for a in listed if a["description"].startswith("STUCK"))
    stopped = await env.call(client, "pseudoclaude/agents/stop", {"agentId": stuck})
    assert stopped["status"] == "canceled"
    env.fake.release("quick")
    result = await run
    assert result["stopReason"] == "completed" and result["text"] == "went on without it"
    by_id = {a["agentId"]: a for a in (await env.call(client, AGENTS_LIST, {}))["agents"]}
    assert by_id[stuck]["status"] == "canceled"
    assert [a["status"] for i, a in by_id.items() if i != stuck] == ["completed"]
    envelopes = [e for e in env.envelopes() if e["tool"] == "agent"]
    assert envelopes[0]["error_type"] == "agent_stopped"
    assert "stopped by the user" in envelopes[0]["error"]
    assert envelopes[1]["ok"] and "quick answer" in envelopes[1]["content"]
    last = json.dumps(env.fake.requests[-1]["body"]["messages"])
    assert "stopped by the user" in last and "quick answer" in last
    # it is not running any more: a second stop says so
    with pytest.raises(JsonRpcException, match="not running"):
        await env.call(client, "pseudoclaude/agents/stop", {"agentId": stuck})
    env.fake.release("stuck")


async def test_a_roles_tools_and_model_nesting_and_unknown_types(client: LanguageClient,
                                                                 env: Any) -> None:
    roles = env.folders[0] / ".PseudoClaude" / "agents"
    roles.mkdir(parents=True)
    (roles / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep, Teleport\n"
        "model: fake-reviewer-model\n---\nYou are the REVIEWER role.\n")
    env.fake.script.rules[:0] = [
        rule("REVIEWER", {"tool_calls": [agent_call("nested")]}, last_is_tool_result=False),
        rule("REVIEWER", {"text": "reviewed"}, last_is_tool_result=True)]
    env.fake.add_turns({"tool_calls": [agent_call("review it", "reviewer"),
                                       agent_call("x", "no-such-type")]},
                       {"text": "done"})
    result = await env.call(client, RUN, {"prompt": "review"})
    assert result["stopReason"] == "completed"
    [first, _] = sub_requests(env, "REVIEWER")
    assert sorted(tools_of(first)) == ["read_file", "search_code"]
    assert first["body"]["model"] == "fake-reviewer-model"
    assert "- reviewer: Reviews code" in system_of(env.fake.requests[0])
    warnings = [e["message"] for e in env.events if e["kind"] == "warning"]
    assert any("Teleport" in w for w in warnings)
    agent_id = next(e["agentId"] for e in env.events if e.get("agentId"))
    page = await env.call(client, "pseudoclaude/sessions/messages", {"agentId": agent_id})
    assert any(i["kind"] == "toolCall" and i["name"] == "agent" for i in page["items"])
    log = (env.folders[0] / ".PseudoClaude" / "sessions" / result["sessionId"] / "agents"
           / f"{agent_id}.jsonl").read_text()
    assert '\\"error_type\\":\\"nested_agent_forbidden\\"' in log
    envelopes = [e for e in env.envelopes() if e["tool"] == "agent"]
    assert envelopes[0]["ok"]
    assert envelopes[1]["error_type"] == "unknown_subagent_type"
    assert "explore" in envelopes[1]["error"] and "reviewer" in envelopes[1]["error"]


async def test_the_sessions_tool_hooks_hold_for_a_sub_agent(approving: LanguageClient,
                                                            env: Any) -> None:
    """A PreToolUse hook blocking ``write_file`` (exit 2) blocks a sub-agent's write too: a
    sub-agent is no way around the user's hooks. Its PreToolUse and PostToolUse payloads carry
    the session's id and its ``agent_id``; it fires no Stop (SubagentStop does)."""
    out = env.tmp / "payloads"
    out.mkdir()
    hooks = [{"name": "no-writes", "event": "PreToolUse",
              "if": {"all_of": [{"field": "tool_name",
                                 "match": {"type": "exact", "value": "write_file"}}]},
              "action": {"type": "shell",
                         "command": f"cat >> {out}/blocked.jsonl; echo no writes >&2; exit 2"}}]
    hooks += [{"name": f"record-{event}", "event": event,
               "action": {"type": "shell", "command": f"cat >> {out}/{event}.jsonl"}}
              for event in ("PostToolUse", "Stop", "SubagentStop")]
    (env.tmp / "hooks.yaml").write_text(json.dumps({"hooks": hooks}))  # YAML reads JSON
    write = {"name": "write_file", "arguments": {"path": "made.txt", "content": "x\n"}}
    env.fake.script.rules[:0] = [
        rule(GENERAL, {"tool_calls": [write]}, last_is_tool_result=False),
        rule(GENERAL, {"text": "could not write"}, last_is_tool_result=True)]
    env.fake.add_turns({"tool_calls": [agent_call("write made.txt")]}, {"text": "done"})
    result = await env.call(approving, RUN, {"prompt": "make a file"})
    assert result["stopReason"] == "completed"
    sid = result["sessionId"]
    assert not (env.folders[0] / "made.txt").exists()
    assert env.approve_requests == []  # refused before the gate: nobody asked
    sub = [r for r in sub_requests(env, GENERAL)]
    assert "hook_blocked" in json.dumps(sub[-1]["body"]["messages"])
    assert "no writes" in json.dumps(sub[-1]["body"]["messages"])

    def read(name: str) -> list[dict[str, Any]]:
        path = out / f"{name}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] \
            if path.exists() else []

    await env.until(lambda: read("SubagentStop") and read("Stop"), what="the stop hooks")
    [blocked] = read("blocked")
    agent_id = blocked["agent_id"]
    assert agent_id.startswith("agent-") and blocked["session_id"] == sid
    assert blocked["agent_type"] == "general-purpose"
    assert blocked["tool_name"] == "write_file"
    assert blocked["agent_transcript_path"].endswith(f"agents/{agent_id}.jsonl")
    assert blocked["transcript_path"].endswith(f"{sid}/conversation.jsonl")
    posts = read("PostToolUse")
    # the sub-agent's blocked write, then the parent's agent call
    assert [(p["tool_name"], p.get("agent_id")) for p in posts] == [
        ("write_file", agent_id), ("agent", None)]
    assert posts[0]["is_error"] and posts[0]["session_id"] == sid
    [stop] = read("Stop")  # the session's run only
    assert "agent_id" not in stop
    [ended] = read("SubagentStop")
    assert ended["agent_id"] == agent_id


async def test_a_sub_agents_usage_counts_its_cached_input_as_it_runs(client: LanguageClient,
                                                                     env: Any) -> None:
    first = {"input": 100, "output": 7, "cache_read": 900, "cache_write": 50}
    second = {"input": 10, "output": 3, "cache_read": 1000}
    env.fake.script.rules[:0] = [
        rule(GENERAL, {"tool_calls": [env.read_file("notes.txt")], "usage": first},
             last_is_tool_result=False),
        rule(GENERAL, {"text": "counted", "hold": "second", "usage": second},
             last_is_tool_result=True)]
    env.fake.add_turns({"tool_calls": [agent_call("count the tokens")],
                        "usage": {"input": 500, "output": 20}},
                       {"text": "done", "usage": {"input": 50, "output": 5}})
    run = asyncio.ensure_future(env.call(client, RUN, {"prompt": "count"}))
    # its second request is held: the first one's tokens are listed while it runs
    assert await asyncio.to_thread(
        env.fake.wait_for, lambda rs: len(sub_requests(env, GENERAL)) == 2, 30)
    [running] = (await env.call(client, AGENTS_LIST, {}))["agents"]
    assert running["status"] == "running"
    assert running["usage"] == {"inputTokens": 1050, "outputTokens": 7}
    env.fake.release("second")
    result = await run
    assert result["stopReason"] == "completed"
    [ended] = (await env.call(client, AGENTS_LIST, {}))["agents"]
    assert ended["status"] == "completed"
    assert ended["usage"] == {"inputTokens": 2060, "outputTokens": 10}
    [envelope] = [e for e in env.envelopes() if e["tool"] == "agent"]
    assert envelope["metadata"]["usage"] == ended["usage"]
    # the run's usage adds the sub-agent's (uncached input, as for the session's own requests)
    assert result["usage"] == {"inputTokens": 500 + 50 + 110, "outputTokens": 20 + 5 + 10}


async def test_a_roles_background_and_strict_permission_mode(approving: LanguageClient,
                                                             env: Any) -> None:
    """A role with ``background: true`` runs in the background when the call does not say;
    ``permissionMode: strict`` asks for a read the session's mode runs unasked, naming it."""
    roles = env.folders[0] / ".PseudoClaude" / "agents"
    roles.mkdir(parents=True)
    (roles / "careful.md").write_text(
        "---\nname: careful\ndescription: Asks first\npermissionMode: strict\n---\n"
        "You are the CAREFUL role.\n")
    (roles / "slow.md").write_text(
        "---\nname: slow\ndescription: Runs aside\nbackground: true\n---\n"
        "You are the SLOW role.\n")
    env.fake.script.rules[:0] = [
        rule("CAREFUL", {"tool_calls": [env.read_file("notes.txt")]}, last_is_tool_result=False),
        rule("CAREFUL", {"text": "read it"}, last_is_tool_result=True),
        rule("SLOW", {"text": "slow done"})]
    env.fake.add_turns({"tool_calls": [agent_call("read carefully", "careful"),
                                       agent_call("take your time", "slow")]},
                       {"text": "done"})
    result = await env.call(approving, RUN, {"prompt": "go"})
    assert result["stopReason"] == "completed"
    [asked] = env.approve_requests  # the read, asked for the strict role only
    assert asked["tool"] == "read_file" and asked["agentId"].startswith("agent-")
    careful, slow = [e for e in env.envelopes() if e["tool"] == "agent"]
    assert careful["ok"] and "read it" in careful["content"]
    assert json.loads(slow["content"])["status"] == "running"  # it answered at once


async def test_a_sub_agent_of_a_roles_model_keeps_its_provider_while_the_session_goes_on(
        client: LanguageClient, env: Any) -> None:
    """A background sub-agent of a role with a model of its own, mid-task while its session
    makes its next requests (each looks its provider up): its connection to the model stays
    open, and its next request is answered."""
    roles = env.folders[0] / ".PseudoClaude" / "agents"
    roles.mkdir(parents=True)
    (roles / "reader.md").write_text(
        "---\nname: reader\ndescription: Reads\nmodel: fake-reader-model\n"
        "background: true\n---\nYou are the READER role.\n")
    env.fake.script.rules[:0] = [
        rule("READER", {"tool_calls": [env.read_file("notes.txt")], "hold": "reader"},
             last_is_tool_result=False),
        rule("READER", {"text": "READER-DONE"}, last_is_tool_result=True)]
    env.fake.add_turns({"tool_calls": [agent_call("read it", "reader")]},
                       {"text": "started"}, {"text": "still here"})
    assert (await env.call(client, RUN, {"prompt": "start"}))["stopReason"] == "completed"
    assert await asyncio.to_thread(
        env.fake.wait_for, lambda rs: len(sub_requests(env, "READER")) == 1, 30)
    assert (await env.call(client, RUN, {"prompt": "again"}))["stopReason"] == "completed"
    env.fake.release("reader")
    await env.until(lambda: any(e["kind"] == "task" and e["status"] != "running"
                                for e in env.events), what="the task's end")
    [ended] = [e for e in env.events if e["kind"] == "task" and e["status"] != "running"]
    assert ended["status"] == "completed", ended
    assert "READER-DONE" in ended["result"]
