"""The permission engine through the LSP server (SPEC §13 "Permission engine"): modes per session
and their log line, rules from each source, what a folder's own file may grant itself, the
answers that teach (always allow, deny with a message), the dry run, and a real sandboxed
command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import (
    CONTEXT,
    INVALID_PARAMS,
    MODE,
    PERMISSIONS,
    PERMISSIONS_CHECK,
    REQUEST_FAILED,
    RUN,
    SESSIONS_NEW,
)

RUN_MAKE = {"name": "run_command", "arguments": {"command": "make build && make check"}}
WRITE = {"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}}


def user_permissions(env: Any) -> Path:
    """The user's ``permissions.yaml``: the user-level folder is the parent of the user
    memory folder the tests set."""
    path: Path = env.tmp / "permissions.yaml"
    return path


def mode_lines(env: Any) -> list[str]:
    log = sorted((env.folders[0] / ".PseudoClaude" / "sessions").glob("*/conversation.jsonl"))
    lines = [json.loads(line) for path in log for line in path.read_text().splitlines()]
    return [line["mode"] for line in lines if line.get("type") == "mode"]


async def test_modes_are_checked_and_bypass_needs_the_users_setting(
        client: LanguageClient, env: Any) -> None:
    with pytest.raises(JsonRpcException) as bad:
        await env.call(client, MODE, {"mode": "yolo"})
    assert bad.value.code == INVALID_PARAMS and "mode" in str(bad.value)
    with pytest.raises(JsonRpcException) as bypass:
        await env.call(client, MODE, {"mode": "bypassPermissions"})
    assert bypass.value.code == REQUEST_FAILED and "permissions.allowBypass" in str(bypass.value)
    listing = await env.call(client, PERMISSIONS, {})
    assert listing["mode"] == "default" and "bypassPermissions" not in listing["modes"]


async def test_a_mode_chosen_before_a_session_is_logged_and_survives_a_restart(
        client: LanguageClient, env: Any) -> None:
    answer = await env.call(client, MODE, {"mode": "acceptEdits"})
    assert answer["mode"] == "acceptEdits" and "next session" in answer["message"]
    env.fake.add_turns({"tool_calls": [WRITE]}, {"text": "written"})
    result = await env.call(client, RUN, {"prompt": "write it"})
    assert result["stopReason"] == "completed"
    assert (env.folders[0] / "new.txt").read_text() == "x\n"
    assert mode_lines(env) == ["acceptEdits"]
    assert [e["mode"] for e in env.events if e["kind"] == "mode"] == []  # nothing changed
    await env.call(client, MODE, {"mode": "plan"})
    assert mode_lines(env) == ["acceptEdits", "plan"]
    assert [e["mode"] for e in env.events if e["kind"] == "mode"] == ["plan"]
    second = await env.second_server()
    try:
        await env.call(second, "pseudoclaude/sessions/resume", {"sessionId": "latest"})
        context = await env.call(second, CONTEXT, {})
        assert context["mode"] == "plan"
    finally:
        await second.shutdown_session()


async def test_plan_mode_refuses_a_write_without_asking(approving: LanguageClient,
                                                        env: Any) -> None:
    await env.call(approving, SESSIONS_NEW, {})
    await env.call(approving, MODE, {"mode": "plan"})
    env.fake.add_turns({"tool_calls": [WRITE]}, {"text": "planned"})
    await env.call(approving, RUN, {"prompt": "write it"})
    assert not (env.folders[0] / "new.txt").exists() and env.approve_requests == []
    [envelope] = env.envelopes()
    assert envelope["error_type"] == "tool_not_allowed" and "plan mode" in envelope["error"]


async def test_strict_asks_before_a_read(approving: LanguageClient, env: Any) -> None:
    await env.call(approving, MODE, {"mode": "strict"})
    env.fake.add_turns({"tool_calls": [env.read_file("notes.txt")]}, {"text": "read"})
    await env.call(approving, RUN, {"prompt": "read"})
    [request] = env.approve_requests
    assert request["kind"] == "read" and request["rule"] == "Read(notes.txt)"
    assert "strict" in request["reason"]


async def test_always_allow_writes_the_rule_and_stops_asking(approving: LanguageClient,
                                                              env: Any) -> None:
    env.approve_answer = {"decision": "allowAlways"}
    env.fake.add_turns({"tool_calls": [RUN_MAKE]}, {"text": "once"},
                       {"tool_calls": [RUN_MAKE]}, {"text": "twice"})
    await env.call(approving, RUN, {"prompt": "make"})
    [request] = env.approve_requests
    assert request["kind"] == "runCommand" and request["rule"] == "Bash(make build:*)"
    local = env.folders[0] / ".PseudoClaude" / "permissions.local.yaml"
    assert "Bash(make build:*)" in local.read_text()
    listing = await env.call(approving, PERMISSIONS, {})
    assert {"rule": "Bash(make build:*)", "decision": "allow", "source": "local"} \
        in listing["rules"]
    # every part must be allowed: the rule covers the first part, the second one still asks
    env.approve_requests.clear()
    await env.call(approving, RUN, {"prompt": "make again"})
    assert [r["rule"] for r in env.approve_requests] == ["Bash(make check:*)"]


async def test_a_denial_with_a_message_reaches_the_model(approving: LanguageClient,
                                                         env: Any) -> None:
    env.approve_answer = {"decision": "deny", "message": "use make check instead"}
    env.fake.add_turns({"tool_calls": [RUN_MAKE]}, {"text": "ok"})
    await env.call(approving, RUN, {"prompt": "make"})
    [envelope] = env.envelopes()
    assert envelope["error_type"] == "permission_denied"
    assert envelope["error"].endswith("denied by the user: use make check instead")
    assert envelope["metadata"]["source"] == "user"


async def test_a_folders_own_allow_rules_wait_for_the_user(approving: LanguageClient,
                                                           env: Any) -> None:
    project = env.folders[0] / ".PseudoClaude" / "permissions.yaml"
    project.parent.mkdir(exist_ok=True)
    project.write_text("permissions:\n  allow: ['Bash(make:*)']\n  deny: ['Read(.env)']\n")
    answers = iter([{"decision": "deny"}, {"decision": "allowSession"}])
    env.approve_answer = lambda params: next(answers)
    before = await env.call(approving, PERMISSIONS_CHECK,
                            {"tool": "run_command", "arguments": {"command": "make hi"}})
    assert before["decision"] == "ask"  # the allow rule waits; the deny rule applies at once
    denied = await env.call(approving, PERMISSIONS_CHECK,
                            {"tool": "read_file", "arguments": {"path": ".env"}})
    assert denied["decision"] == "deny" and denied["source"] == "project"
    listing = await env.call(approving, PERMISSIONS, {})
    assert listing["waiting"] == [".PseudoClaude/permissions.yaml"]
    env.fake.add_turns({"tool_calls": [RUN_MAKE]}, {"text": "declined"})
    await env.call(approving, RUN, {"prompt": "make"})  # the file asked, declined: the call asks
    assert [r["kind"] for r in env.approve_requests] == ["permissions", "runCommand"]
    assert env.approve_requests[0]["rules"] == ["allow Bash(make:*)"]
    project.write_text("permissions:\n  allow: ['Bash(make:*)']\n")  # changed: asked again
    env.approve_requests.clear()
    env.approve_answer = {"decision": "allowSession"}
    env.fake.add_turns({"tool_calls": [RUN_MAKE]}, {"text": "allowed"})
    await env.call(approving, RUN, {"prompt": "make"})
    assert [r["kind"] for r in env.approve_requests] == ["permissions"]
    ran = env.envelopes()[-1]  # it ran (make finds no Makefile here: its own failure)
    assert ran.get("error_type") != "permission_denied" and "exit_code" in ran["metadata"]
