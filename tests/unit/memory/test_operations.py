"""Memory operations: JSON extraction from noisy replies, validation, secrets, the update
prompt (SPEC §5)."""

from __future__ import annotations

import json

import pytest

from pseudoclaude.llm.types import Message, ToolCall, ToolResult
from pseudoclaude.memory.operations import (
    Operation,
    OperationsError,
    check_operation,
    extract_json_array,
    parse_operations,
)
from pseudoclaude.memory.prompt import TOOL_RESULT_CHARS, build_update_prompt, render_transcript
from pseudoclaude.memory.sensitive import find_secret

OPS = [{"action": "create", "level": "project", "type": "project_knowledge", "title": "Build",
        "content": "make build"}]


# -- extraction ------------------------------------------------------------------------------
def test_extraction_from_noisy_text() -> None:
    text = "Sure: " + json.dumps(OPS) + " Done."
    assert extract_json_array(text) == OPS


def test_array_then_trailing_prose_parses() -> None:
    assert extract_json_array(json.dumps(OPS) + "\n\nI saved the build steps [as asked].") == OPS


def test_code_fences_and_brackets_inside_strings() -> None:
    ops = [{"action": "create", "level": "user", "type": "user_preference",
            "title": "Arrays [sic]", "content": 'use "]" and "[" freely, even \\"escaped\\" ]'}]
    text = "```json\n" + json.dumps(ops) + "\n```\nThat's all]"
    assert extract_json_array(text) == ops


def test_prose_brackets_before_the_array_are_passed_over() -> None:
    text = "Step [1]: I looked [carefully]. Result: " + json.dumps(OPS)
    assert extract_json_array(text) == OPS
    assert extract_json_array("Nothing to save: []") == []
    assert extract_json_array("no array here") is None
    assert extract_json_array("[ unbalanced") is None


def test_parse_operations_errors() -> None:
    with pytest.raises(OperationsError, match="empty"):
        parse_operations("   ")
    with pytest.raises(OperationsError, match="no JSON array"):
        parse_operations("I have nothing to add.")
    assert parse_operations("[]") == ([], [])


# -- validation ------------------------------------------------------------------------------
def test_incomplete_create_is_rejected_and_update_passes() -> None:
    reason = check_operation({"action": "create", "level": "project"})
    assert isinstance(reason, str) and "missing type, title, content" in reason
    op = check_operation({"action": "update", "level": "project",
                          "filename": "project_knowledge_build.md", "content": "x"})
    assert op == Operation("update", "project", filename="project_knowledge_build.md",
                           content="x")


def test_unknown_level_is_rejected_with_a_reason() -> None:
    reason = check_operation({"action": "create", "level": "team", "type": "project_knowledge",
                              "title": "t", "content": "c"})
    assert reason == "unknown level 'team' (expected project or user)"


@pytest.mark.parametrize("raw, fragment", [
    ({"action": "rename", "level": "project"}, "unknown action 'rename'"),
    ({"action": "create", "level": "user", "type": "gossip", "title": "t", "content": "c"},
     "unknown type 'gossip'"),
    ({"action": "delete", "level": "project", "filename": "../bad.md"}, "'../bad.md'"),
    ({"action": "delete", "level": "project", "filename": "a..md"}, "contains '..'"),
    ({"action": "delete", "level": "project", "filename": "sub/x.md"}, "separator"),
    ({"action": "delete", "level": "project", "filename": "MEMORY.md"}, "index"),
    ({"action": "update", "level": "project", "filename": "a.md", "content": ["x"]},
     "not a string"),
    ("create", "not a JSON object"),
])
def test_bad_operations_are_rejected(raw: object, fragment: str) -> None:
    reason = check_operation(raw)
    assert isinstance(reason, str) and fragment in reason


def test_parse_keeps_valid_operations_and_reports_the_rest() -> None:
    reply = json.dumps([
        {"action": "noop"},
        {"action": "create", "level": "team", "type": "project_knowledge", "title": "t",
         "content": "c"},
        OPS[0],
        {"action": "delete", "level": "user", "filename": "../../etc/passwd.md"},
    ])
    valid, rejected = parse_operations(reply)
    assert [op.title for op in valid] == ["Build"]
    assert [r.index for r in rejected] == [1, 3]
    assert "operation 2: unknown level 'team'" in str(rejected[0])


# -- secrets ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "the key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
    "OPENAI key sk-proj-ABCDEFGHIJKLMNOPQRSTUV1234",
    "aws AKIAIOSFODNN7EXAMPLE",
    "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIE...",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "db password=hunter22",
    "PASSWORD: 'correct horse'",
    "connect to postgres://admin:s3cret@db.internal/app",
    "api_key = 'A1b2C3d4E5f6G7h8I9j0'",
])
def test_secrets_are_detected(text: str) -> None:
    assert find_secret(text) is not None


@pytest.mark.parametrize("text", [
    "Run make build; the output goes to dist/.",
    "The password field is validated in auth.py",
    "Set ANTHROPIC_API_KEY in the environment; never commit it.",
    "api_key = os.environ.get('KEY')",
    "Use the skeleton sk-template from docs",
])
def test_ordinary_text_is_not_a_secret(text: str) -> None:
    assert find_secret(text) is None


def test_secret_content_is_refused_without_echoing_it() -> None:
    reason = check_operation({"action": "create", "level": "user", "type": "user_preference",
                              "title": "Keys", "content": "my key: AKIAIOSFODNN7EXAMPLE"})
    assert isinstance(reason, str) and "AWS access key" in reason
    assert "AKIA" not in reason


# -- the prompt ------------------------------------------------------------------------------
def test_update_prompt_treats_user_profile_as_memory() -> None:
    messages = [Message(role="user", content="我是一名 Go 工程师，想学习 AI Agent。"),
                Message(role="assistant", content="好的。")]
    system, prompt = build_update_prompt("- [p] P — s (p.md)\n", "", messages)
    for phrase in ("explicit user self-disclosure", "Go engineer", "computer-science student",
                   "AI Agent", "User Profile", "filename"):
        assert phrase in prompt
    assert "我是一名 Go 工程师，想学习 AI Agent。" in prompt
    assert "[project index]\n- [p] P — s (p.md)" in prompt
    assert "[user index]\n(empty)" in prompt
    assert "Do not call tools" in system


def test_long_tool_results_are_shortened() -> None:
    messages = [
        Message(role="user", content="read it"),
        Message(role="assistant", tool_calls=[ToolCall("c1", "read_file", {"path": "big.txt"})]),
        Message(role="user", tool_result=ToolResult("c1", "read_file", "x" * 100_000)),
        Message(role="assistant", content="done"),
    ]
    text = render_transcript(messages)
    assert "x" * TOOL_RESULT_CHARS in text and "x" * (TOOL_RESULT_CHARS + 1) not in text
    assert "[tool call] read_file" in text and "big.txt" in text
    assert "role=tool_result name=read_file" in text
    assert len(text) < 2_000


def test_huge_transcripts_keep_the_request_and_the_latest_messages() -> None:
    messages = [Message(role="user", content="the original request")]
    messages += [Message(role="assistant", content=f"step {i} " + "y" * 5_000)
                 for i in range(100)]
    text = render_transcript(messages)
    assert text.startswith("role=user\nthe original request")
    assert "messages omitted" in text and "step 99 " in text and "step 0 " not in text
    assert len(text) <= 125_000
