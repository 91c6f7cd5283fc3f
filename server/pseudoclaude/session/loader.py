"""Replaying a session log (SPEC §3).

Lines are replayed in order. A line that is not valid JSON, not UTF-8, of the wrong shape or
longer than the line limit is counted in ``bad_lines`` and skipped; nothing is ever fatal.
``replace`` resets the state (messages and the Layer-1 ledger); ``offload`` rewrites the
matching tool results to their previews; ``keep`` records results kept verbatim.

Fast resume: every committed replace line starts with the same bytes, so the loader scans
backward from the end of the file for the last one that decodes and replays only from there.
The time a resume takes then depends on the live tail, not on the size of the history.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import msgspec

from pseudoclaude.conversation import Offload
from pseudoclaude.llm.types import Message
from pseudoclaude.session.codec import (
    REPLACE_PREFIX,
    BadLine,
    Entry,
    KeepEntry,
    MessageEntry,
    OffloadEntry,
    ReplaceEntry,
    SessionEntry,
    decode,
)

DEFAULT_LINE_LIMIT = 64 * 1024 * 1024
_BLOCK = 1 << 20
_TOO_LONG = object()


@dataclass
class Replay:
    """The state a log replays to (before protocol repair)."""

    messages: list[Message] = field(default_factory=list)
    offloads: dict[str, Offload] = field(default_factory=dict)  # the Layer-1 ledger
    kept: set[str] = field(default_factory=set)
    bad_lines: int = 0
    header: SessionEntry | None = None
    last_ts: float = 0.0  # ts of the last line replayed that carries one
    model: str = ""  # the latest model stamp in the replayed range
    start_offset: int = 0  # where replay began (0 for a full replay)


class _State:
    __slots__ = ("r", "results")

    def __init__(self, r: Replay) -> None:
        self.r = r
        self.results: dict[str, list[int]] = {}  # call id -> indexes of its result messages

    def apply(self, entry: Entry) -> None:
        r = self.r
        if isinstance(entry, MessageEntry):
            message = entry.to_message()
            if message.tool_result is not None:
                self.results.setdefault(message.tool_result.call_id, []).append(len(r.messages))
            r.messages.append(message)
            if entry.model:
                r.model = entry.model
        elif isinstance(entry, ReplaceEntry):
            r.messages = list(entry.messages or ())
            r.offloads = {}
            r.kept = set()
            self.results = {}
            for i, m in enumerate(r.messages):
                if m.tool_result is not None:
                    self.results.setdefault(m.tool_result.call_id, []).append(i)
        elif isinstance(entry, OffloadEntry):
            r.offloads[entry.call_id] = Offload(
                entry.call_id, entry.path, entry.bytes, entry.preview
            )
            r.kept.discard(entry.call_id)
            for i in self.results.get(entry.call_id, ()):
                m = r.messages[i]
                assert m.tool_result is not None
                r.messages[i] = msgspec.structs.replace(
                    m, tool_result=msgspec.structs.replace(m.tool_result, content=entry.preview)
                )
        elif isinstance(entry, KeepEntry):
            r.kept.update(entry.call_ids)
        elif isinstance(entry, SessionEntry):
            if r.header is None:
                r.header = entry
            return
        if entry.ts:
            r.last_ts = entry.ts


def iter_lines(f: BinaryIO, limit: int = DEFAULT_LINE_LIMIT) -> Iterator[bytes | object]:
    """Lines of ``f`` (with their newline), or ``_TOO_LONG`` for one over ``limit`` bytes.

    A line over the limit is skipped without ever being held in memory.
    """
    readline = f.readline
    while True:
        line = readline(limit + 1)
        if not line:
            return
        if line[-1:] == b"\n" or len(line) <= limit:
            yield line
            continue
        while line and line[-1:] != b"\n":
            line = readline(_BLOCK)
        yield _TOO_LONG


def _replay_from(f: BinaryIO, state: _State, limit: int) -> None:
    r = state.r
    for line in iter_lines(f, limit):
        if line is _TOO_LONG:
            r.bad_lines += 1
            continue
        assert isinstance(line, bytes)
        if not line.strip():
            continue  # a blank line is not corruption
        try:
            entry = decode(line)
        except BadLine:
            r.bad_lines += 1
            continue
        state.apply(entry)


def read_header(f: BinaryIO, limit: int = DEFAULT_LINE_LIMIT) -> SessionEntry | None:
    f.seek(0)
    line = f.readline(min(limit, 1 << 16))
    try:
        entry = decode(line)
    except BadLine:
        return None
    return entry if isinstance(entry, SessionEntry) else None


def _read_line_at(f: BinaryIO, offset: int, limit: int) -> bytes | None:
    f.seek(offset)
    line = f.readline(limit + 1)
    if len(line) > limit and line[-1:] != b"\n":
        return None
    return line


def find_last_replace(f: BinaryIO, size: int, limit: int = DEFAULT_LINE_LIMIT) -> int | None:
    """Offset of the start of the last line that is a valid replace entry, or None."""
    for offset in _line_starts_backward(f, size, REPLACE_PREFIX):
        line = _read_line_at(f, offset, limit)
        if line is None:
            continue
        try:
            entry = decode(line)
        except BadLine:
            continue  # e.g. a torn replace at the tail: the state before it stands
        if isinstance(entry, ReplaceEntry):
            return offset
    return None


def _line_starts_backward(f: BinaryIO, size: int, prefix: bytes) -> Iterator[int]:
    """Offsets of lines starting with ``prefix``, last first."""
    needle = b"\n" + prefix
    end = size
    overlap = b""
    while end > 0:
        start = max(0, end - _BLOCK)
        f.seek(start)
        chunk = f.read(end - start) + overlap
        hit = len(chunk)
        while True:
            hit = chunk.rfind(needle, 0, hit)
            if hit < 0:
                break
            yield start + hit + 1
        if start == 0 and chunk.startswith(prefix):
            yield 0
        overlap = chunk[: len(needle) - 1]
        end = start


def replay_file(path: Path | str, *, fast: bool = True,
                limit: int = DEFAULT_LINE_LIMIT) -> Replay:
    """Replay a log. With ``fast`` only the part from the last committed replace is read."""
    r = Replay()
    state = _State(r)
    with open(path, "rb", buffering=_BLOCK) as f:
        r.header = read_header(f, limit)
        start = 0
        if fast:
            size = f.seek(0, 2)
            found = find_last_replace(f, size, limit)
            if found is not None:
                start = found
        r.start_offset = start
        f.seek(start)
        _replay_from(f, state, limit)
    return r
