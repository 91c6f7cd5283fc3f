"""Plan mode and the task list through the LSP server (SPEC §13 "Plan, then act; a task
list"): the offer per mode, the reminder in requests but never in the log, the plan approval,
the task list logged, re-sent with each request and restored by a resume."""

from __future__ import annotations

import json
from typing import Any

from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import MODE, RUN, TASKS

TASKS_CALL = {"name": "update_tasks", "arguments": {"tasks": [
    {"content": "read the notes", "status": "completed"},
    {"content": "write the summary", "status": "in_progress"}]}}
PLAN = {"name": "exit_plan_mode", "arguments": {"plan": "# Plan\n1. write new.txt"}}
WRITE = {"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}}


def tools_of(request: dict[str, Any]) -> list[str]:
    return [t["name"] for t in request["body"].get("tools", [])]


async def test_the_task_list_is_logged_sent_and_restored(client: LanguageClient,
                                                         env: Any) -> None:
    env.fake.add_turns({"tool_calls": [TASKS_CALL]}, {"text": "listed"})
    await env.call(client, RUN, {"prompt": "plan it"})
    answer = await env.call(client, TASKS, {})
    assert answer["tasks"] == TASKS_CALL["arguments"]["tasks"]
    events = [e for e in env.events if e["kind"] == "tasks"]
    assert events[-1]["tasks"] == TASKS_CALL["arguments"]["tasks"]
    runs = [r for r in env.fake.requests if r["body"].get("tools")]  # not a memory update's
    last = json.dumps(runs[-1]["body"]["messages"][-1])
    assert "[~] write the summary" in last and "<system-reminder>" in last
    logged = json.dumps(env.log_messages())
    assert "<system-reminder>" not in logged  # sent, never logged
    second = await env.second_server()
    try:
        await env.call(second, "pseudoclaude/sessions/resume", {"sessionId": "latest"})
        assert (await env.call(second, TASKS, {}))["tasks"] == TASKS_CALL["arguments"]["tasks"]
    finally:
        await second.shutdown_session()


async def test_plan_mode_offers_reading_tools_and_an_approved_plan_runs(
        approving: LanguageClient, env: Any) -> None:
    await env.call(approving, MODE, {"mode": "plan"})
    env.approve_answer = {"decision": "approve", "mode": "acceptEdits"}
    env.fake.add_turns({"tool_calls": [PLAN]}, {"tool_calls": [WRITE]}, {"text": "done"})
    await env.call(approving, RUN, {"prompt": "write new.txt"})
    plan_request, after = [r for r in env.fake.requests if r["body"].get("tools")][:2]
    assert "exit_plan_mode" in tools_of(plan_request)
    assert "write_file" not in tools_of(plan_request)
    assert "write_file" in tools_of(after) and "exit_plan_mode" not in tools_of(after)
    assert "plan mode" in json.dumps(plan_request["body"]["messages"][-1])
    [asked] = env.approve_requests
    assert asked["kind"] == "plan" and asked["plan"].startswith("# Plan")
    assert (env.folders[0] / "new.txt").read_text() == "x\n"  # acceptEdits: not asked


async def test_keep_planning_fork_rewind_and_a_plan_outside_plan_mode(
        approving: LanguageClient, env: Any) -> None:
    first = {"name": "update_tasks", "arguments": {"tasks": [
        {"content": "step one", "status": "pending"}]}}
    second = {"name": "update_tasks", "arguments": {"tasks": [
        {"content": "step one", "status": "completed"}]}}
    env.fake.add_turns({"tool_calls": [first, PLAN]}, {"text": "revising"},
                       {"tool_calls": [second]}, {"text": "ticked"})
    await env.call(approving, MODE, {"mode": "plan"})
    env.approve_answer = {"decision": "keepPlanning", "feedback": "add a test first"}
    sid = (await env.call(approving, RUN, {"prompt": "plan it"}))["sessionId"]
    kept = [e for e in env.envelopes() if e["tool"] == "exit_plan_mode"][-1]
    assert "add a test first" in kept["content"] and kept["ok"] is True
    assert (await env.call(approving, "pseudoclaude/context", {}))["mode"] == "plan"
    await env.call(approving, RUN, {"prompt": "tick it"})
    done = [{"content": "step one", "status": "completed"}]
    assert (await env.call(approving, TASKS, {}))["tasks"] == done
    fork = await env.call(approving, "pseudoclaude/sessions/fork", {"sessionId": sid, "turn": 2})
    await env.call(approving, "pseudoclaude/sessions/resume", {"sessionId": fork["sessionId"]})
    assert (await env.call(approving, TASKS, {}))["tasks"] == first["arguments"]["tasks"]
    await env.call(approving, "pseudoclaude/sessions/resume", {"sessionId": sid})
    await env.call(approving, "pseudoclaude/rewind",
                   {"sessionId": sid, "turn": 2, "mode": "conversation"})
    assert (await env.call(approving, TASKS, {}))["tasks"] == first["arguments"]["tasks"]
    await env.call(approving, MODE, {"mode": "default"})
    env.fake.add_turns({"tool_calls": [PLAN]}, {"text": "fine"})
    await env.call(approving, RUN, {"prompt": "present a plan"})
    outside = [e for e in env.envelopes() if e["tool"] == "exit_plan_mode"][-1]
    assert outside["error_type"] == "not_in_plan_mode"


async def test_the_task_list_survives_a_compaction(client: LanguageClient, env: Any) -> None:
    bare = {"when": {"summary": True}, "reply": {"text": "<summary>Work continues.</summary>"},
            "times": None}
    env.fake.script.rules.insert(0, bare)  # the summary itself says nothing of the list
    env.fake.add_turns({"tool_calls": [TASKS_CALL]}, {"text": "listed"},
                       *({"text": f"answer {i} " + "x" * 20_000} for i in range(6)),
                       {"text": "after"})
    for i in range(7):
        await env.call(client, RUN, {"prompt": f"question {i}"})
    result = await env.call(client, "pseudoclaude/compact", {})
    assert result["summarized"], result
    summaries = [json.dumps(r["body"]) for r in env.fake.requests
                 if "Keep the session's current task list" in json.dumps(r["body"])]
    assert summaries and "[~] write the summary" in summaries[-1]  # the summary request
    await env.call(client, RUN, {"prompt": "go on"})
    runs = [r for r in env.fake.requests if r["body"].get("tools")]
    last = json.dumps(runs[-1]["body"]["messages"])
    assert '"name": "update_tasks"' not in last  # the call that made it was summarised away
    assert "[x] read the notes" in last and "[~] write the summary" in last  # re-sent
