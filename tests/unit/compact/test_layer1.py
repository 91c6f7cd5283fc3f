"""Layer 1: large tool results spilled to files, their previews, and the ledger of
decisions that survives a resume (SPEC §4)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pseudoclaude.compact import CompactConfig, CompactRuntime, Ledger
from pseudoclaude.compact.estimate import estimate_messages
from pseudoclaude.compact.preview import make_preview, safe_name, utf8_head
from pseudoclaude.events import CompactEvent, Event, WarningEvent
from pseudoclaude.llm.types import Message, ToolCall, Usage
from pseudoclaude.session import SessionStore, new_session, resume_session


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


def test_single_large_result_spilled_and_its_preview_reused(harness: Any,
                                                            call: Callable[..., Message],
                                                            result: Callable[..., Message]) -> None:
    h = harness(None)
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


def test_failed_spill_is_retried_after_repair(harness: Any, call: Callable[..., Message],
                                              result: Callable[..., Message]) -> None:
    h = harness(None)
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


def test_aggregate_limit_spills_only_the_largest(harness: Any,
                                                 result: Callable[..., Message]) -> None:
    h = harness(None)
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


def test_decisions_are_logged_and_survive_resume_without_respilling(
        tmp_path: Path, call: Callable[..., Message], result: Callable[..., Message]) -> None:
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


def test_layer1_is_incremental_and_keeps_the_anchor(harness: Any, call: Callable[..., Message],
                                                    result: Callable[..., Message]) -> None:
    h = harness(None)
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


def test_the_single_result_limit_is_strictly_more_than_50000_bytes(
        harness: Any, call: Callable[..., Message], result: Callable[..., Message]) -> None:
    """SPEC §4: a result over the single limit is spilled; exactly 50,000 bytes is kept."""
    h = harness(None)
    h.conversation.add_user("read them")
    h.conversation.append(call("at_limit"))
    h.conversation.append(result("at_limit", "a" * 50_000))
    h.conversation.append(call("over_limit"))
    h.conversation.append(result("over_limit", "a" * 50_001))
    asyncio.run(h.runtime.manage_context())
    kept, spilled = h.contents()
    assert kept == "a" * 50_000
    assert spilled.startswith("[content offloaded] original size: 50001 bytes\n")
    assert not (h.spill_dir / "at_limit.txt").exists()


def test_the_single_result_limit_counts_utf8_bytes_not_characters(
        harness: Any, call: Callable[..., Message], result: Callable[..., Message]) -> None:
    """20,000 Chinese characters are 60,000 UTF-8 bytes: over the limit, though a count of
    characters would say 20,000."""
    h = harness(None)
    h.conversation.add_user("read the Chinese notes")
    h.conversation.append(call("zh"))
    text = "温室" * 10_000
    assert len(text) == 20_000 and len(text.encode()) == 60_000
    h.conversation.append(result("zh", text))
    asyncio.run(h.runtime.manage_context())
    (preview,) = h.contents()
    assert preview.startswith("[content offloaded] original size: 60000 bytes\n")
    assert (h.spill_dir / "zh.txt").read_text(encoding="utf-8") == text
