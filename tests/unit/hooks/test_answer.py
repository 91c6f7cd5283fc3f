"""A hook's answer on standard output, in both of Claude Code's forms."""

from __future__ import annotations

import json

from pseudoclaude.hooks.answer import HookAnswer, read_answer


def test_the_top_level_form() -> None:
    assert read_answer('{"decision": "block", "reason": "no"}') == HookAnswer("deny", "no")
    assert read_answer('{"decision": "approve", "reason": "fine"}').decision == "allow"
    assert read_answer('{"decision": "allow"}').decision == "allow"
    assert read_answer('{"decision": "ask", "reason": "sure?"}') == HookAnswer("ask", "sure?")
    assert read_answer('{"decision": "maybe"}').decision is None


def test_hook_specific_output_wins() -> None:
    answer = read_answer(json.dumps({
        "decision": "approve", "reason": "top",
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": "specific",
                               "updatedInput": {"command": "ls"},
                               "additionalContext": "more"}}))
    assert answer == HookAnswer("deny", "specific", "more", {"command": "ls"})


def test_continue_false_stops_with_its_reason() -> None:
    answer = read_answer('{"continue": false, "stopReason": "tests are red"}')
    assert answer.decision == "deny" and answer.reason == "tests are red"


def test_plain_and_garbled_output() -> None:
    assert read_answer("  \n") == HookAnswer()
    assert read_answer("Current time: 12:00\n") == HookAnswer(plain="Current time: 12:00")
    garbled = read_answer('{"decision": "deny", oops')
    assert garbled.garbled and garbled.plain == '{"decision": "deny", oops'
    assert garbled.decision is None
    assert read_answer("[1, 2]").garbled
    assert read_answer('{"systemMessage": "formatted 3 files"}').system_message == \
        "formatted 3 files"
