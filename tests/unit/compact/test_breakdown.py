"""The context breakdown (SPEC §11): ten categories that add up exactly to the estimate of
the whole next request (system prompt, rules, memory, tool schemas, messages), before and after
the provider's anchor, after a Layer-1 spill and after a summary; never negative; kept
incrementally."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pseudoclaude.compact import CompactConfig, CompactRuntime, layer2
from pseudoclaude.compact.breakdown import CATEGORIES, TokenBreakdown, scale
from pseudoclaude.compact.estimate import message_bytes, message_parts, tokens_for_bytes
from pseudoclaude.conversation import Conversation
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.types import Message, ToolCall, ToolResult, Usage

OVERHEAD = {"system": 3_500, "rules": 700, "memory": 350, "tools": 7_000}
WINDOW = 200_000


def counts(b: TokenBreakdown) -> dict[str, int]:
    return {name: getattr(b, name) for name in CATEGORIES}


def check(runtime: CompactRuntime) -> TokenBreakdown:
    """The state's breakdown, with what must always hold."""
    state = runtime.state()
    b = state.breakdown
    assert b.total == state.estimated_tokens == runtime.estimate()
    assert all(v >= 0 for v in (*counts(b).values(), b.free, b.reserved))
    assert b.free == max(0, state.context_window - state.estimated_tokens)
    assert b.reserved == runtime.config.reserved
    return b


def conversation_with_tools(call: Callable[..., Message], result: Callable[..., Message]
                            ) -> Conversation:
    conv = Conversation()
    conv.add_user("read x and tell me")
    conv.append(call("c1"))
    conv.append(result("c1", "file content " * 40))
    conv.add_assistant("x holds the file content")
    return conv


def test_message_parts_add_up_to_message_bytes() -> None:
    messages = [
        Message(role="user", content="héllo"),
        Message(role="assistant", content="t", tool_calls=[ToolCall("i", "n", {"a": "é"})]),
        Message(role="assistant", tool_calls=[ToolCall("i", "n", "raw {")]),
        Message(role="user", tool_result=ToolResult("i", "n", "ü" * 9, is_error=True)),
    ]
    for m in messages:
        assert sum(message_parts(m)) == message_bytes(m)


def test_before_an_anchor_it_is_the_byte_estimate_of_the_whole_request(
        harness: Any, call: Callable[..., Message], result: Callable[..., Message]) -> None:
    h = harness(None, conversation=conversation_with_tools(call, result))
    messages = h.conversation.messages()
    assert check(h.runtime).total == tokens_for_bytes(sum(message_bytes(m) for m in messages))
    h.runtime.set_request_overhead(**OVERHEAD)
    whole = sum(OVERHEAD.values()) + sum(message_bytes(m) for m in messages)
    assert h.runtime.estimate() == tokens_for_bytes(whole)
    b = check(h.runtime)
    # 3.5 bytes a token: each category is its bytes / 3.5, give or take the rounding
    for name, size in OVERHEAD.items():
        assert abs(getattr(b, name) - size / 3.5) <= 1, name
    text = sum(message_parts(m)[0] for m in (messages[0], messages[3]))
    calls = sum(message_parts(messages[1]))  # a tool-call message without text: all of it
    carried = message_bytes(messages[2])
    for got, size in ((b.messages, text), (b.tool_calls, calls), (b.tool_results, carried)):
        assert abs(got - size / 3.5) <= 1, (got, size)
    assert b.summary == b.spilled == 0
    assert (b.free, b.reserved) == (WINDOW - b.total, 33_000)


def test_after_an_anchor_the_categories_are_scaled_to_it(
        harness: Any, call: Callable[..., Message], result: Callable[..., Message]) -> None:
    h = harness(None, conversation=conversation_with_tools(call, result))
    h.runtime.set_request_overhead(**OVERHEAD)
    h.runtime.record_usage(Usage(input_tokens=30_000, output_tokens=40, cache_read=2_000,
                                 cache_write=1_000))
    assert check(h.runtime).total == 33_040
    h.conversation.add_user("and y?")  # after the anchor: its byte estimate is added
    estimate = 33_040 + tokens_for_bytes(message_bytes(Message(role="user", content="and y?")))
    b = check(h.runtime)
    assert b.total == estimate
    # the provider counted about 2.6 times more than the bytes say: every category grows
    assert b.system > 2 * 1_000 and b.tools > 2 * 2_000 and b.tool_results > 0


def test_an_anchor_far_below_the_bytes_never_gives_a_negative_count(harness: Any) -> None:
    h = harness(None, conversation=Conversation([Message(role="user", content="x" * 9_000)]))
    h.runtime.set_request_overhead(**OVERHEAD)
    h.runtime.record_usage(Usage(input_tokens=1))
    b = check(h.runtime)
    assert b.total == 1 and b.messages == 1  # the largest share takes the one token


def test_a_spill_moves_the_result_from_tool_results_to_spilled(
        harness: Any, call: Callable[..., Message], result: Callable[..., Message]) -> None:
    h = harness(None)
    h.runtime.set_request_overhead(**OVERHEAD)
    h.conversation.add_user("read it")
    h.conversation.append(call("big"))
    h.runtime.record_usage(Usage(input_tokens=5_000, output_tokens=20))
    h.conversation.append(result("big", "w" * 70_000))
    before = check(h.runtime)
    assert before.tool_results > 19_000 and before.spilled == 0
    asyncio.run(h.runtime.manage_context())  # Layer 1 spills it
    after = check(h.runtime)
    assert after.tool_results == 0 and 0 < after.spilled < 1_000
    preview = h.conversation.messages()[-1]
    assert after.total == 5_020 + tokens_for_bytes(message_bytes(preview))
    # the same numbers as counting the spilled conversation afresh (same ledger and anchor)
    fresh = CompactRuntime(h.conversation, config=CompactConfig(window=WINDOW),
                           spill_dir=h.spill_dir, ledger=h.runtime.ledger)
    fresh.set_request_overhead(**OVERHEAD)
    fresh.restore_anchor(5_020, 2)
    assert fresh.state() == h.runtime.state()


def test_a_kept_result_stays_under_tool_results(
        harness: Any, call: Callable[..., Message], result: Callable[..., Message]) -> None:
    h = harness(None, conversation=conversation_with_tools(call, result))
    asyncio.run(h.runtime.manage_context())  # small: kept verbatim
    assert h.runtime.ledger.kept == {"c1"}
    b = check(h.runtime)
    assert b.tool_results > 0 and b.spilled == 0


def test_a_summary_and_its_acknowledgement_count_as_summary(harness: Any) -> None:
    recent = [Message(role="user", content="now fix the parser"),
              Message(role="assistant", content="done")]
    h = harness(None, conversation=Conversation(
        layer2.assemble("we were fixing things " * 30, recent)))
    h.runtime.set_request_overhead(**OVERHEAD)
    b = check(h.runtime)
    summary_pair = h.conversation.messages()[:2]
    assert abs(b.summary - sum(message_bytes(m) for m in summary_pair) / 3.5) <= 1
    assert abs(b.messages - sum(message_bytes(m) for m in recent) / 3.5) <= 1


def test_after_a_compaction_the_summary_category_is_counted(
        harness: Any, big_history: Callable[..., Conversation],
        summary_rule: dict[str, Any]) -> None:
    with FakeModelServer({"rules": [summary_rule]}) as fake:
        h = harness(fake, conversation=big_history(40, 2_000), window=60_000)
        h.runtime.set_request_overhead(**OVERHEAD)
        h.runtime.record_usage(Usage(input_tokens=30_000))
        assert check(h.runtime).summary == 0
        result = asyncio.run(h.runtime.compact())
    assert result.summarized
    b = check(h.runtime)  # a replace: the full byte estimate again, overhead included
    assert b.summary > 0 and abs(b.system - 1_000) <= 1 and abs(b.tools - 2_000) <= 1
    assert b.total == result.after_tokens


def test_free_is_never_below_zero_and_reserved_follows_small_window_caps(harness: Any) -> None:
    h = harness(None, window=8_000,
                conversation=Conversation([Message(role="user", content="y" * 69_996)]))
    b = check(h.runtime)
    assert b.total == 20_000 and b.free == 0
    assert b.reserved == 8_000 // 4 + 8_000 // 8 == h.runtime.config.reserved
    assert harness(None).runtime.state().breakdown.reserved == 20_000 + 13_000


def test_incremental_counts_equal_a_fresh_count(
        harness: Any, call: Callable[..., Message], result: Callable[..., Message]) -> None:
    h = harness(None)
    h.runtime.set_request_overhead(**OVERHEAD)
    for i in range(30):
        h.conversation.add_user(f"question {i} " + "q" * (i * 37))
        if i % 3 == 0:
            h.conversation.append(call(f"c{i}"))
            h.conversation.append(result(f"c{i}", "r" * (i * 101)))
        h.conversation.add_assistant(f"answer {i}")
        check(h.runtime)  # one sync per step
    fresh = CompactRuntime(h.conversation, config=CompactConfig(window=WINDOW),
                           spill_dir=h.spill_dir)
    fresh.set_request_overhead(**OVERHEAD)
    assert fresh.state() == h.runtime.state()
    # a replace starts a new generation: counted afresh
    h.conversation.replace("compact", layer2.assemble("short", h.conversation.messages()[-2:]))
    b = check(h.runtime)
    assert b.tool_results == 0 and b.summary > 0


@given(st.lists(st.integers(min_value=-5, max_value=10**7), min_size=9, max_size=9),
       st.integers(min_value=0, max_value=10**6))
def test_scale_adds_up_exactly_and_is_never_negative(byte_counts: list[int], total: int) -> None:
    out = scale(byte_counts, total)
    assert sum(out) == total and all(v >= 0 for v in out)
    for count, got in zip(byte_counts, out, strict=True):
        if count <= 0:
            assert got == 0 or sum(max(0, c) for c in byte_counts) == 0
        else:  # within one token of its exact share
            assert abs(got - count * total / sum(max(0, c) for c in byte_counts)) < 1
