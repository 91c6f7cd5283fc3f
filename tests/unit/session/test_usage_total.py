"""What a session's model requests were billed (``/status``): the sum of its log's usage stamps,
over the whole log (a compaction's ``replace`` copies are not new requests); bad lines skipped."""

from __future__ import annotations

from pathlib import Path

from pseudoclaude.llm.types import Message, Usage
from pseudoclaude.session.codec import MessageEntry, ReplaceEntry, UsageStamp, encode
from pseudoclaude.session.usage import logged_usage


def answer(text: str, usage: UsageStamp | None) -> bytes:
    return encode(MessageEntry(role="assistant", content=text, usage=usage))


def test_the_stamps_of_the_whole_log_add_up(tmp_path: Path) -> None:
    log = tmp_path / "conversation.jsonl"
    copied = Message(role="assistant", content="one", usage=Usage(input_tokens=999))
    log.write_bytes(
        encode(MessageEntry(role="user", content="a prompt that says \"usage\""))
        + answer("one", UsageStamp(input_tokens=100, output_tokens=10, cache_read=50))
        + b'{"type": "message", "role": "assistant", "usage": {"input": \n'  # cut short
        + encode(ReplaceEntry(reason="compact", messages=[copied]))
        + answer("two", UsageStamp(input_tokens=20, output_tokens=5, cache_write=7))
        + answer("no usage reported", None))
    assert logged_usage(log) == Usage(input_tokens=120, output_tokens=15, cache_read=50,
                                      cache_write=7)


def test_none_without_a_stamp_or_a_log(tmp_path: Path) -> None:
    log = tmp_path / "conversation.jsonl"
    assert logged_usage(log) is None
    log.write_bytes(encode(MessageEntry(role="user", content="hi")) + answer("hello", None))
    assert logged_usage(log) is None
