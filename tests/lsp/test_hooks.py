"""Hooks through the real server: shell hooks record each event's payload, block and rewrite
tool calls, ask and allow through the permission gate, add context for the next request, refuse
a prompt, time out without blocking; a folder's own ``hooks.yaml`` runs only once approved, and
is asked again when edited."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]
from lsprotocol import types
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import CONTEXT, HOOKS_LIST, HOOKS_REVIEW, RUN

READ = {"name": "read_file", "arguments": {"path": "README.md"}}
ECHO = {"name": "run_command", "arguments": {"command": "echo fine"}}


def shell(command: str) -> dict[str, str]:
    return {"type": "shell", "command": command}


def exact(field: str, value: str) -> dict[str, Any]:
    return {"all_of": [{"field": field, "match": {"type": "exact", "value": value}}]}


def write_hooks(path: Path, *hooks: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"hooks": list(hooks)}, sort_keys=False))
    return path


def user_hooks(env: Any, *hooks: dict[str, Any]) -> Path:
    """The user's ``hooks.yaml`` (the user-level folder is the parent of the user memory
    folder the tests set): no approval needed."""
    return write_hooks(env.tmp / "hooks.yaml", *hooks)


def say(answer: dict[str, Any]) -> str:
    """A shell command printing ``answer`` as JSON."""
    return "echo " + json.dumps(json.dumps(answer))


def tool_requests(env: Any) -> list[str]:
    """The bodies of the run's model requests (memory updates have no tools), as text."""
    return [json.dumps(r["body"]) for r in env.fake.requests if r["body"].get("tools")]


def warnings(env: Any) -> list[str]:
    return [e["message"] for e in env.events if e["kind"] == "warning"]


async def test_each_event_gets_its_payload(approving: LanguageClient, env: Any) -> None:
    out = env.tmp / "payloads"
    out.mkdir()
    events = ["SessionStart", "UserPromptSubmit", "PreUserMessage", "PreToolUse",
              "PostToolUse", "Stop", "Notification"]
    user_hooks(env, *({"name": f"record-{event}", "event": event,
                       "action": shell(f"cat >> {out}/{event}.jsonl")} for event in events))
    env.fake.add_turns({"tool_calls": [READ, ECHO]}, {"text": "done"})
    result = await env.call(approving, RUN, {"prompt": "hello hooks"})
    assert result["stopReason"] == "completed"
    await env.until(lambda: (out / "Notification.jsonl").exists(), what="the notification")
    sid, ws = result["sessionId"], env.folders[0].resolve()
    seen = {event: [json.loads(line) for line in (out / f"{event}.jsonl").read_text()
                    .splitlines()] for event in events}
    for event, payloads in seen.items():
        assert payloads, event
        for payload in payloads:
            assert payload["hook_event_name"] == payload["event"] == event
            assert payload["session_id"] == sid
            assert payload["transcript_path"] == str(
                ws / ".PseudoClaude" / "sessions" / sid / "conversation.jsonl")
            assert Path(payload["transcript_path"]).is_file()
            assert payload["cwd"] == str(ws)
            assert payload["mode"] == payload["permission_mode"] == "default"
    assert seen["SessionStart"][0]["source"] == "startup"
    assert seen["UserPromptSubmit"][0]["prompt"] == "hello hooks"
    assert seen["PreUserMessage"][0]["prompt"] == "hello hooks"
    read, echo = seen["PreToolUse"]
    assert (read["tool_name"], read["tool_input"]) == ("read_file", {"path": "README.md"})
    assert (echo["tool_name"], echo["tool_input"]) == ("run_command", {"command": "echo fine"})
    after_read, after_echo = seen["PostToolUse"]
    assert after_read["tool_use_id"] == read["tool_use_id"] != echo["tool_use_id"]
    assert after_read["is_error"] is False and "A small sample project" in \
        after_read["tool_result"] and len(after_read["tool_result"]) <= 500
    assert after_echo["tool_input"] == {"command": "echo fine"}
    [stop] = seen["Stop"]
    assert (stop["stop_reason"], stop["iter"], stop["last_assistant_message"]) == \
        ("completed", 2, "done")
    [notification] = seen["Notification"]
    assert notification["kind"] == "approval" and "echo fine" in notification["detail"]


async def test_pre_tool_use_blocks_by_exit_2_and_by_a_json_deny(client: LanguageClient,
                                                                env: Any) -> None:
    user_hooks(
        env,
        {"name": "generated", "event": "PreToolUse", "if": exact("tool_input.path", "a.txt"),
         "action": shell('echo "a.txt is generated" >&2; exit 2')},
        {"name": "frozen", "event": "PreToolUse", "if": exact("tool_input.path", "b.txt"),
         "action": shell(say({"hookSpecificOutput": {
             "hookEventName": "PreToolUse", "permissionDecision": "deny",
             "permissionDecisionReason": "b.txt is frozen"}}))})
    writes = [{"name": "write_file", "arguments": {"path": name, "content": "x\n"}}
              for name in ("a.txt", "b.txt", "c.txt")]
    env.fake.add_turns({"tool_calls": writes}, {"text": "done"})
    assert (await env.call(client, RUN, {"prompt": "write"}))["stopReason"] == "completed"
    a, b, c = env.envelopes()
    assert (a["error_type"], a["error"], a["metadata"]["hook"]) == \
        ("hook_blocked", "[hook generated] a.txt is generated", "generated")
    assert (b["error_type"], b["error"], b["metadata"]["hook"]) == \
        ("hook_blocked", "[hook frozen] b.txt is frozen", "frozen")
    assert c["ok"] is True
    ws = env.folders[0]
    assert not (ws / "a.txt").exists() and not (ws / "b.txt").exists()
    assert (ws / "c.txt").read_text() == "x\n"
    statuses = [e["status"] for e in env.events if e["kind"] == "toolResult"]
    assert statuses == ["denied", "denied", "done"]
    assert "[hook generated] a.txt is generated" in json.dumps(tool_requests(env)[-1])


async def test_ask_asks_and_allow_skips_the_question_but_never_a_refusal(
        approving: LanguageClient, env: Any) -> None:
    (env.tmp / "permissions.yaml").write_text("permissions:\n  deny: ['Bash(rm:*)']\n")
    user_hooks(
        env,
        {"name": "audit", "event": "PreToolUse", "if": exact("tool_name", "read_file"),
         "action": shell(say({"decision": "ask", "reason": "reads are audited"}))},
        {"name": "trusted", "event": "PreToolUse", "if": exact("tool_name", "run_command"),
         "action": shell(say({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                     "permissionDecision": "allow"}}))})
    calls = [READ, ECHO, {"name": "run_command", "arguments": {"command": "rm -f notes.txt"}},
             {"name": "run_command", "arguments": {"command": "rm -rf /"}}]
    env.fake.add_turns({"tool_calls": calls}, {"text": "done"})
    await env.call(approving, RUN, {"prompt": "go"})
    [asked] = env.approve_requests  # the read (never asked otherwise); not the commands
    assert (asked["kind"], asked["tool"]) == ("read", "read_file")
    assert asked["reason"] == "hook audit asks first: reads are audited"
    read, echo, rm, root = env.envelopes()
    assert read["ok"] is True and echo["ok"] is True and "fine" in echo["content"]
    assert rm["error_type"] == "permission_denied" and rm["metadata"]["rule"] == "Bash(rm:*)"
    assert root["error_type"] == "permission_denied"
    assert root["metadata"]["source"] == "blacklist"
    assert (env.folders[0] / "notes.txt").exists()


async def test_updated_input_replaces_the_arguments_checked_again(client: LanguageClient,
                                                                  env: Any) -> None:
    user_hooks(
        env,
        {"name": "rewrite", "event": "PreToolUse", "if": exact("tool_name", "run_command"),
         "action": shell(say({"hookSpecificOutput": {
             "hookEventName": "PreToolUse", "permissionDecision": "allow",
             "updatedInput": {"command": "echo rewritten"}}}))},
        {"name": "breaks", "event": "PreToolUse", "if": exact("tool_name", "read_file"),
         "action": shell(say({"hookSpecificOutput": {"updatedInput": {"path": 5}}}))})
    env.fake.add_turns({"tool_calls": [{"name": "run_command",
                                        "arguments": {"command": "echo original"}}, READ]},
                       {"text": "done"})
    await env.call(client, RUN, {"prompt": "go"})
    ran, read = env.envelopes()
    assert ran["ok"] is True and "rewritten" in ran["content"]
    assert "original" not in ran["content"]
    assert read["error_type"] == "invalid_arguments"
    assert env.approvals == []  # allowed by the hook: the command was not asked


async def test_post_tool_use_context_reaches_the_next_request_only(client: LanguageClient,
                                                                   env: Any) -> None:
    user_hooks(env, {"name": "lint", "event": "PostToolUse",
                     "if": exact("tool_input.path", "README.md"),
                     "action": shell(say({"hookSpecificOutput": {
                         "hookEventName": "PostToolUse",
                         "additionalContext": "LINT-SAYS-42"}}))})
    env.fake.add_turns({"tool_calls": [READ]},
                       {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
                       {"text": "done"})
    await env.call(client, RUN, {"prompt": "read"})
    first, second, third = tool_requests(env)[-3:]
    assert "LINT-SAYS-42" not in first
    assert "[hook lint] LINT-SAYS-42" in second and "<system-reminder>" in second
    assert "LINT-SAYS-42" not in third
    assert "LINT-SAYS-42" not in json.dumps(env.log_messages())  # never logged


async def test_a_refused_prompt_is_neither_sent_nor_logged(client: LanguageClient,
                                                           env: Any) -> None:
    user_hooks(env, {"name": "no-secrets", "event": "UserPromptSubmit",
                     "if": {"any_of": [{"field": "prompt",
                                        "match": {"type": "regex", "value": "(?i)secret"}}]},
                     "action": shell('echo "no secrets in prompts" >&2; exit 2')})
    asked = len(env.fake.requests)
    result = await env.call(client, RUN, {"prompt": "my Secret is 42"})
    assert result["stopReason"] == "blocked"
    assert result["error"] == "[hook no-secrets] no secrets in prompts"
    assert len(env.fake.requests) == asked
    assert (await env.call(client, CONTEXT, {}))["messageCount"] == 0
    assert not list((env.folders[0] / ".PseudoClaude").glob("sessions/*/conversation.jsonl"))
    env.fake.add_turns({"text": "hello"})
    assert (await env.call(client, RUN, {"prompt": "hi"}))["stopReason"] == "completed"


async def test_a_timeout_and_garbage_are_warnings_and_the_call_runs(client: LanguageClient,
                                                                    env: Any) -> None:
    user_hooks(env,
               {"name": "slow", "event": "PreToolUse", "timeout": "500ms",
                "action": shell("sleep 30; exit 2")},
               {"name": "garbage", "event": "PostToolUse", "action": shell("echo '{not json'")})
    env.fake.add_turns({"tool_calls": [{"name": "write_file",
                                        "arguments": {"path": "x.txt", "content": "x\n"}}]},
                       {"text": "done"})
    result = await env.call(client, RUN, {"prompt": "write"})
    assert result["stopReason"] == "completed"
    assert (env.folders[0] / "x.txt").read_text() == "x\n"
    said = warnings(env)
    assert "hook slow (PreToolUse) timed out after 0.5s and was stopped; it did not block" \
        in said
    assert any(w.startswith("hook garbage (PostToolUse) printed output that is not valid "
                            "JSON") for w in said)


@pytest.fixture
def repo_hooks(env: Any) -> Path:
    """The folder's own ``hooks.yaml``, there before the folder opens; its approval is
    declined until the test says otherwise."""
    env.approve_answer = lambda params: {"decision": "deny"} if params["kind"] == "hooks" \
        else {"decision": "allowOnce"}
    marker = env.tmp / "marker"
    return write_hooks(env.tmp / "ws" / ".PseudoClaude" / "hooks.yaml",
                       {"name": "mark", "event": "PreToolUse",
                        "action": shell(f"echo x >> {marker}")})


async def answered_listing(client: LanguageClient, env: Any) -> dict[str, Any]:
    """``hooks/list`` once the answer to the question asked when the folder opened reached
    the server (it arrives after the question left it)."""
    deadline = asyncio.get_running_loop().time() + 20
    while True:
        listing: dict[str, Any] = await env.call(client, HOOKS_LIST, {})
        waiting = any(h["status"] == "needsApproval" for h in listing["hooks"])
        if not waiting or asyncio.get_running_loop().time() > deadline:
            return listing
        await asyncio.sleep(0.05)


async def test_a_folders_hooks_yaml_runs_only_once_approved(
        repo_hooks: Path, approving: LanguageClient, env: Any) -> None:
    marker = env.tmp / "marker"
    await env.until(lambda: env.approve_requests, what="the question when the folder opens")
    [asked] = env.approve_requests
    assert asked["kind"] == "hooks" and asked["path"] == ".PseudoClaude/hooks.yaml"
    assert asked["hooks"] == [{"name": "mark", "event": "PreToolUse",
                               "action": f"shell: echo x >> {marker}"}]
    listing = await answered_listing(approving, env)
    assert [(h["name"], h["source"], h["status"]) for h in listing["hooks"]] == \
        [("mark", "workspace", "denied")]
    env.fake.add_turns({"tool_calls": [READ]}, {"text": "done"})
    await env.call(approving, RUN, {"prompt": "read"})
    assert not marker.exists() and len(env.approve_requests) == 1  # declined: not asked again
    repo_hooks.write_text(repo_hooks.read_text() + "# edited\n")  # another content: asked
    env.approve_answer = {"decision": "allowSession"}
    env.fake.add_turns({"tool_calls": [READ]}, {"text": "done"})
    await env.call(approving, RUN, {"prompt": "read"})
    assert [r["kind"] for r in env.approve_requests] == ["hooks", "hooks"]
    assert marker.read_text() == "x\n"
    listing = await env.call(approving, HOOKS_LIST, {})
    assert [h["status"] for h in listing["hooks"]] == ["active"]
    messages: list[str] = []

    def on_message(params: Any) -> Any:
        messages.append(params.message)
        return types.MessageActionItem(title="Deny")

    second = await env.second_server(handlers={types.WINDOW_SHOW_MESSAGE_REQUEST: on_message})
    try:  # remembered outside the workspace: another process runs them unasked
        listing = await env.call(second, HOOKS_LIST, {})
        assert [h["status"] for h in listing["hooks"]] == ["active"]
        env.fake.add_turns({"tool_calls": [READ]}, {"text": "done"})
        await env.call(second, RUN, {"prompt": "read"})
        assert marker.read_text() == "x\nx\n" and messages == []
    finally:
        await second.shutdown_session()


async def test_a_declined_hooks_yaml_is_asked_again_on_review(
        repo_hooks: Path, approving: LanguageClient, env: Any) -> None:
    await env.until(lambda: env.approve_requests, what="the question when the folder opens")
    listing = await answered_listing(approving, env)
    assert [h["status"] for h in listing["hooks"]] == ["denied"]
    env.approve_answer = {"decision": "deny"}
    reviewed = await env.call(approving, HOOKS_REVIEW, {})  # declined again: still off
    assert [h["status"] for h in reviewed["hooks"]] == ["denied"]
    env.approve_answer = {"decision": "allowSession"}
    reviewed = await env.call(approving, HOOKS_REVIEW, {})
    asked = env.approve_requests
    assert [(r["kind"], r["path"]) for r in asked] == [("hooks", ".PseudoClaude/hooks.yaml")] * 3
    assert [(h["name"], h["status"]) for h in reviewed["hooks"]] == [("mark", "active")]
    assert "mark" in reviewed["text"]
    again = await env.call(approving, HOOKS_REVIEW, {})  # approved: nothing to ask
    assert len(env.approve_requests) == 3 and again["hooks"] == reviewed["hooks"]
    env.fake.add_turns({"tool_calls": [READ]}, {"text": "done"})
    await env.call(approving, RUN, {"prompt": "read"})
    assert (env.tmp / "marker").read_text() == "x\n"


async def test_hooks_list_names_what_cannot_be_read_and_the_settings(client: LanguageClient,
                                                                     env: Any) -> None:
    path = env.tmp / "hooks.yaml"
    path.write_text("hooks:\n"
                    "  - name: fine\n    event: Stop\n    action: {type: prompt, text: hi}\n"
                    "  - name: typo\n    event: PreTool\n    action: {type: shell, command: x}\n")
    env.hook_settings = [{"name": "from-editor", "event": "PostToolUse",
                          "action": {"type": "shell", "command": "true"}},
                         {"name": "fine", "event": "Stop",
                          "action": {"type": "shell", "command": "true"}}]
    second = await env.second_server()
    try:
        listing = await env.call(second, HOOKS_LIST, {})
    finally:
        await second.shutdown_session()
    rows = [(h["name"], h["event"], h["source"], h["status"]) for h in listing["hooks"]]
    assert rows == [("fine", "Stop", "user", "active"),
                    ("from-editor", "PostToolUse", "settings", "active"),
                    ("fine", "Stop", "settings", "invalid"),
                    ("typo", "PreTool", "user", "invalid")]
    errors = [h.get("error") for h in listing["hooks"]]
    assert errors[2] == f'settings hooks[1]: a hook named "fine" is defined in {path} already'
    assert errors[3].startswith(f'{path}:6: unknown event "PreTool"')
    assert listing["hooks"][0]["action"] == "prompt: hi"


# Hook scripts written for Claude Code, in the form its documentation gives them (stdin JSON in;
# exit 2 with a reason on stderr, or a JSON decision on stdout), used here unchanged.
CLAUDE_VALIDATOR = r'''#!/usr/bin/env python3
import json
import sys
import re
import sys

# Each rule: a regular expression over the command, and what to use instead.
VALIDATION_RULES = [
    (r"\bgrep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep' for better performance"),
    (r"\bfind\s+\S+\s+-name\b", "Use 'rg --files -g pattern' instead of 'find -name'"),
]


def validate_command(command: str) -> list[str]:
    issues = []
    for pattern, message in VALIDATION_RULES:
        if re.search(pattern, command):
            issues.append(message)
    return issues


try:
    input_data = json.load(sys.stdin)
except json.JSONDecodeError as e:
    print(f"Error: Invalid JSON input: {e}", file=sys.stderr)
    sys.exit(1)

tool_input = input_data.get("tool_input", {})
command = tool_input.get("command", "")
if not command:
    sys.exit(0)

issues = validate_command(command)
if issues:
    for message in issues:
        print(f"• {message}", file=sys.stderr)
    # Exit code 2 blocks the tool call and shows stderr to Claude
    sys.exit(2)
'''
CLAUDE_BLOCK_RM = r'''#!/bin/bash
COMMAND=$(jq -r '.tool_input.command')

if echo "$COMMAND" | grep -q 'rm -rf'; then
  jq -n '{
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "Destructive command blocked by hook"
    }
  }'
else
  exit 0  # allow the command
fi
'''
CLAUDE_PROMPT_CHECK = r'''#!/usr/bin/env python3
import datetime
import json
import sys
import re
import sys

try:
    input_data = json.load(sys.stdin)
except json.JSONDecodeError as e:
    print(f"Error: Invalid JSON input: {e}", file=sys.stderr)
    sys.exit(1)

prompt = input_data.get("prompt", "")

# Check for sensitive patterns
sensitive_patterns = [
    (r"(?i)\b(password|secret|key|token)\s*[:=]", "Prompt contains potential secrets"),
]

for pattern, message in sensitive_patterns:
    if re.search(pattern, prompt):
        # Use JSON output to block with a specific reason
        output = {
            "decision": "block",
            "reason": f"Security policy violation: {message}. Please rephrase your request "
                      "without sensitive information.",
        }
        print(json.dumps(output))
        sys.exit(0)

# Add current time to context
context = f"Current time: {datetime.datetime.now()}"
print(context)

# Allow the prompt to proceed with the additional context
sys.exit(0)
'''


async def test_claude_code_hook_scripts_work_unchanged(client: LanguageClient,
                                                       env: Any) -> None:
    scripts = env.folders[0] / ".claude" / "hooks"
    scripts.mkdir(parents=True)
    for name, text in (("validate_bash.py", CLAUDE_VALIDATOR), ("block-rm.sh", CLAUDE_BLOCK_RM),
                       ("check_prompt.py", CLAUDE_PROMPT_CHECK)):
        (scripts / name).write_text(text)
        (scripts / name).chmod(0o755)
    python = sys.executable
    bash = exact("tool_name", "run_command")  # what Claude Code's "matcher": "Bash" says
    user_hooks(
        env,
        {"name": "validate-bash", "event": "PreToolUse", "if": bash,
         "action": shell(f'{python} "$CLAUDE_PROJECT_DIR"/.claude/hooks/validate_bash.py')},
        {"name": "block-rm", "event": "PreToolUse", "if": bash,
         "action": shell('"$CLAUDE_PROJECT_DIR"/.claude/hooks/block-rm.sh')},
        {"name": "check-prompt", "event": "UserPromptSubmit",
         "action": shell(f'{python} "$CLAUDE_PROJECT_DIR"/.claude/hooks/check_prompt.py')})
    refused = await env.call(client, RUN, {"prompt": "deploy with password: hunter2"})
    assert refused["stopReason"] == "blocked"
    assert refused["error"] == ("[hook check-prompt] Security policy violation: Prompt "
                                "contains potential secrets. Please rephrase your request "
                                "without sensitive information.")
    commands = ["grep -r alpha .", "rm -rf ./build", "echo allowed"]
    env.fake.add_turns({"tool_calls": [{"name": "run_command", "arguments": {"command": c}}
                                       for c in commands]}, {"text": "done"})
    assert (await env.call(client, RUN, {"prompt": "clean up"}))["stopReason"] == "completed"
    grep, rm, echo = env.envelopes()
    assert grep["error_type"] == "hook_blocked"
    assert grep["error"] == ("[hook validate-bash] • Use 'rg' (ripgrep) instead of 'grep' "
                             "for better performance")
    assert rm["error"] == "[hook block-rm] Destructive command blocked by hook"
    assert echo["ok"] is True and "allowed" in echo["content"]
    first = tool_requests(env)[-2]  # the prompt's first request: the time, as context
    assert "[hook check-prompt] Current time: " in first
    assert warnings(env) == []
