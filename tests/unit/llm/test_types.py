from __future__ import annotations

import json

import msgspec

from pseudoclaude.llm.types import (
    Message,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    copy_message,
    parse_arguments,
    synthetic_error_result,
)


def test_parse_arguments_keeps_what_is_not_a_json_object() -> None:
    assert parse_arguments('{"path": "a.py"}') == {"path": "a.py"}
    assert parse_arguments(b'{"n": 1}') == {"n": 1}
    assert parse_arguments("") == {}
    assert parse_arguments(None) == {}
    assert parse_arguments('{"path": "unterminated') == '{"path": "unterminated'
    assert parse_arguments("[1, 2]") == "[1, 2]"
    assert parse_arguments("42") == "42"


def test_copy_message_is_deep() -> None:
    original = Message(
        role="assistant", content="x",
        tool_calls=[ToolCall("c1", "read_file", {"path": "a", "opts": {"n": [1]}})],
        thinking=[ThinkingBlock("hmm", "sig")],
    )
    copy = copy_message(original)
    copy.tool_calls[0].arguments["opts"]["n"].append(2)
    copy.tool_calls.append(ToolCall("c2", "x"))
    copy.thinking[0].thinking = "changed"
    assert original.tool_calls[0].arguments == {"path": "a", "opts": {"n": [1]}}
    assert len(original.tool_calls) == 1
    assert original.thinking[0].thinking == "hmm"
    result = Message(role="user", tool_result=ToolResult("c1", "read_file", "body"))
    rcopy = copy_message(result)
    assert rcopy.tool_result is not None
    rcopy.tool_result.content = "other"
    assert result.tool_result is not None and result.tool_result.content == "body"


def test_message_encodes_to_the_inline_log_shape() -> None:
    m = Message(role="assistant", tool_calls=[ToolCall("c1", "find_files", {"pattern": "*"})])
    assert json.loads(msgspec.json.encode(m)) == {
        "role": "assistant",
        "tool_calls": [{"id": "c1", "name": "find_files", "arguments": {"pattern": "*"}}],
    }
    assert json.loads(msgspec.json.encode(Message(role="user", content="hi"))) == {
        "role": "user", "content": "hi"}


def test_synthetic_error_result_is_an_error_envelope() -> None:
    m = synthetic_error_result(ToolCall("c9", "run_command", {}), "interrupted", "stopped")
    assert m.role == "user" and m.tool_result is not None
    assert m.tool_result.is_error and m.tool_result.call_id == "c9"
    assert json.loads(m.tool_result.content) == {
        "ok": False, "tool": "run_command", "content": "", "error_type": "interrupted",
        "error": "stopped"}
