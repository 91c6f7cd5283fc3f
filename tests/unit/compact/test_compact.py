"""Compaction against the fake model through the real Anthropic SDK (SPEC §4)."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.compact import CompactConfig, CompactRuntime, Ledger
from pseudoclaude.compact.estimate import Anchor, estimate_messages
from pseudoclaude.compact.layer2 import (
    BOUNDARY_REMINDER,
    extract_summary,
    fit,
    recent_start,
    units,
)
from pseudoclaude.compact.preview import make_preview, safe_name, utf8_head
from pseudoclaude.config import Secret
from pseudoclaude.conversation import Conversation
from pseudoclaude.events import CompactEvent, ErrorEvent, Event, WarningEvent
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.provider import Provider, ProviderOptions, create_provider
from pseudoclaude.llm.types import Message, ToolCall, ToolResult, Usage
from pseudoclaude.session import SessionStore, load_session, new_session, resume_session

SUMMARY_RULE = {"when": {"has_tools": False},
                "reply": {"text": "<analysis>private notes</analysis>"
                                  "<summary>public summary</summary>"}}


def call(call_id: str, name: str = "read_file") -> Message:
    return Message(role="assistant", tool_calls=[ToolCall(call_id, name, {"path": "x"})])


def result(call_id: str, content: str, name: str = "read_file") -> Message:
    return Message(role="user", tool_result=ToolResult(call_id, name, content))


def provider_source(fake: FakeModelServer) -> Callable[[], Awaitable[Provider]]:
    cache: list[Provider] = []

    async def source() -> Provider:
        if not cache:
            cache.append(await create_provider(ProviderOptions(
                provider="anthropic", model="claude-test", api_key=Secret("sk-test"),
                base_url=fake.base_url, max_retries=0, read_timeout=5.0)))
        return cache[0]

    return source


class Harness:
    def __init__(self, tmp: Path, fake: FakeModelServer | None, window: int = 200_000,
                 conversation: Conversation | None = None, ledger: Ledger | None = None,
                 **config: Any) -> None:
        self.workspace = tmp / "ws"
        self.workspace.mkdir(exist_ok=True)
        self.spill_dir = self.workspace / ".PseudoClaude" / "sessions" / "s" / "tool-results"
        self.events: list[Event] = []
        self.conversation = conversation or Conversation()
        self.runtime = CompactRuntime(
            self.conversation, config=CompactConfig(window=window, **config),
            spill_dir=self.spill_dir, workspace=self.workspace,
            provider=provider_source(fake) if fake else None, emit=self.events.append,
            ledger=ledger)

    def contents(self) -> list[str]:
        return [m.tool_result.content for m in self.conversation.messages() if m.tool_result]


def summary_requests(fake: FakeModelServer) -> list[dict[str, Any]]:
    return [r for r in fake.requests if not r["body"].get("tools")]


# -- estimate, preview, pure Layer-2 helpers -------------------------------------------------

def test_estimate_and_anchor() -> None:
    assert estimate_messages([Message(role="user", content="hello")]) == 3  # ceil(9 / 3.5)
    tool = Message(role="user", tool_result=ToolResult("c1", "read_file", "abc", False))
    assert estimate_messages([tool]) == 7  # user 4 + c1 2 + read_file 9 + abc 3 + false 5
    assert Anchor.from_usage(Usage(10, 20, 30, 40), 3) == Anchor(100, 3)
    assert Anchor.from_usage(Usage(), 3) is None


def test_preview_format_and_utf8_head() -> None:
    content = "é" * 3000 + "\n" + "tail"
    preview = make_preview(content, ".PseudoClaude/sessions/s/tool-results/c1.txt")
    lines = preview.split("\n")
    assert lines[0] == f"[content offloaded] original size: {len(content.encode())} bytes"
    assert lines[1] == "[saved to] .PseudoClaude/sessions/s/tool-results/c1.txt"
    assert lines[2] == "[head preview]"
    head = lines[3]
    assert len(head.encode()) <= 2048 and head == "é" * 1024
    assert lines[4] == "" and "read_file" in lines[5]
    assert utf8_head("\n".join(str(i) for i in range(30))) == "\n".join(
        str(i) for i in range(20))
    assert safe_name("call/1 ü..x") == "call_1_..x" and safe_name("..") == "tool-result"


def test_extract_summary() -> None:
    assert extract_summary("<analysis>a</analysis>\n<summary>public summary</summary>") == (
        "public summary")
    assert extract_summary("<summary>old</summary> then <summary> new </summary>") == "new"
    assert extract_summary("<analysis>thinking</analysis>plain reply") == "plain reply"
    with pytest.raises(Exception, match="empty"):
        extract_summary("<summary>  </summary>")


def test_recent_window_starts_at_the_tool_call_not_its_result() -> None:
    messages = [Message(role="user", content="a"), call("c1"), result("c1", "x" * 35_000),
                Message(role="assistant", content="b"), Message(role="user", content="c"),
                Message(role="assistant", content="d"), Message(role="user", content="e")]
    assert recent_start(messages) == 1
    assert messages[recent_start(messages)].tool_calls


def test_fit_drops_whole_rounds_oldest_first() -> None:
    old = [Message(role="user", content="u" * 4000), call("c1"), result("c1", "r" * 4000),
           call("c2"), result("c2", "s" * 4000), Message(role="user", content="last")]
    groups = units(old)
    assert [len(g) for g in groups] == [1, 2, 2, 1]
    kept, dropped = fit(groups, budget_tokens=2500)
    assert dropped == 3 and [len(g) for g in kept] == [2, 1]
    assert kept[0][0].tool_calls[0].id == "c2"


# -- Layer 1 --------------------------------------------------------------------------------

def test_single_large_result_spilled_and_its_preview_reused(tmp_path: Path) -> None:
    h = Harness(tmp_path, None)
    h.conversation.add_user("read it")
    h.conversation.append(call("call_1"))
    original = "a" * 50_001
    h.conversation.append(result("call_1", original))
    asyncio.run(h.runtime.manage_context())
    spilled = h.spill_dir / "call_1.txt"
    assert spilled.read_text() == original
    preview = h.contents()[0]
    assert preview.startswith("[content offloaded] original size: 50001 bytes\n")
    assert ".PseudoClaude/sessions/s/tool-results/call_1.txt" in preview
    assert next(e for e in h.events if isinstance(e, CompactEvent)).offloaded == 1
    # the same result comes back with other content: it shows the same preview
    h.conversation.replace("import", [Message(role="user", content="again"), call("call_1"),
                                      result("call_1", "b" * 50_010)])
    asyncio.run(h.runtime.manage_context())
    assert h.contents() == [preview]
    assert spilled.read_text() == original  # never overwritten


def test_failed_spill_is_retried_after_repair(tmp_path: Path) -> None:
    h = Harness(tmp_path, None)
    h.spill_dir.parent.mkdir(parents=True)
    h.spill_dir.write_text("a file where the folder should be")
    h.conversation.append(call("call_1"))
    h.conversation.append(result("call_1", "a" * 60_000))
    asyncio.run(h.runtime.manage_context())  # never raises
    assert h.contents() == ["a" * 60_000]
    assert any(isinstance(e, WarningEvent) and "could not spill" in e.message
               for e in h.events)
    assert "call_1" not in h.runtime.ledger.kept  # still undecided
    h.spill_dir.unlink()
    asyncio.run(h.runtime.manage_context())
    assert h.contents()[0].startswith("[content offloaded]")


def test_aggregate_limit_spills_only_the_largest(tmp_path: Path) -> None:
    h = Harness(tmp_path, None)
    sizes = [49_000, 48_000, 47_000, 46_000, 45_000]
    h.conversation.append(Message(role="assistant", tool_calls=[
        ToolCall(f"c{i}", "read_file", {}) for i in range(5)]))
    for i, size in enumerate(sizes):
        h.conversation.append(result(f"c{i}", "z" * size))
    asyncio.run(h.runtime.manage_context())
    contents = h.contents()
    assert contents[0].startswith("[content offloaded]")
    assert contents[1:] == ["z" * s for s in sizes[1:]]
    assert h.runtime.ledger.kept == {"c1", "c2", "c3", "c4"}


def test_decisions_are_logged_and_survive_resume_without_respilling(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "ws" / ".PseudoClaude")
    opened = new_session(store, model="m")
    conv = opened.conversation
    conv.add_user("go")
    conv.append(call("c1"))
    conv.append(result("c1", "q" * 70_000))
    conv.append(call("c2"))
    conv.append(result("c2", "small"))
    spill = store.spill_dir(opened.session_id)
    runtime = CompactRuntime(conv, config=CompactConfig(window=200_000), spill_dir=spill,
                             workspace=tmp_path / "ws")
    asyncio.run(runtime.manage_context())
    opened.writer.close()
    lines = [json.loads(x) for x in store.log_path(opened.session_id).read_text().splitlines()]
    assert [x["type"] for x in lines[-2:]] == ["offload", "keep"]
    assert lines[-1]["call_ids"] == ["c2"]
    before = conv.messages()
    mtime = (spill / "c1.txt").stat().st_mtime_ns

    resumed = resume_session(store, opened.session_id)
    assert resumed.loaded is not None
    ledger = Ledger(resumed.loaded.offloads, resumed.loaded.kept)
    assert ledger.decided("c1") and ledger.decided("c2")
    events: list[Event] = []
    runtime2 = CompactRuntime(resumed.conversation, config=CompactConfig(window=200_000),
                              spill_dir=spill, workspace=tmp_path / "ws", ledger=ledger,
                              emit=events.append)
    asyncio.run(runtime2.manage_context())
    resumed.writer.close()
    assert resumed.conversation.messages() == before
    assert not events
    assert (spill / "c1.txt").stat().st_mtime_ns == mtime
    assert sorted(p.name for p in spill.iterdir()) == ["c1.txt"]
    after = store.log_path(opened.session_id).read_text().splitlines()
    assert len(after) == len(lines)  # nothing re-decided, nothing re-logged


def test_layer1_is_incremental_and_keeps_the_anchor(tmp_path: Path) -> None:
    h = Harness(tmp_path, None)
    h.conversation.add_user("q")
    h.conversation.append(call("c1"))
    h.runtime.record_usage(Usage(input_tokens=1000, output_tokens=50))
    assert h.runtime.estimate() == 1050
    h.conversation.append(result("c1", "w" * 70_000))
    grown = h.runtime.estimate()
    assert grown == 1050 + estimate_messages([result("c1", "w" * 70_000)])
    asyncio.run(h.runtime.manage_context())
    preview = h.conversation.messages()[-1]
    assert h.runtime.estimate() == 1050 + estimate_messages([preview])


# -- Layer 2 through the fake model ---------------------------------------------------------

def big_history(n: int = 12, size: int = 2000) -> Conversation:
    conv = Conversation()
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        conv.append(Message(role=role, content=f"m{i} " + "x" * size))  # type: ignore[arg-type]
    return conv


def test_auto_compaction_before_an_ordinary_request_puts_the_summary_first(
        tmp_path: Path) -> None:
    with FakeModelServer({"rules": [SUMMARY_RULE]}) as fake:
        h = Harness(tmp_path, fake, window=8_000, conversation=big_history())
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


def test_breaker_trips_after_three_failures_and_manual_still_works(tmp_path: Path) -> None:
    failing = {"when": {"has_tools": False}, "reply": {"error": "server_error"}, "times": 3}
    with FakeModelServer({"rules": [failing, SUMMARY_RULE]}) as fake:
        h = Harness(tmp_path, fake, window=8_000, conversation=big_history())
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


def test_manual_success_rearms_auto(tmp_path: Path) -> None:
    failing = {"when": {"has_tools": False}, "reply": {"error": "server_error"}, "times": 3}
    with FakeModelServer({"rules": [failing, SUMMARY_RULE]}) as fake:
        h = Harness(tmp_path, fake, window=8_000, conversation=big_history())
        for _ in range(3):
            asyncio.run(h.runtime.manage_context())
        asyncio.run(h.runtime.compact("focus on the parser changes"))
        assert "focus on the parser changes" in json.dumps(fake.requests[-1]["body"])
        for i in range(12):  # the history grows again past the threshold
            h.conversation.append(Message(role="user" if i % 2 else "assistant",
                                          content="y" * 2000))
        asyncio.run(h.runtime.manage_context())
        assert len(summary_requests(fake)) == 5  # auto compaction ran again


def test_manual_with_nothing_old_is_not_summarized(tmp_path: Path) -> None:
    with FakeModelServer({"rules": [SUMMARY_RULE]}) as fake:
        h = Harness(tmp_path, fake)
        h.conversation.add_user("hi")
        h.conversation.add_assistant("hello")
        outcome = asyncio.run(h.runtime.compact())
        assert not outcome.summarized and fake.requests == []


def test_summary_input_is_sized_to_the_window_before_the_first_attempt(tmp_path: Path) -> None:
    conv = Conversation()
    for i in range(40):  # 40 rounds of ~14k tokens of results: far more than the window
        conv.add_user(f"task {i}")
        conv.append(call(f"c{i}"))
        conv.append(result(f"c{i}", f"r{i} " + "d" * 48_000))
        conv.add_assistant(f"done {i}")
    with FakeModelServer({"rules": [SUMMARY_RULE]}) as fake:
        h = Harness(tmp_path, fake, window=200_000, conversation=conv,
                    single_result_bytes=10**9, round_bytes=10**9)
        outcome = asyncio.run(h.runtime.compact())
        assert outcome.summarized
        [request] = fake.requests
        text = json.dumps(request["body"])
        assert len(text) / 3.5 < 200_000 - 33_000
        assert "r0 " not in text and "task 0\\n" not in text  # the oldest rounds went
        for i in range(40):  # a call and its result are never split
            assert (f"calls read_file c{i}]" in text) == (f"tool result for read_file c{i}]"
                                                          in text)


def test_prompt_too_long_drops_one_more_round_at_most_three_times(tmp_path: Path) -> None:
    too_long = {"when": {"has_tools": False}, "reply": {"error": "prompt_too_long"}}
    with FakeModelServer({"rules": [{**too_long, "times": 2}, SUMMARY_RULE]}) as fake:
        h = Harness(tmp_path, fake, window=8_000, conversation=big_history(20))
        outcome = asyncio.run(h.runtime.compact())
        assert outcome.summarized and len(fake.requests) == 3
        sizes = [len(json.dumps(r["body"])) for r in fake.requests]
        assert sizes[0] > sizes[1] > sizes[2]
    with FakeModelServer({"rules": [too_long]}) as fake:
        h = Harness(tmp_path, fake, window=8_000, conversation=big_history(20))
        with pytest.raises(Exception, match=r"(?i)too long|context"):
            asyncio.run(h.runtime.compact())
        assert len(fake.requests) == 4  # the first attempt and three retries


def test_a_summary_that_does_not_shrink_is_not_applied(tmp_path: Path) -> None:
    huge = {"when": {"has_tools": False}, "reply": {"text": "<summary>" + "s" * 60_000
                                                            + "</summary>"}}
    with FakeModelServer({"rules": [huge]}) as fake:
        h = Harness(tmp_path, fake, window=8_000, conversation=big_history())
        before = h.conversation.messages()
        outcome = asyncio.run(h.runtime.compact())  # manual: not applied, said, no error
        assert not outcome.summarized and h.conversation.messages() == before
        assert any(isinstance(e, WarningEvent) and "not shrink" in e.message
                   for e in h.events)
        h.conversation.add_user("more " * 2000)  # over the threshold: automatic tries too
        asyncio.run(h.runtime.manage_context())
        assert h.runtime.failures == 1  # and counts it toward the breaker
        assert h.conversation.messages()[:-1] == before


def test_compacting_twice_in_a_row_is_not_an_error(tmp_path: Path) -> None:
    with FakeModelServer({"rules": [SUMMARY_RULE]}) as fake:
        h = Harness(tmp_path, fake, window=8_000, conversation=big_history())
        assert asyncio.run(h.runtime.compact()).summarized
        again = asyncio.run(h.runtime.compact())
        assert not again.summarized and len(fake.requests) == 1  # nothing old but a summary


def test_a_small_window_does_not_compact_every_turn(tmp_path: Path) -> None:
    with FakeModelServer({"rules": [SUMMARY_RULE]}) as fake:
        h = Harness(tmp_path, fake, window=20_000)
        turns = 60
        for i in range(turns):  # a turn: the user asks, the model answers ~1.2k tokens
            h.conversation.add_user(f"question {i}")
            asyncio.run(h.runtime.manage_context())
            h.conversation.add_assistant("a" * 4_000)
        compactions = len(summary_requests(fake))
        assert 1 <= compactions <= turns // 5
        assert h.runtime.estimate() < h.runtime.config.threshold
        assert h.runtime.failures == 0


def test_replace_is_one_line_and_the_ledger_is_recorded_again(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "ws" / ".PseudoClaude")
    opened = new_session(store, model="m")
    conv = opened.conversation
    for i in range(10):
        conv.add_user(f"q{i} " + "x" * 8000)
        conv.append(call(f"c{i}"))
        conv.append(result(f"c{i}", "y" * (60_000 if i == 9 else 100)))
        conv.add_assistant("ok")
    with FakeModelServer({"rules": [SUMMARY_RULE]}) as fake:
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
