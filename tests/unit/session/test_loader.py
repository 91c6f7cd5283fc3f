from __future__ import annotations

from pathlib import Path

import pytest

from pseudoclaude.conversation import Offload
from pseudoclaude.llm.types import Message, ToolCall, ToolResult
from pseudoclaude.session import SessionStore, SessionWriter, load_session, replay_file
from pseudoclaude.session.codec import (
    CheckpointEntry,
    ForkEntry,
    KeepEntry,
    MessageEntry,
    OffloadEntry,
    ReplaceEntry,
    SessionEntry,
    encode,
)
from pseudoclaude.session.loader import DEFAULT_LINE_LIMIT

PREFIX = [
    SessionEntry(version=1, id="20260617-120000-abcd", created="2026-06-17T12:00:00+00:00"),
    MessageEntry(role="user", content="read a.py", ts=1.0, model="m1"),
    MessageEntry(role="assistant", tool_calls=(ToolCall("c1", "read_file", {"path": "a.py"}),),
                 ts=2.0),
    MessageEntry(role="user", tool_result=ToolResult("c1", "read_file", "x" * 300), ts=3.0),
]
PREFIX_STATE = [
    Message(role="user", content="read a.py"),
    Message(role="assistant", tool_calls=[ToolCall("c1", "read_file", {"path": "a.py"})]),
    Message(role="user", tool_result=ToolResult("c1", "read_file", "x" * 300)),
]
TAILS = {
    "message": MessageEntry(role="assistant", content="done ✓ 完成", ts=4.0),
    "offload": OffloadEntry("c1", "tool-results/c1.txt", 300, "PREVIEW", 4.0),
    "keep": KeepEntry(["c1"], 4.0),
    "replace": ReplaceEntry(reason="compact", ts=4.0, messages=[
        Message(role="user", content="summary " * 50), Message(role="assistant", content="ok")]),
    "session": SessionEntry(version=1, id="20260617-120000-abcd", created="x"),
    "checkpoint": CheckpointEntry(turn=1, ref="0" * 40, ts=4.0),
    "fork": ForkEntry(parent="20260101-000000-abcd", turn=2, ts=4.0),
}


def write_log(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def prefix_bytes() -> bytes:
    return b"".join(encode(e) for e in PREFIX)


@pytest.mark.parametrize("kind", list(TAILS))
def test_a_torn_final_line_of_every_entry_type(tmp_path: Path, kind: str) -> None:
    line = encode(TAILS[kind])
    path = tmp_path / "conversation.jsonl"
    for cut in range(1, len(line) - 1):  # every torn length; len-1 is complete minus "\n"
        write_log(path, prefix_bytes() + line[:cut])
        for fast in (True, False):
            replay = replay_file(path, fast=fast)
            assert replay.messages == PREFIX_STATE, (kind, cut, fast)
            assert replay.bad_lines == 1, (kind, cut)
    write_log(path, prefix_bytes() + line[:-1])  # only the newline is missing: it counts
    assert replay_file(path).bad_lines == 0


def test_writer_never_glues_a_new_line_onto_a_torn_one(store: SessionStore) -> None:
    with SessionWriter.create(store, model="m") as w:
        w.append_message(Message(role="user", content="first"))
    log = store.log_path(w.session_id)
    with open(log, "ab") as f:
        f.write(b'{"type":"message","role":"assistant","content":"to')  # torn by a crash
    with SessionWriter.open(store, w.session_id) as w2:
        w2.append_message(Message(role="assistant", content="second"))
    replay = replay_file(log)
    assert [m.content for m in replay.messages] == ["first", "second"]
    assert replay.bad_lines == 1


def test_replace_offload_keep_replay(tmp_path: Path) -> None:
    entries = [*PREFIX[1:], OffloadEntry("c1", "tool-results/c1.txt", 300, "PREVIEW", 4.0),
               KeepEntry(["c9"], 5.0)]
    path = write_log(tmp_path / "log.jsonl", b"".join(encode(e) for e in entries))
    replay = replay_file(path)
    assert replay.messages[2].tool_result == ToolResult("c1", "read_file", "PREVIEW")
    assert replay.offloads == {"c1": Offload("c1", "tool-results/c1.txt", 300, "PREVIEW")}
    assert replay.kept == {"c9"}
    assert replay.model == "m1" and replay.last_ts == 5.0
    # a replace resets messages and the ledger
    entries.append(TAILS["replace"])
    entries.append(MessageEntry(role="user", content="after", ts=6.0))
    path = write_log(path, b"".join(encode(e) for e in entries))
    for fast in (True, False):
        replay = replay_file(path, fast=fast)
        assert [m.content for m in replay.messages] == ["summary " * 50, "ok", "after"]
        assert replay.offloads == {} and replay.kept == set()
    assert replay_file(path, fast=True).start_offset > 0


def test_legacy_go_log_with_marker_and_separate_lines(tmp_path: Path) -> None:
    lines = [
        '{"type":"message","role":"user","content":"read go.mod","ts":1750150000,'
        '"model":"claude-sonnet-4-5"}',
        '{"type":"message","role":"assistant","tool_calls":[{"ID":"toolu_1","Name":"read_file",'
        '"Arguments":{"path":"go.mod"}}],"ts":1750150003}',
        '{"type":"message","role":"user","tool_result":{"CallID":"toolu_1","Name":"read_file",'
        '"Content":"module x","IsError":false},"ts":1750150003}',
        '{"type":"replace","reason":"snapshot","ts":1750150004}',
        '{"type":"message","role":"user","content":"read go.mod","ts":1750150004}',
        '{"type":"message","role":"assistant","tool_calls":[{"ID":"toolu_1","Name":"read_file",'
        '"Arguments":{"path":"go.mod"}}],"ts":1750150004}',
        '{"type":"message","role":"user","tool_result":{"CallID":"toolu_1","Name":"read_file",'
        '"Content":"[content offloaded] preview","IsError":false},"ts":1750150004}',
        '{"type":"message","role":"assistant","content":"It is module x.","ts":1750150005}',
    ]
    store = SessionStore(tmp_path / ".PseudoClaude")
    write_log(store.log_path("20250617-090000-abcd"), ("\n".join(lines) + "\n").encode())
    for fast in (True, False):
        replay = replay_file(store.log_path("20250617-090000-abcd"), fast=fast)
        assert replay.bad_lines == 0
        assert replay.messages == [
            Message(role="user", content="read go.mod"),
            Message(role="assistant",
                    tool_calls=[ToolCall("toolu_1", "read_file", {"path": "go.mod"})]),
            Message(role="user", tool_result=ToolResult(
                "toolu_1", "read_file", "[content offloaded] preview")),
            Message(role="assistant", content="It is module x."),
        ]
    loaded = load_session(store, "latest")
    assert loaded.repaired == 0 and len(loaded.messages) == 4


def test_orphan_result_in_the_middle_and_a_dangling_tail(store: SessionStore) -> None:
    lines = [
        MessageEntry(role="user", content="q", ts=1.0),
        MessageEntry(role="user", tool_result=ToolResult("ghost", "read_file", "?"), ts=2.0),
        MessageEntry(role="assistant", content="answer", ts=3.0),
        MessageEntry(role="assistant", content="checking", ts=4.0,
                     tool_calls=(ToolCall("c1", "run_command", {"command": "ls"}),)),
    ]
    write_log(store.log_path("20260617-120000-abcd"), b"".join(encode(e) for e in lines))
    loaded = load_session(store, "20260617-120000-abcd")
    assert loaded.repaired == 2
    assert loaded.messages == [Message(role="user", content="q"),
                               Message(role="assistant", content="answer"),
                               Message(role="assistant", content="checking")]


def test_invalid_utf8_and_junk_lines_are_skipped(tmp_path: Path) -> None:
    data = (prefix_bytes() + b'{"type":"message","role":"user","content":"\xc3\x28"}\n'
            + b"\x00\x01binary junk\xff\n" + b"\n" + encode(TAILS["message"]))
    replay = replay_file(write_log(tmp_path / "log.jsonl", data))
    assert replay.bad_lines == 2
    assert replay.messages == [*PREFIX_STATE, Message(role="assistant", content="done ✓ 完成")]


def test_empty_file_and_header_only(tmp_path: Path) -> None:
    empty = write_log(tmp_path / "empty.jsonl", b"")
    replay = replay_file(empty)
    assert replay.messages == [] and replay.bad_lines == 0 and replay.header is None
    header = write_log(tmp_path / "header.jsonl", encode(PREFIX[0]))
    replay = replay_file(header)
    assert replay.messages == [] and replay.header == PREFIX[0]


def test_a_line_over_the_limit_is_one_bad_line(tmp_path: Path) -> None:
    big = MessageEntry(role="user", tool_result=ToolResult("c2", "x", "y" * 5000), ts=1.0)
    data = prefix_bytes() + encode(big) + encode(TAILS["message"])
    path = write_log(tmp_path / "log.jsonl", data)
    replay = replay_file(path, limit=4096)
    assert replay.bad_lines == 1
    assert replay.messages == [*PREFIX_STATE, Message(role="assistant", content="done ✓ 完成")]
    assert replay_file(path).bad_lines == 0  # under the default limit it is fine


def test_a_70_mib_line_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with open(path, "wb") as f:
        f.write(prefix_bytes())
        f.write(b'{"type":"message","role":"user","content":"')
        chunk = b"z" * (1 << 20)
        for _ in range(70):
            f.write(chunk)
        f.write(b'","ts":9}\n')
        f.write(encode(TAILS["message"]))
    assert path.stat().st_size > 70 * (1 << 20) > DEFAULT_LINE_LIMIT
    replay = replay_file(path)
    assert replay.bad_lines == 1
    assert replay.messages == [*PREFIX_STATE, Message(role="assistant", content="done ✓ 完成")]


def test_fast_resume_skips_a_torn_replace_and_finds_the_one_before(tmp_path: Path) -> None:
    first = ReplaceEntry(reason="compact", ts=5.0, messages=[Message(role="user", content="s1")])
    second = encode(ReplaceEntry(reason="compact", ts=7.0,
                                 messages=[Message(role="user", content="s2")]))
    data = (prefix_bytes() + encode(first)
            + encode(MessageEntry(role="assistant", content="a1", ts=6.0)) + second[:20])
    path = write_log(tmp_path / "log.jsonl", data)
    fast, full = replay_file(path, fast=True), replay_file(path, fast=False)
    assert fast.messages == full.messages == [Message(role="user", content="s1"),
                                               Message(role="assistant", content="a1")]


def test_replace_found_across_block_boundaries(tmp_path: Path) -> None:
    """The backward scan reads 1 MiB blocks; a replace whose prefix straddles one is found."""
    rep = encode(ReplaceEntry(reason="compact", ts=5.0,
                              messages=[Message(role="user", content="s")]))
    head = encode(MessageEntry(role="user", content="f", ts=1.0))
    tail = encode(MessageEntry(role="assistant", content="t", ts=6.0))
    one_p = len(encode(MessageEntry(role="user", content="p", ts=1.0)))
    for k in range(-25, 25):
        after = (1 << 20) + k  # bytes from the start of the replace line to the end
        pad_len = after - len(rep) - len(tail)
        pad = encode(MessageEntry(role="user", content="p" * (pad_len - one_p + 1), ts=1.0))
        assert len(pad) == pad_len
        path = write_log(tmp_path / "log.jsonl", head + rep + pad + tail)
        fast = replay_file(path, fast=True)
        assert fast.start_offset == len(head), k
        assert fast.messages == replay_file(path, fast=False).messages


def test_checkpoint_and_fork_lines_are_known_not_bad(tmp_path: Path) -> None:
    """The loader knows ``checkpoint`` and ``fork`` lines: replayed into the checkpoints and
    the fork's parent, never counted as bad lines, never in the messages."""
    entries = [PREFIX[0], ForkEntry(parent="20260101-000000-abcd", turn=3, ts=1.0),
               CheckpointEntry(turn=1, ref="a" * 40, ts=1.5), *PREFIX[1:],
               CheckpointEntry(turn=1, ref="b" * 40, ts=3.5)]
    path = write_log(tmp_path / "log.jsonl", b"".join(encode(e) for e in entries))
    replay = replay_file(path)
    assert replay.bad_lines == 0 and replay.messages == PREFIX_STATE
    assert replay.checkpoints == [(1, "a" * 40), (1, "b" * 40)]
    assert replay.fork is not None and (replay.fork.parent, replay.fork.turn) == (
        "20260101-000000-abcd", 3)
    assert replay.last_ts == 3.5
    line = encode(CheckpointEntry(turn=2, ref="c" * 40, ts=9.0))
    assert line == b'{"type":"checkpoint","turn":2,"ref":"' + b"c" * 40 + b'","ts":9.0}\n'
