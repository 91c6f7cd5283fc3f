from __future__ import annotations

import json

from pseudoclaude.llm.types import Message, ToolCall, ToolResult
from pseudoclaude.session.repair import is_valid, repair


def u(text: str) -> Message:
    return Message(role="user", content=text)


def a(text: str = "", *ids: str) -> Message:
    return Message(role="assistant", content=text,
                   tool_calls=[ToolCall(i, "read_file", {}) for i in ids])


def r(call_id: str) -> Message:
    return Message(role="user", tool_result=ToolResult(call_id, "read_file", "ok"))


def test_valid_history_is_untouched() -> None:
    history = [u("q"), a("", "c1", "c2"), r("c1"), r("c2"), a("done")]
    assert repair(history) == (history, 0)
    assert is_valid(history)
    assert not is_valid([a("", "c1"), r("c1"), r("c1")])
    assert not is_valid([a("", "c1", "c2"), r("c1")])
    assert not is_valid([u("q"), r("c1")])


def test_dangling_tail_is_dropped_but_its_text_stays() -> None:
    history = [u("q"), a("let me check", "c1", "c2"), r("c1")]
    fixed, n = repair(history)
    assert n == 1
    assert fixed == [u("q"), Message(role="assistant", content="let me check")]
    fixed, n = repair([u("q"), a("", "c1")])
    assert (fixed, n) == ([u("q")], 1)


def test_dangling_call_in_the_middle_gets_an_interrupted_result() -> None:
    history = [u("q"), a("", "c1", "c2"), r("c2"), u("next"), a("answer")]
    fixed, n = repair(history)
    assert n == 1
    assert fixed[:3] == history[:3]
    synthetic = fixed[3].tool_result
    assert synthetic is not None and synthetic.call_id == "c1" and synthetic.is_error
    assert json.loads(synthetic.content)["error_type"] == "interrupted"
    assert fixed[4:] == history[3:]
    assert is_valid(fixed)


def test_orphan_results_anywhere_are_dropped() -> None:
    history = [r("x0"), u("q"), r("x1"), a("", "c1"), r("c1"), r("c1"), r("x2"), a("ok"), r("x3")]
    fixed, n = repair(history)
    assert fixed == [u("q"), a("", "c1"), r("c1"), a("ok")]
    assert n == 5
    assert is_valid(fixed)


def test_a_role_contradicting_its_fields_is_dropped() -> None:
    bad_call = Message(role="user", tool_calls=[ToolCall("c1", "read_file", {})])
    bad_result = Message(role="assistant", tool_result=ToolResult("c2", "read_file", "x"))
    history = [u("q"), bad_call, r("c1"), a("", "c2"), bad_result, u("next")]
    assert not is_valid(history)
    fixed, n = repair(history)
    assert is_valid(fixed) and n == 4  # bad call, its orphan result, bad result, c2 unanswered
    assert [m.role for m in fixed] == ["user", "assistant", "user", "user"]
    assert json.loads(fixed[2].tool_result.content)["error_type"] == "interrupted"  # type: ignore[union-attr]
