from __future__ import annotations

import json

import pytest

from pseudoclaude.llm.types import Message, ThinkingBlock, ToolCall, ToolResult
from pseudoclaude.session.codec import (
    BadLine,
    KeepEntry,
    MessageEntry,
    OffloadEntry,
    ReplaceEntry,
    SessionEntry,
    decode,
    encode,
)

ENTRIES = [
    SessionEntry(version=1, id="20260617-120000-abcd", created="2026-06-17T12:00:00+02:00",
                 workspace="/w"),
    MessageEntry(role="user", content="héllo 日本", ts=1.5, model="m"),
    MessageEntry(role="assistant", content="", ts=2.0, tool_calls=(
        ToolCall("c1", "read_file", {"path": "a"}), ToolCall("c2", "edit_file", "{bad json")),
        thinking=(ThinkingBlock("because", "sig=="), ThinkingBlock(data="redacted"))),
    MessageEntry(role="user", tool_result=ToolResult("c1", "read_file", "body", True), ts=3.0),
    OffloadEntry("c1", "tool-results/c1.txt", 60000, "preview", 4.0),
    KeepEntry(["c2"], 5.0),
    ReplaceEntry(reason="compact", messages=[Message(role="user", content="summary")], ts=6.0),
]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: type(e).__name__)
def test_round_trip(entry: object) -> None:
    line = encode(entry)  # type: ignore[arg-type]
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode(line) == entry


def test_line_shapes_follow_the_spec() -> None:
    assert json.loads(encode(ENTRIES[1])) == {
        "type": "message", "role": "user", "content": "héllo 日本", "ts": 1.5, "model": "m"}
    assert json.loads(encode(ENTRIES[3]))["tool_result"] == {
        "call_id": "c1", "name": "read_file", "content": "body", "is_error": True}
    replace = json.loads(encode(ENTRIES[-1]))
    assert replace == {"type": "replace", "reason": "compact",
                       "messages": [{"role": "user", "content": "summary"}], "ts": 6.0}
    assert encode(ENTRIES[-1]).startswith(b'{"type":"replace"')


def test_lone_surrogates_are_scrubbed_not_fatal() -> None:
    line = encode(MessageEntry(role="user", content="bad \udcff byte", ts=1.0))
    entry = decode(line)
    assert isinstance(entry, MessageEntry) and entry.content == "bad \ufffd byte"


def test_legacy_go_lines() -> None:
    message = decode(
        b'{"type":"message","role":"assistant","tool_calls":[{"ID":"toolu_1","Name":"read_file",'
        b'"Arguments":{"path":"go.mod"}}],"ts":1750150003}'
    )
    assert isinstance(message, MessageEntry)
    assert message.tool_calls == (ToolCall("toolu_1", "read_file", {"path": "go.mod"}),)
    assert message.ts == 1750150003.0
    result = decode(
        b'{"type":"message","role":"user","tool_result":{"CallID":"toolu_1","Name":"read_file",'
        b'"Content":"ok","IsError":false},"ts":1750150003}'
    )
    assert isinstance(result, MessageEntry)
    assert result.tool_result == ToolResult("toolu_1", "read_file", "ok", False)
    untyped = decode(b'{"role":"user","content":"no type","ts":1}')
    assert isinstance(untyped, MessageEntry) and untyped.content == "no type"
    marker = decode(b'{"type":"replace","reason":"snapshot","ts":1750150004}')
    assert isinstance(marker, ReplaceEntry) and marker.messages is None
    null_args = decode(b'{"type":"message","role":"assistant","tool_calls":'
                       b'[{"ID":"a","Name":"b","Arguments":null}],"ts":1}')
    assert isinstance(null_args, MessageEntry) and null_args.tool_calls[0].arguments == {}


@pytest.mark.parametrize("line", [
    b"not-json\n",
    b'{"type":"message","role":"user","content":"\xff\xfe"}\n',
    b'{"type":"message","role":"system","content":"x"}\n',
    b'{"type":"message","role":"user","content":5}\n',
    b'{"type":"offload","call_id":"c1"}\n',
    b'{"type":"keep","call_ids":"c1"}\n',
    b'{"type":"replace","messages":[{"role":"user","tool_calls":7}]}\n',
    b'{"type":"session","version":"one"}\n',
    b'{"type":"whatever"}\n',
    b"[1,2,3]\n",
    b'"just a string"\n',
    b'{"type":"message","role":"user","content":"torn',
])
def test_bad_lines_raise_badline(line: bytes) -> None:
    with pytest.raises(BadLine):
        decode(line)
