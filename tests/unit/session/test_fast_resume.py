"""Fast resume must not depend on how a valid JSON line is spaced or ordered (issue 12).

Every log here is replayed twice, fast (backward scan to the last replace) and full; both must
reach exactly the same state, and where the log has a valid replace the fast path must start
at it (``Replay.start_offset``), whatever encoder wrote the line.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pseudoclaude.llm.types import Message, ToolCall, ToolResult
from pseudoclaude.session import load_session, replay_file
from pseudoclaude.session import loader as loader_module
from pseudoclaude.session.codec import (
    Entry,
    KeepEntry,
    MessageEntry,
    OffloadEntry,
    ReplaceEntry,
    SessionEntry,
    encode,
)
from pseudoclaude.session.loader import Replay, find_last_replace
from pseudoclaude.session.store import SessionStore

SID = "20260617-120000-abcd"
HEADER = SessionEntry(version=1, id=SID, created="2026-06-17T12:00:00+00:00")


def _reorder(d: dict[str, Any]) -> dict[str, Any]:
    """``type`` last, the other keys reversed."""
    rest = {k: d[k] for k in reversed(d) if k != "type"}
    return {**rest, "type": d["type"]} if "type" in d else rest


STYLES: dict[str, Callable[[Entry], bytes]] = {
    "compact": encode,
    "json_dumps_default": lambda e: json.dumps(msgspec.to_builtins(e)).encode() + b"\n",
    "sort_keys": lambda e: json.dumps(msgspec.to_builtins(e), sort_keys=True).encode() + b"\n",
    "type_last_compact": lambda e: json.dumps(
        _reorder(msgspec.to_builtins(e)), separators=(",", ":"), ensure_ascii=False
    ).encode() + b"\n",
    "type_last_spaced": lambda e: json.dumps(_reorder(msgspec.to_builtins(e))).encode() + b"\n",
    "extra_whitespace": lambda e: b"  " + json.dumps(
        msgspec.to_builtins(e), separators=(" , ", " : ")
    ).replace('{"', '{ "').encode() + b" \t\n",
    "tabs_and_crlf": lambda e: json.dumps(
        _reorder(msgspec.to_builtins(e)), separators=(",\t", "\t:\t")
    ).encode() + b"\r\n",
}
SPACED = [s for s in STYLES if s != "compact"]


def history(n: int = 12, start: int = 0) -> list[Entry]:
    """Tool rounds with an offload and a keep line, and a model stamp."""
    out: list[Entry] = []
    for i in range(start, start + n):
        ts = 100.0 + i
        match i % 5:
            case 0:
                out.append(MessageEntry(role="user", content=f"prompt {i} ✓", ts=ts,
                                        model=f"model-{i}"))
            case 1:
                out.append(MessageEntry(role="assistant", content="looking", ts=ts,
                                        tool_calls=(ToolCall(f"c{i}", "read_file",
                                                             {"path": f"f{i}.py"}),)))
            case 2:
                out.append(MessageEntry(role="user", ts=ts, tool_result=ToolResult(
                    f"c{i - 1}", "read_file", "body " * 40)))
            case 3:
                out.append(OffloadEntry(f"c{i - 2}", f"tool-results/c{i - 2}.txt", 200,
                                        "PREVIEW", ts))
            case _:
                out.append(KeepEntry([f"c{i - 3}"], ts))
    return out


def replace_entry(tag: str, ts: float = 50.0) -> ReplaceEntry:
    return ReplaceEntry(reason="compact", ts=ts, messages=[
        Message(role="user", content=f"summary {tag} 完成"),
        Message(role="assistant", tool_calls=[ToolCall("k1", "read_file", {"path": "k"})]),
        Message(role="user", tool_result=ToolResult("k1", "read_file", "kept result")),
    ])


def write(path: Path, parts: list[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(parts))
    return path


def state(r: Replay) -> tuple[object, ...]:
    return r.messages, r.offloads, r.kept, r.last_ts, r.header


def assert_fast_equals_full(path: Path, start: int | None, **kw: Any) -> Replay:
    """Fast and full replay agree; the fast one starts at ``start`` (None: no replace)."""
    fast, full = replay_file(path, fast=True, **kw), replay_file(path, fast=False, **kw)
    assert state(fast) == state(full)
    assert full.start_offset == 0
    assert fast.start_offset == (0 if start is None else start)
    return fast


@pytest.mark.parametrize("style", list(STYLES))
def test_a_replace_line_in_any_spelling_is_where_fast_resume_starts(
        tmp_path: Path, style: str) -> None:
    head = [encode(HEADER), *(encode(e) for e in history(40))]
    rep = STYLES[style](replace_entry(style))
    tail = [encode(e) for e in history(11, start=40)]
    path = write(tmp_path / "conversation.jsonl", [*head, rep, *tail])
    fast = assert_fast_equals_full(path, sum(map(len, head)))
    assert fast.messages[0].content == f"summary {style} 完成"
    assert fast.bad_lines == 0


@pytest.mark.parametrize("style", SPACED)
def test_a_whole_log_written_by_another_encoder(tmp_path: Path, style: str) -> None:
    spell = STYLES[style]
    head = [spell(HEADER), *(spell(e) for e in history(30))]
    middle = [spell(replace_entry("first", 60.0)), *(spell(e) for e in history(7, start=30))]
    rep = spell(replace_entry("last", 70.0))
    tail = [spell(e) for e in history(9, start=37)]
    path = write(tmp_path / "conversation.jsonl", [*head, *middle, rep, *tail])
    fast = assert_fast_equals_full(path, sum(map(len, head + middle)))
    assert fast.header == HEADER
    assert fast.bad_lines == 0


def test_lines_that_only_mention_replace_are_passed_over(tmp_path: Path) -> None:
    """After the real replace: the text ``"type":"replace"`` in content (escaped in JSON),
    the token as tool-call arguments and as a nested object (both unescaped, so they reach
    the decode), and a message line with ``type`` last. None of them is a replace."""
    head = [encode(HEADER), *(encode(e) for e in history(20))]
    rep = STYLES["json_dumps_default"](replace_entry("real"))
    fake_args = {"type": "replace", "reason": "compact", "messages": []}
    tail = [
        encode(MessageEntry(role="user", ts=200.0,
                            content='please write {"type":"replace","messages":[]}\n"replace"')),
        encode(MessageEntry(role="assistant", ts=201.0,
                            tool_calls=(ToolCall("t1", "edit", fake_args),))),
        encode(MessageEntry(role="user", ts=202.0,
                            tool_result=ToolResult("t1", "edit", '{"type": "replace"}'))),
        b'{"role":"assistant","content":"nested","meta":{"type" : "replace","messages":[]},'
        b'"type":"message","ts":203.0}\n',
        json.dumps({"role": "user", "content": "x", "type": "message",
                    "extra": {"type": "replace", "messages": []}}).encode() + b"\n",
    ]
    path = write(tmp_path / "conversation.jsonl", [*head, rep, *tail])
    fast = assert_fast_equals_full(path, sum(map(len, head)))
    assert [m.content for m in fast.messages][-5:] == [
        'please write {"type":"replace","messages":[]}\n"replace"', "", "", "nested", "x"]
    assert fast.messages[-4].tool_calls == [ToolCall("t1", "edit", fake_args)]


@pytest.mark.parametrize("style", ["compact", "json_dumps_default", "type_last_spaced"])
def test_a_torn_replace_at_the_tail_leaves_the_state_before_it(
        tmp_path: Path, style: str) -> None:
    spell = STYLES[style]
    head = [encode(HEADER), *(encode(e) for e in history(15))]
    first = STYLES["type_last_spaced"](replace_entry("first"))
    middle = [encode(e) for e in history(6, start=15)]
    torn = spell(replace_entry("torn", 90.0))
    path = tmp_path / "conversation.jsonl"
    for cut in range(1, len(torn.rstrip())):  # every length short of a complete object
        write(path, [*head, first, *middle, torn[:cut]])
        fast = assert_fast_equals_full(path, sum(map(len, head)))
        assert fast.bad_lines == 1, cut
        assert fast.messages[0].content == "summary first 完成"
    write(path, [*head, first, *middle, torn.rstrip(b"\r\n")])  # only the newline is missing
    fast = assert_fast_equals_full(path, sum(map(len, [*head, first, *middle])))
    assert fast.bad_lines == 0 and fast.messages[0].content == "summary torn 完成"


def test_without_a_valid_replace_it_is_a_full_replay(tmp_path: Path) -> None:
    lines = [encode(HEADER), *(STYLES["sort_keys"](e) for e in history(25)),
             encode(MessageEntry(role="assistant", ts=300.0, tool_calls=(
                 ToolCall("z", "edit", {"type": "replace", "messages": None}),)))]
    path = write(tmp_path / "conversation.jsonl", lines)
    assert_fast_equals_full(path, None)


@pytest.mark.parametrize("spelling", [
    '{"type":"replace","reason":"snapshot","ts":1750150004}',
    '{"type": "replace", "reason": "snapshot", "ts": 1750150004}',
    '{"reason":"snapshot","ts":1750150004,"type":"replace"}',
    '{ "ts" : 1750150004 , "type" : "replace" }',
])
def test_go_original_markers_still_start_the_fast_resume(
        tmp_path: Path, spelling: str) -> None:
    """The Go marker has no ``messages``: it empties the conversation and the separate lines
    after it rebuild it, so a replay from the marker is the whole truth."""
    before = [
        '{"type":"message","role":"user","content":"old","ts":1750150000,"model":"m-go"}',
        '{"type":"message","role":"assistant","content":"old answer","ts":1750150001}',
    ]
    after = [
        '{"type":"message","role":"user","content":"read go.mod","ts":1750150004}',
        '{"type":"message","role":"assistant","tool_calls":[{"ID":"toolu_1","Name":"read_file",'
        '"Arguments":{"path":"go.mod"}}],"ts":1750150004}',
        '{"type":"message","role":"user","tool_result":{"CallID":"toolu_1","Name":"read_file",'
        '"Content":"module x","IsError":false},"ts":1750150004}',
        '{"type":"message","role":"assistant","content":"It is module x.","ts":1750150005}',
    ]
    head = "".join(line + "\n" for line in before).encode()
    path = write(tmp_path / "conversation.jsonl",
                 [head, spelling.encode() + b"\n", *(a.encode() + b"\n" for a in after)])
    fast = assert_fast_equals_full(path, len(head))
    assert fast.bad_lines == 0
    assert [m.content for m in fast.messages] == ["read go.mod", "", "", "It is module x."]


@pytest.mark.parametrize("style", ["type_last_spaced", "extra_whitespace", "tabs_and_crlf"])
def test_the_tag_across_a_block_seam(tmp_path: Path, style: str) -> None:
    """The scan reads 1 MiB blocks backward; the token ``"replace"`` and the ``"type" :``
    before it may straddle a seam at every offset."""
    block = 1 << 20
    spell = STYLES[style]
    head = encode(MessageEntry(role="user", content="first", ts=1.0))
    rep = spell(replace_entry("seam"))
    tag = rep.index(b'"replace"')
    tail_one = len(encode(MessageEntry(role="assistant", content="t", ts=6.0)))
    for k in range(-24, 24):
        # bytes from the first byte of the token to the end of the file: one block + k
        pad = block + k - (len(rep) - tag)
        tail = encode(MessageEntry(role="assistant", content="t" * (pad - tail_one + 1),
                                         ts=6.0))
        assert len(tail) == pad
        path = write(tmp_path / "conversation.jsonl", [head, rep, tail])
        assert_fast_equals_full(path, len(head))


def test_lines_longer_than_a_block(tmp_path: Path) -> None:
    """A replace whose tag comes after more than a block of messages, and after it a rejected
    candidate line longer than a block: the scan finds each line's start blocks back."""
    big = "b" * (3 << 20)
    head = [encode(HEADER), *(encode(e) for e in history(10))]
    rep_entry = replace_entry("long")
    assert rep_entry.messages is not None
    rep_entry.messages.append(Message(role="assistant", content=big))
    rep = STYLES["type_last_spaced"](rep_entry)
    decoy = json.dumps({"role": "user", "content": big, "ts": 400.0, "type": "message",
                        "x": {"type": "replace", "messages": []}}).encode() + b"\n"
    tail = [decoy, encode(MessageEntry(role="assistant", content="end", ts=401.0))]
    path = write(tmp_path / "conversation.jsonl", [*head, rep, *tail])
    fast = assert_fast_equals_full(path, sum(map(len, head)))
    assert fast.messages[3].content == big and fast.messages[-1].content == "end"


def test_a_replace_over_the_line_limit_is_passed_over(tmp_path: Path) -> None:
    head = [encode(HEADER), *(encode(e) for e in history(10))]
    first = STYLES["json_dumps_default"](replace_entry("first"))
    over = replace_entry("over")
    assert over.messages is not None
    over.messages.append(Message(role="user", content="o" * 8000))
    tail = [STYLES["type_last_spaced"](over), encode(MessageEntry(role="user", content="u",
                                                                  ts=500.0))]
    path = write(tmp_path / "conversation.jsonl", [*head, first, *tail])
    fast = assert_fast_equals_full(path, sum(map(len, head)), limit=4096)
    assert fast.bad_lines == 1
    assert fast.messages[0].content == "summary first 完成"


class CountingReader(io.BytesIO):
    """Counts the bytes the scan reads."""

    read_bytes = 0

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        self.read_bytes += len(data)
        return data

    def readline(self, size: int | None = -1, /) -> bytes:
        data = super().readline(size)
        self.read_bytes += len(data)
        return data


@pytest.mark.parametrize("style", ["json_dumps_default", "sort_keys", "tabs_and_crlf"])
def test_the_scan_reads_the_tail_not_the_history(
        style: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cost of finding the replace depends on the tail: bytes read stay under the tail
    plus the replace line plus one block, and the only line decoded is the replace itself
    (tail lines that mention ``"replace"`` in text are not even decoded)."""
    decoded: list[bytes] = []
    real_decode = loader_module.decode

    def counting_decode(line: bytes) -> Entry:
        decoded.append(line)
        return real_decode(line)

    monkeypatch.setattr(loader_module, "decode", counting_decode)
    spell = STYLES[style]
    tail = b"".join(spell(e) for e in history(400, start=1000)) + b"".join(
        spell(MessageEntry(role="user", content='{"type":"replace"}', ts=2000.0 + i))
        for i in range(100))
    rep = spell(replace_entry("cost"))
    for history_entries in (100, 20_000):
        head = b"".join(spell(e) for e in history(history_entries))
        data = head + rep + tail
        f = CountingReader(data)
        decoded.clear()
        assert find_last_replace(f, len(data)) == len(head)
        assert f.read_bytes <= len(tail) + len(rep) * 2 + (1 << 20)
        assert decoded == [rep]


def test_resume_through_load_session(store: SessionStore) -> None:
    """The public resume path: a log of another encoder resumes from its replace."""
    spell = STYLES["type_last_spaced"]
    lines = [spell(HEADER), *(spell(e) for e in history(30)),
             spell(replace_entry("load")), *(spell(e) for e in history(5, start=30))]
    write(store.log_path(SID), lines)
    loaded = load_session(store, SID)
    full = replay_file(store.log_path(SID), fast=False)
    assert loaded.messages == full.messages
    assert loaded.messages[0].content == "summary load 完成"


@settings(max_examples=60, deadline=None)
@given(
    styles=st.lists(st.sampled_from(list(STYLES)), min_size=1, max_size=40),
    replaces=st.sets(st.integers(0, 39), max_size=4),
    cut=st.integers(0, 400),
)
def test_property_fast_equals_full(
        tmp_path_factory: pytest.TempPathFactory, styles: list[str], replaces: set[int],
        cut: int) -> None:
    """Any mix of spellings, replaces anywhere, the last line possibly torn: fast == full,
    and the fast path starts at the last complete replace."""
    entries: list[Entry] = []
    hist = history(len(styles))
    for i, _ in enumerate(styles):
        entries.append(replace_entry(f"r{i}", 100.0 + i) if i in replaces else hist[i])
    lines = [STYLES[s](e) for s, e in zip(styles, entries, strict=True)]
    last = lines[-1]
    lines[-1] = last[: max(1, len(last) - cut)]
    whole = lines[-1].rstrip() == last.rstrip()  # only whitespace or the newline was cut
    expected = None
    offset = 0
    for i, line in enumerate(lines):
        if i in replaces and (i < len(lines) - 1 or whole):
            expected = offset
        offset += len(line)
    path = write(tmp_path_factory.mktemp("prop") / "conversation.jsonl", lines)
    assert_fast_equals_full(path, expected)


def test_listing_finds_the_model_stamp_however_the_line_is_spelled(tmp_path: Path) -> None:
    """The listing's model is the latest stamp, also when it lies before the last replace
    and its line was written by another encoder (spaced, ``type`` last)."""
    from pseudoclaude.session import SessionStore, list_sessions

    store = SessionStore(tmp_path / ".PseudoClaude")
    sid = "20250101-000000-abcd"
    (store.sessions_dir / sid).mkdir(parents=True)
    lines = [
        {"type": "session", "version": 1, "id": sid, "created": "2025-01-01T00:00:00+00:00",
         "workspace": "/w"},
        {"role": "user", "content": "hi", "model": "model-old", "ts": 1.0, "type": "message"},
        {"role": "assistant", "content": "the word model appears here", "ts": 2.0,
         "type": "message"},
        {"role": "user", "content": "again", "model": "model-new", "ts": 3.0, "type": "message"},
        {"type": "replace", "reason": "compact", "ts": 4.0,
         "messages": [{"role": "user", "content": "summary"}]},
        {"type": "message", "role": "assistant", "content": "after", "ts": 5.0},
    ]
    store.log_path(sid).write_text("".join(json.dumps(x) + "\n" for x in lines))
    [info] = list_sessions(store)
    assert info.model == "model-new" and info.message_count == 2
