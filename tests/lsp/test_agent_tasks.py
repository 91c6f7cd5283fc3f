"""Background sub-agents and SubagentStop hooks through the LSP server (SPEC §13 "Sub-agents and
background tasks"): ``run_in_background`` answers at once and outlives its run, its
``<task-notification>`` joins the next request and the log; ``task_list``, ``task_get`` and
``task_stop``; cancelling the run leaves it running; a server shut down stops it, its log says
so; a real shell hook gets the SubagentStop payload; a sub-agent with ``isolation: "worktree"``
writes in a worktree of its own (kept with changes for ``worktree/apply``, else removed)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import RUN, WORKTREE_APPLY, WORKTREE_REMOVE, WORKTREE_STATUS

AGENTS_LIST = "pseudoclaude/agents/list"
AGENTS_STOP = "pseudoclaude/agents/stop"
EXPLORE = "You are an explore sub-agent"
GENERAL = "You are a general-purpose sub-agent"


def background(prompt: str, **extra: Any) -> dict[str, Any]:
    return {"name": "agent", "arguments": {"prompt": prompt, "description": prompt[:20],
                                           "run_in_background": True, **extra}}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def rule(system: str, reply: dict[str, Any], **when: Any) -> dict[str, Any]:
    return {"when": {"system_contains": system, **when}, "reply": reply, "times": None}


def system_of(request: dict[str, Any]) -> str:
    return json.dumps(request["body"].get("system", ""))


def parent_requests(env: Any) -> list[dict[str, Any]]:
    """The session's own model requests (sub-agents' and memory updates' left out)."""
    return [r for r in env.fake.requests if r["body"].get("tools")
            and "sub-agent:" not in system_of(r) and "sub-agent" not in system_of(r)[:80]
            and not any(m in system_of(r) for m in (EXPLORE, GENERAL))]


def task_events(env: Any, status: str | None = None) -> list[dict[str, Any]]:
    return [e for e in env.events if e["kind"] == "task"
            and (status is None or e["status"] == status)]


def child_log(env: Any, session_id: str, agent_id: str) -> list[dict[str, Any]]:
    path = (env.folders[0] / ".PseudoClaude" / "sessions" / session_id / "agents"
            / f"{agent_id}.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def started_task(env: Any) -> str:
    [envelope] = [e for e in env.envelopes() if e["tool"] == "agent"]
    assert envelope["ok"], envelope
    content = json.loads(envelope["content"])
    assert content["status"] == "running" and set(content) == {"taskId", "status"}
    return str(content["taskId"])


async def test_a_background_task_outlives_its_run_and_notifies_the_next_request(
        client: LanguageClient, env: Any) -> None:
    env.fake.script.rules[:0] = [rule(GENERAL, {"text": "BGRESULT: the answer is 42",
                                                "hold": "bg"})]
    env.fake.add_turns({"tool_calls": [background("BG-TASK find the answer", name="finder")]},
                       {"text": "started it"})
    first = await env.call(client, RUN, {"prompt": "start a background task"})
    assert first["stopReason"] == "completed"  # while its sub-agent's request is held
    task_id = started_task(env)
    [running] = task_events(env, "running")
    assert running["taskId"] == running["agentId"] == task_id
    assert running["name"] == "finder" and running["subagentType"] == "general-purpose"
    listed = await env.call(client, AGENTS_LIST, {})
    assert [(a["agentId"], a["status"]) for a in listed["agents"]] == [(task_id, "running")]
    env.fake.release("bg")
    await env.until(lambda: task_events(env, "completed"), what="the task's end")
    [done] = task_events(env, "completed")
    assert "BGRESULT" in done["result"]
    env.fake.add_turns({"text": "noted"})
    second = await env.call(client, RUN, {"prompt": "what did it find?"})
    assert second["stopReason"] == "completed"
    last = parent_requests(env)[-1]["body"]["messages"][-1]
    assert last["role"] == "user"
    text = json.dumps(last["content"])
    assert "what did it find?" in text  # the prompt and the notification: one user message
    assert (f"<task-notification><task-id>{task_id}</task-id><name>finder</name>"
            "<type>general-purpose</type><status>completed</status><result>") in text
    assert "BGRESULT: the answer is 42" in text
    logged = [m for m in env.log_messages() if m["role"] == "user"
              and str(m.get("content", "")).startswith("<task-notification>")]
    assert len(logged) == 1 and task_id in logged[0]["content"]
    turns = await env.call(client, "pseudoclaude/sessions/turns", {})
    assert [t["prompt"] for t in turns["turns"]] == ["start a background task",
                                                      "what did it find?"]
    [info] = (await env.call(client, AGENTS_LIST, {}))["agents"]
    assert info["status"] == "completed"


async def test_task_tools_see_and_stop_a_task_the_cancelled_run_left_running(
        client: LanguageClient, env: Any) -> None:
    env.fake.script.rules[:0] = [rule(GENERAL, {"text": "never", "hold": "forever"})]
    env.fake.add_turns({"tool_calls": [background("LONG-TASK work a long time")]},
                       {"text": "parent held", "hold": "parent"})
    run = asyncio.ensure_future(client.protocol.send_request_async(
        RUN, {"prompt": "start and wait"}, msg_id="run-to-cancel"))

    def both_asked(requests: list[dict[str, Any]]) -> bool:
        return any(GENERAL in system_of(r) for r in requests) and \
            sum(1 for r in requests if r["reply"] == "turn 1") == 1

    assert await asyncio.to_thread(env.fake.wait_for, both_asked, 30)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-to-cancel"))
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(run, 30)
    task_id = started_task(env)
    [info] = (await env.call(client, AGENTS_LIST, {}))["agents"]
    assert (info["agentId"], info["status"]) == (task_id, "running")  # not cancelled
    env.fake.add_turns(
        {"tool_calls": [call("task_list"), call("task_get", taskId=task_id)]},
        {"tool_calls": [call("task_stop", taskId=task_id)]},
        {"tool_calls": [call("task_get", taskId=task_id), call("task_stop", taskId=task_id),
                        call("task_get", taskId="agent-0000000000000000")]},
        {"text": "stopped it"})
    result = await env.call(client, RUN, {"prompt": "look at it, then stop it"})
    assert result["stopReason"] == "completed"
    envelopes = {(e["tool"], i): e for i, e in enumerate(env.envelopes())
                 if e["tool"].startswith("task_")}
    listing, got, stopped, after, again, unknown = envelopes.values()
    assert task_id in listing["content"] and "[running]" in listing["content"]
    assert listing["metadata"]["tasks"][0]["taskId"] == task_id
    assert got["ok"] and "still running" in got["content"]
    assert stopped["ok"] and stopped["metadata"]["status"] == "canceled"
    assert after["metadata"]["status"] == "canceled" and "stopped by task_stop" in \
        after["content"]
    assert not again["ok"] and again["error_type"] == "not_running"
    assert not unknown["ok"] and unknown["error_type"] == "not_found"
    log = child_log(env, result["sessionId"], task_id)
    assert log[-1]["type"] == "agentStop" and log[-1]["status"] == "canceled"
    assert log[-1]["error"] == "stopped by task_stop"
    [ended] = task_events(env, "canceled")
    assert ended["taskId"] == task_id
    # a stopped task sends no notification
    assert not any("<task-notification>" in json.dumps(r["body"]["messages"])
                   for r in parent_requests(env))
    [info] = (await env.call(client, AGENTS_LIST, {}))["agents"]
    assert info["status"] == "canceled"
    env.fake.release("parent")
    env.fake.release("forever")


async def test_agents_stop_stops_a_background_task_and_agents_list_names_its_call(
        client: LanguageClient, env: Any) -> None:
    env.fake.script.rules[:0] = [rule(GENERAL, {"text": "never", "hold": "forever"})]
    env.fake.add_turns({"tool_calls": [background("STOPPABLE work a long time")]},
                       {"text": "started"})
    result = await env.call(client, RUN, {"prompt": "start one"})
    assert await asyncio.to_thread(
        env.fake.wait_for, lambda rs: any(GENERAL in system_of(r) for r in rs), 30)
    task_id = started_task(env)
    [parent_call] = [e for e in env.events if e["kind"] == "toolCall" and e["name"] == "agent"]
    assert "agentId" not in parent_call
    [info] = (await env.call(client, AGENTS_LIST, {}))["agents"]
    assert (info["agentId"], info["status"]) == (task_id, "running")
    assert info["callId"] == parent_call["id"]  # the card of the parent's call finds it
    stopped = await env.call(client, AGENTS_STOP, {"agentId": task_id})
    assert stopped == {"sessionId": result["sessionId"], "agentId": task_id,
                       "status": "canceled"}
    log = child_log(env, result["sessionId"], task_id)
    assert log[-1]["type"] == "agentStop" and log[-1]["status"] == "canceled"
    assert log[-1]["error"] == "stopped by the user"
    [ended] = task_events(env, "canceled")
    assert ended["taskId"] == task_id and ended["result"] == "stopped by the user"
    [info] = (await env.call(client, AGENTS_LIST, {}))["agents"]
    assert info["status"] == "canceled"
    with pytest.raises(JsonRpcException, match="not running"):
        await env.call(client, AGENTS_STOP, {"agentId": task_id})
    with pytest.raises(JsonRpcException, match="no sub-agent"):
        await env.call(client, AGENTS_STOP, {"agentId": "agent-0000000000000000"})
    env.fake.release("forever")


async def test_the_server_shut_down_stops_a_background_task(client: LanguageClient,
                                                            env: Any) -> None:
    env.fake.script.rules[:0] = [rule(GENERAL, {"text": "never", "hold": "forever"})]
    env.fake.add_turns({"tool_calls": [background("FOREVER-TASK")]}, {"text": "started"})
    second = await env.second_server()
    try:
        result = await env.call(second, RUN, {"prompt": "start one"})
        assert result["stopReason"] == "completed"
        assert await asyncio.to_thread(
            env.fake.wait_for, lambda rs: any(GENERAL in system_of(r) for r in rs), 30)
        task_id = started_task(env)
        log = child_log(env, result["sessionId"], task_id)
        assert log[-1]["type"] != "agentStop"
    finally:
        await second.shutdown_session()
    log = child_log(env, result["sessionId"], task_id)
    assert log[-1]["type"] == "agentStop" and log[-1]["status"] == "canceled"
    assert log[-1]["error"] == "the server shut down"
    env.fake.release("forever")


def user_hooks(env: Any, *hooks: dict[str, Any]) -> Path:
    """The user's ``hooks.yaml`` (the parent of the user memory folder): no approval."""
    path = env.tmp / "hooks.yaml"
    path.write_text(yaml.safe_dump({"hooks": list(hooks)}, sort_keys=False))
    return path


async def test_a_subagent_stop_hook_gets_its_payload(client: LanguageClient, env: Any) -> None:
    out = env.tmp / "subagent-stop.jsonl"
    user_hooks(env, {"name": "record", "event": "SubagentStop",
                     "action": {"type": "shell", "command": f"cat >> {out}"}})
    env.fake.script.rules[:0] = [
        rule(EXPLORE, {"tool_calls": [env.read_file("notes.txt")]}, last_is_tool_result=False),
        rule(EXPLORE, {"text": "EXPLORED: two words"}, last_is_tool_result=True)]
    env.fake.add_turns({"tool_calls": [{"name": "agent", "arguments": {
        "prompt": "look", "subagent_type": "explore"}}]}, {"text": "done"})
    result = await env.call(client, RUN, {"prompt": "explore it"})
    assert result["stopReason"] == "completed"
    [payload] = [json.loads(line) for line in out.read_text().splitlines()]
    agent_id = next(e["agentId"] for e in env.events if e.get("agentId"))
    assert payload["hook_event_name"] == "SubagentStop"
    assert payload["session_id"] == result["sessionId"]
    assert payload["agent_id"] == agent_id and payload["agent_type"] == "explore"
    assert payload["stop_reason"] == "completed" and payload["iter"] == 2
    assert payload["last_assistant_message"] == "EXPLORED: two words"


# -- isolation: "worktree" ---------------------------------------------------------------------

def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True).stdout


def repository(root: Path) -> None:
    (root / ".gitignore").write_text(".PseudoClaude/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")


def isolated(prompt: str) -> dict[str, Any]:
    return {"name": "agent", "arguments": {"prompt": prompt, "isolation": "worktree"}}


async def test_a_worktree_sub_agent_writes_in_its_worktree_until_applied(
        client: LanguageClient, env: Any) -> None:
    root = env.folders[0]
    repository(root)
    write = {"name": "write_file", "arguments": {"path": "made.txt", "content": "isolated\n"}}
    env.fake.script.rules[:0] = [
        rule(GENERAL, {"tool_calls": [write]}, last_is_tool_result=False,
             last_user_contains="WRITE-IT"),
        rule(GENERAL, {"text": "wrote made.txt"}, last_is_tool_result=True),
        rule(GENERAL, {"text": "nothing to change"}, last_user_contains="LOOK-ONLY")]
    env.fake.add_turns({"tool_calls": [isolated("WRITE-IT in made.txt"),
                                       isolated("LOOK-ONLY at the notes")]},
                       {"text": "done"})
    result = await env.call(client, RUN, {"prompt": "work apart"})
    assert result["stopReason"] == "completed"
    assert not (root / "made.txt").exists()  # not in the folder
    wrote, looked = [e for e in env.envelopes() if e["tool"] == "agent"]
    assert wrote["ok"] and looked["ok"]
    agent_id = wrote["metadata"]["agentId"]
    kept = wrote["metadata"]["worktree"]
    assert kept["kept"] and kept["branch"] == f"pseudoclaude/{agent_id}"
    assert wrote["metadata"]["files"] == ["made.txt"]
    assert f"Branch: pseudoclaude/{agent_id}" in wrote["content"]
    assert "made.txt" in wrote["content"] and agent_id in wrote["content"]
    assert (Path(kept["path"]) / "made.txt").read_text() == "isolated\n"
    # the one that changed nothing: its worktree and branch are gone
    clean = looked["metadata"]["worktree"]
    assert not clean["kept"] and not Path(clean["path"]).exists()
    assert "removed" in looked["content"]
    branches = git(root, "branch", "--list", "pseudoclaude/*")
    assert agent_id in branches and looked["metadata"]["agentId"] not in branches
    assert git(root, "branch", "--show-current").strip() == "main"
    status = await env.call(client, WORKTREE_STATUS, {"agentId": agent_id})
    assert [(f["path"], f["action"]) for f in status["files"]] == [("made.txt", "create")]
    applied = await env.call(client, WORKTREE_APPLY, {"agentId": agent_id})
    assert applied["applied"] == ["made.txt"] and applied["conflicts"] == []
    assert (root / "made.txt").read_text() == "isolated\n"
    await env.call(client, WORKTREE_REMOVE, {"agentId": agent_id})
    assert not Path(kept["path"]).exists()
    assert agent_id not in git(root, "branch", "--list", "pseudoclaude/*")


async def test_a_worktree_sub_agent_outside_git_is_a_clear_error(client: LanguageClient,
                                                                 env: Any) -> None:
    env.fake.add_turns({"tool_calls": [isolated("anything")]}, {"text": "ok"})
    result = await env.call(client, RUN, {"prompt": "try it"})
    assert result["stopReason"] == "completed"
    [envelope] = [e for e in env.envelopes() if e["tool"] == "agent"]
    assert envelope["error_type"] == "worktree_unavailable"
    assert "not a git repository" in envelope["error"]
    assert (await env.call(client, AGENTS_LIST, {}))["agents"] == []
