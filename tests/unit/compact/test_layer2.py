"""Layer 2: the summary of the older history, against the fake model through the real
Anthropic SDK (SPEC §4)."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.compact import CompactConfig, CompactRuntime
from pseudoclaude.compact.layer2 import (
    chunk,
    extract_summary,
    recent_start,
    stated_maximum,
    units,
)
from pseudoclaude.conversation import Conversation
from pseudoclaude.conversation.summary import BOUNDARY_REMINDER
from pseudoclaude.events import CompactEvent, WarningEvent
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.types import Message
from pseudoclaude.session import SessionStore, load_session, new_session


def test_extract_summary() -> None:
    assert extract_summary("<analysis>a</analysis>\n<summary>public summary</summary>") == (
        "public summary")
    assert extract_summary("<summary>old</summary> then <summary> new </summary>") == "new"
    assert extract_summary("<analysis>thinking</analysis>plain reply") == "plain reply"
    with pytest.raises(Exception, match="empty"):
        extract_summary("<summary>  </summary>")


def test_recent_window_starts_at_the_tool_call_not_its_result(
        call: Callable[..., Message], result: Callable[..., Message]) -> None:
    messages = [Message(role="user", content="a"), call("c1"), result("c1", "x" * 35_000),
                Message(role="assistant", content="b"), Message(role="user", content="c"),
                Message(role="assistant", content="d"), Message(role="user", content="e")]
    assert recent_start(messages) == 1
    assert messages[recent_start(messages)].tool_calls


def test_chunks_hold_whole_rounds_oldest_first(call: Callable[..., Message],
                                               result: Callable[..., Message]) -> None:
    old = [Message(role="user", content="u" * 4000), call("c1"), result("c1", "r" * 4000),
           call("c2"), result("c2", "s" * 4000), Message(role="user", content="last")]
    groups = units(old)
    assert [len(g) for g in groups] == [1, 2, 2, 1]
    chunks = chunk(groups, budget_tokens=2_500)
    assert len(chunks) > 1
    assert [m for c in chunks for g in c for m in g] == old  # nothing dropped, order kept
    for c in chunks:  # a call and its results always travel together
        for g in c:
            assert g in groups


def test_a_round_too_large_for_any_chunk_goes_in_shortened(
        call: Callable[..., Message], result: Callable[..., Message]) -> None:
    huge = [call("c1"), result("c1", "z" * 400_000)]
    [[group]] = chunk(units(huge), budget_tokens=5_000)
    assert group[0] == huge[0] and group[1].tool_result is not None
    assert "more bytes of this result left out" in group[1].tool_result.content
    assert len(group[1].tool_result.content) < 3_000


def test_the_stated_maximum_of_a_prompt_too_long_error() -> None:
    assert stated_maximum("prompt is too long: 215000 tokens > 200000 maximum") == 200_000
    assert stated_maximum("This model's maximum context length is 128000 tokens. However, "
                          "your messages resulted in 130,000 tokens.") == 128_000
    assert stated_maximum("prompt is too long") is None


def test_auto_compaction_before_an_ordinary_request_puts_the_summary_first(
        harness: Any, big_history: Callable[..., Conversation],
        summary_rule: dict[str, Any]) -> None:
    with FakeModelServer({"rules": [summary_rule]}) as fake:
        h = harness(fake, window=8_000, conversation=big_history())
        before = h.runtime.estimate()
        asyncio.run(h.runtime.manage_context())
        [request] = fake.requests
        assert "tools" not in request["body"]
        assert "<summary>" in json.dumps(request["body"])
        messages = h.conversation.messages()
        assert messages[0].role == "user" and messages[0].content.startswith("public summary")
        assert BOUNDARY_REMINDER in messages[0].content
        assert "private notes" not in messages[0].content
        assert messages[1].role == "assistant"
        assert messages[-1].content.startswith("m11 ")
        [event] = [e for e in h.events if isinstance(e, CompactEvent)]
        assert event.layer == 2 and event.before_tokens == before
        assert event.after_tokens == h.runtime.estimate() < before


def test_history_larger_than_the_window_is_summarised_in_chunks_never_dropped(
        harness: Any, call: Callable[..., Message], result: Callable[..., Message],
        summary_rule: dict[str, Any]) -> None:
    """SPEC §11 "Compaction at the limit": every request fits the window before the first
    attempt, oldest first, each chunk's summary carried into the next; nothing is left out."""
    conv = Conversation()
    for i in range(40):  # 40 rounds of ~14k tokens of results: far more than the window
        conv.add_user(f"task {i}")
        conv.append(call(f"c{i}"))
        conv.append(result(f"c{i}", f"r{i} " + "d" * 48_000))
        conv.add_assistant(f"done {i}")
    with FakeModelServer({"rules": [summary_rule]}) as fake:
        h = harness(fake, window=200_000, conversation=conv,
                    single_result_bytes=10**9, round_bytes=10**9)
        outcome = asyncio.run(h.runtime.compact())
        assert outcome.summarized
        texts = [json.dumps(r["body"]) for r in fake.requests]
        assert len(texts) > 1
        assert all(len(t) / 3.5 < 200_000 - 33_000 for t in texts)
        assert "<previous-summary>" not in texts[0]
        assert all("<previous-summary>" in t for t in texts[1:])
        summarised = h.conversation.messages()
        start = next(i for i, m in enumerate(conv.messages()) if m == summarised[2])
        for i in range(40):  # every old round went into exactly one request, whole
            if f"task {i}" not in json.dumps([m.content for m in summarised[2:]]):
                holders = [t for t in texts if f"calls read_file c{i}]" in t]
                assert len(holders) == 1, i
                assert f"tool result for read_file c{i}]" in holders[0]
        assert start > 0


def test_prompt_too_long_makes_the_chunk_smaller_at_most_three_times(
        harness: Any, big_history: Callable[..., Conversation],
        summary_rule: dict[str, Any]) -> None:
    too_long = {"when": {"has_tools": False}, "reply": {"error": "prompt_too_long"}}
    with FakeModelServer({"rules": [{**too_long, "times": 2}, summary_rule]}) as fake:
        h = harness(fake, window=8_000, conversation=big_history(20))
        outcome = asyncio.run(h.runtime.compact())
        assert outcome.summarized and len(fake.requests) >= 3
        sizes = [len(json.dumps(r["body"])) for r in fake.requests]
        assert sizes[0] > sizes[1] > sizes[2]  # the failing chunk shrank each time
    with FakeModelServer({"rules": [too_long]}) as fake:
        h = harness(fake, window=8_000, conversation=big_history(20))
        with pytest.raises(Exception, match=r"(?i)too long|context"):
            asyncio.run(h.runtime.compact())
        assert len(fake.requests) == 4  # the first attempt and three retries


def test_a_summary_that_does_not_shrink_is_not_applied(
        harness: Any, big_history: Callable[..., Conversation]) -> None:
    huge = {"when": {"has_tools": False}, "reply": {"text": "<summary>" + "s" * 60_000
                                                            + "</summary>"}}
    with FakeModelServer({"rules": [huge]}) as fake:
        h = harness(fake, window=8_000, conversation=big_history())
        before = h.conversation.messages()
        outcome = asyncio.run(h.runtime.compact())  # manual: not applied, said, no error
        assert not outcome.summarized and h.conversation.messages() == before
        assert outcome.reason == "would not shrink"  # said by the outcome, not a warning
        assert not any(isinstance(e, WarningEvent) for e in h.events)
        h.conversation.add_user("more " * 2000)  # over the threshold: automatic tries too
        asyncio.run(h.runtime.manage_context())
        assert h.runtime.failures == 1  # and counts it toward the breaker
        assert h.conversation.messages()[:-1] == before


def test_compacting_twice_in_a_row_is_not_an_error(harness: Any,
                                                   big_history: Callable[..., Conversation],
                                                   summary_rule: dict[str, Any]) -> None:
    with FakeModelServer({"rules": [summary_rule]}) as fake:
        h = harness(fake, window=8_000, conversation=big_history())
        assert asyncio.run(h.runtime.compact()).summarized
        again = asyncio.run(h.runtime.compact())
        assert not again.summarized and len(fake.requests) == 1  # nothing old but a summary


def test_replace_is_one_line_and_the_ledger_is_recorded_again(tmp_path: Path,
                                                              call: Callable[..., Message],
                                                              result: Callable[..., Message],
                                                              summary_rule: dict[str, Any],
                                                              summary_requests: Any,
                                                              provider_source: Any) -> None:
    store = SessionStore(tmp_path / "ws" / ".PseudoClaude")
    opened = new_session(store, model="m")
    conv = opened.conversation
    for i in range(10):
        conv.add_user(f"q{i} " + "x" * 8000)
        conv.append(call(f"c{i}"))
        conv.append(result(f"c{i}", "y" * (60_000 if i == 9 else 100)))
        conv.add_assistant("ok")
    with FakeModelServer({"rules": [summary_rule]}) as fake:
        runtime = CompactRuntime(conv, config=CompactConfig(window=30_000),
                                 spill_dir=store.spill_dir(opened.session_id),
                                 workspace=tmp_path / "ws", provider=provider_source(fake))
        asyncio.run(runtime.manage_context())  # spills c9, then summarises
        assert summary_requests(fake)
    opened.writer.close()
    lines = [json.loads(x) for x in store.log_path(opened.session_id).read_text().splitlines()]
    kinds = [x["type"] for x in lines]
    assert kinds.count("replace") == 1
    after_replace = kinds[kinds.index("replace") + 1:]
    assert "offload" in after_replace  # c9's decision, recorded again after the replace
    loaded = load_session(store, opened.session_id)
    assert loaded.messages == conv.messages()
    assert "c9" in loaded.offloads
    shutil.rmtree(store.data_dir)


def _marker(message: Message) -> str:
    """How ``message`` starts in a summary request's transcript."""
    if message.tool_calls:
        return f"[assistant calls read_file {message.tool_calls[0].id}] "
    if message.tool_result is not None:
        return f"[tool result for read_file {message.tool_result.call_id}]\n"
    return f"[{message.role}]\n{message.content}\n"


def test_a_prompt_too_long_first_chunk_is_rechunked_alone_and_nothing_is_lost(
        harness: Any, call: Callable[..., Message], result: Callable[..., Message],
        summary_rule: dict[str, Any]) -> None:
    """Guards the re-chunking in ``compact/summarize.py``: when the first of several chunks
    is refused as too long, only that chunk is split again; the later chunks still follow,
    so every old message goes into exactly one accepted summary request."""
    conv = Conversation()
    for i in range(12):  # 12 rounds of ~2k tokens: several chunks in a 20,000-token window
        conv.add_user(f"task {i}")
        conv.append(call(f"c{i}"))
        conv.append(result(f"c{i}", f"r{i} " + "d" * 7_000))
        conv.add_assistant(f"done {i}")
    original = conv.messages()
    too_long = {"when": {"has_tools": False}, "reply": {"error": "prompt_too_long"},
                "times": 1}
    with FakeModelServer({"rules": [too_long, summary_rule]}) as fake:
        h = harness(fake, window=20_000, conversation=conv)
        outcome = asyncio.run(h.runtime.compact())
        requests = fake.requests
    assert outcome.summarized
    assert [r["status"] for r in requests][:1] == [400]
    accepted = ["".join(block["text"] for block in r["body"]["messages"][0]["content"])
                for r in requests if r["status"] == 200]
    assert len(accepted) == len(requests) - 1 >= 3  # the split chunk, then the later ones
    old = original[:len(original) - len(h.conversation.messages()[2:])]
    assert len(old) > 30
    for message in old:
        holders = [i for i, text in enumerate(accepted) if _marker(message) in text]
        assert len(holders) == 1, _marker(message)
        if message.tool_calls:  # a call and its result travel together
            call_id = message.tool_calls[0].id
            assert f"[tool result for read_file {call_id}]\n" in accepted[holders[0]]
