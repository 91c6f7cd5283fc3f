"""The compaction runtime: automatic compaction, its circuit breaker and manual compaction,
against the fake model through the real Anthropic SDK (SPEC §4)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from pseudoclaude.compact.estimate import estimate_messages
from pseudoclaude.compact.types import ASSUMED_SUMMARY_TOKENS, SUMMARY_OVERHEAD
from pseudoclaude.conversation import Conversation
from pseudoclaude.events import CompactEvent, ErrorEvent, WarningEvent
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.types import Message


def test_breaker_trips_after_three_failures_and_manual_still_works(
        harness: Any, big_history: Callable[..., Conversation],
        summary_rule: dict[str, Any]) -> None:
    failing = {"when": {"has_tools": False}, "reply": {"error": "server_error"}, "times": 3}
    with FakeModelServer({"rules": [failing, summary_rule]}) as fake:
        h = harness(fake, window=8_000, conversation=big_history())
        for _ in range(3):
            asyncio.run(h.runtime.manage_context())  # each fails, none raises
        assert len(fake.requests) == 3
        assert h.runtime.tripped and h.runtime.state().auto_compact_tripped
        errors = [e for e in h.events if isinstance(e, ErrorEvent)]
        assert len(errors) == 3 and "(3/3)" in errors[-1].message
        announcements = [e for e in h.events if isinstance(e, WarningEvent)]
        assert len(announcements) == 1 and "off" in announcements[0].message
        asyncio.run(h.runtime.manage_context())
        assert len(fake.requests) == 3  # the fourth makes no request
        outcome = asyncio.run(h.runtime.compact())
        assert outcome.summarized and len(fake.requests) == 4
        assert not h.runtime.tripped and h.runtime.failures == 0  # manual success re-arms


def test_manual_success_rearms_auto(harness: Any, big_history: Callable[..., Conversation],
                                    summary_rule: dict[str, Any], summary_requests: Any) -> None:
    failing = {"when": {"has_tools": False}, "reply": {"error": "server_error"}, "times": 3}
    with FakeModelServer({"rules": [failing, summary_rule]}) as fake:
        h = harness(fake, window=8_000, conversation=big_history())
        for _ in range(3):
            asyncio.run(h.runtime.manage_context())
        asyncio.run(h.runtime.compact("focus on the parser changes"))
        assert "focus on the parser changes" in json.dumps(fake.requests[-1]["body"])
        for i in range(12):  # the history grows again past the threshold
            h.conversation.append(Message(role="user" if i % 2 else "assistant",
                                          content="y" * 2000))
        asyncio.run(h.runtime.manage_context())
        summaries = [e for e in h.events if isinstance(e, CompactEvent) and e.layer == 2]
        assert len(summaries) == 2  # the manual one, then auto compaction ran again
        assert len(summary_requests(fake)) >= 5


def test_manual_with_nothing_old_is_not_summarized(harness: Any,
                                                   summary_rule: dict[str, Any]) -> None:
    with FakeModelServer({"rules": [summary_rule]}) as fake:
        h = harness(fake)
        h.conversation.add_user("hi")
        h.conversation.add_assistant("hello")
        outcome = asyncio.run(h.runtime.compact())
        assert not outcome.summarized and fake.requests == []


def test_a_small_window_does_not_compact_every_turn(harness: Any, summary_rule: dict[str, Any],
                                                    summary_requests: Any) -> None:
    with FakeModelServer({"rules": [summary_rule]}) as fake:
        h = harness(fake, window=20_000)
        turns = 60
        for i in range(turns):  # a turn: the user asks, the model answers ~1.2k tokens
            h.conversation.add_user(f"question {i}")
            asyncio.run(h.runtime.manage_context())
            h.conversation.add_assistant("a" * 4_000)
        compactions = len(summary_requests(fake))
        assert 1 <= compactions <= turns // 5
        assert h.runtime.estimate() < h.runtime.config.threshold
        assert h.runtime.failures == 0


def small_old_part() -> Conversation:
    """A first message of about 145 tokens before a recent window of five: larger than the
    summary pair's fixed text (109 tokens), smaller than that plus half of itself."""
    conv = Conversation()
    conv.add_user("m0 " + "x" * 500)
    for i in range(1, 6):
        conv.append(Message(role="assistant" if i % 2 else "user", content=f"m{i} " + "x" * 1_000))
    return conv


def test_the_preview_says_what_the_compaction_then_does_for_a_small_old_part(
        harness: Any, summary_rule: dict[str, Any]) -> None:
    """An old part no larger than its estimated summary (half of it, plus the summary pair)
    cannot shrink: the preview says so (``would not shrink``, never "would summarize" to a
    larger estimate), and the compaction agrees without a model call; its outcome says
    why."""
    with FakeModelServer({"rules": [summary_rule]}) as fake:
        h = harness(fake, window=8_000, conversation=small_old_part())
        before = h.conversation.messages()
        plan = asyncio.run(h.runtime.preview())
        assert not plan.would_summarize and plan.reason == "would not shrink", plan
        assert plan.estimated_after_tokens <= plan.before_tokens
        outcome = asyncio.run(h.runtime.compact())
        assert plan.would_summarize is outcome.summarized is False
        assert outcome.reason == "would not shrink"
        assert fake.requests == [] and h.conversation.messages() == before


def test_a_small_old_part_is_summarized_when_its_summary_would_be_smaller(
        harness: Any, big_history: Callable[..., Conversation],
        summary_rule: dict[str, Any]) -> None:
    """An old part smaller than 2,000 tokens but larger than its estimated summary: the
    preview estimates fewer tokens after, and the compaction summarises it."""
    with FakeModelServer({"rules": [summary_rule]}) as fake:
        h = harness(fake, window=8_000, conversation=big_history(8, 1_000))
        plan = asyncio.run(h.runtime.preview())
        assert fake.requests == []
        assert plan.would_summarize and plan.estimated_after_tokens < plan.before_tokens
        outcome = asyncio.run(h.runtime.compact())
        assert plan.would_summarize is outcome.summarized is True
        assert len(h.conversation.messages()) == 2 + plan.kept_messages


def test_the_preview_never_promises_a_larger_context(
        harness: Any, big_history: Callable[..., Conversation]) -> None:
    """Whatever the history, a preview that would summarise estimates fewer tokens after
    than before, and one that would not says why."""
    for n in (4, 8, 12, 20, 40):
        for size in (100, 1_000, 3_000, 8_000):
            h = harness(None, window=8_000, conversation=big_history(n, size))
            plan = asyncio.run(h.runtime.preview())
            if plan.would_summarize:
                assert plan.estimated_after_tokens < plan.before_tokens, (n, size, plan)
            else:
                assert plan.reason in ("nothing to summarize", "would not shrink"), plan


def test_the_preview_plans_on_the_history_layer1_leaves_not_the_raw_one(
        harness: Any, call: Callable[..., Message], result: Callable[..., Message],
        summary_rule: dict[str, Any]) -> None:
    """Guards the preview's Layer-1 simulation (``compact/dryrun.py``): a result over
    ``single_result_bytes`` in the recent window is planned as its preview, so the preview's
    kept window (messages and tokens) is the one the real compaction keeps."""
    conv = Conversation()
    for i in range(16):
        conv.append(Message(role="user" if i % 2 == 0 else "assistant",
                            content=f"m{i} " + "x" * 4_000))
    conv.add_user("read the log")
    conv.append(call("c1"))
    conv.append(result("c1", "L" * 60_000))  # over the 50,000-byte single limit: spilled
    conv.add_assistant("done")
    original = conv.messages()
    with FakeModelServer({"rules": [summary_rule]}) as fake:
        h = harness(fake, conversation=conv)
        plan = asyncio.run(h.runtime.preview())
        assert plan.would_summarize and plan.spill.results == 1
        assert fake.requests == [] and h.conversation.messages() == original
        outcome = asyncio.run(h.runtime.compact())
    assert outcome.summarized and outcome.offloaded == 1
    kept = h.conversation.messages()[2:]
    spilled = [m.tool_result for m in kept if m.tool_result is not None]
    assert [r.content[:20] for r in spilled] == ["[content offloaded] "]  # kept, as a preview
    assert plan.kept_messages == len(kept) > 5  # not cut short by the raw 60,000 bytes
    assert plan.summarized_messages == plan.first_kept_index == len(original) - len(kept)
    assert kept[0] == original[plan.first_kept_index]
    # the kept part's tokens in the preview's estimate (old part > the assumed summary size)
    preview_kept = plan.estimated_after_tokens - SUMMARY_OVERHEAD - ASSUMED_SUMMARY_TOKENS
    assert abs(preview_kept - estimate_messages(kept)) <= 2  # ceil() of three terms
