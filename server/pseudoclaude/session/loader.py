"""Replaying a session log (SPEC §3).

Lines are replayed in order. A line that is not valid JSON, not UTF-8, of the wrong shape or
longer than the line limit is counted in ``bad_lines`` and skipped; nothing is ever fatal.
``replace`` resets the state (messages and the Layer-1 ledger); ``offload`` rewrites the
matching tool results to their previews; ``keep`` records results kept verbatim.

Fast resume: the loader scans backward from the end of the file for the last line that decodes
to a replace entry and replays only from there. Candidates are found by the token ``"replace"``
(the value of the ``type`` key), wherever it stands in the line and however the line is spaced,
so a line written by another JSON encoder is found as surely as our own. The time a resume takes
then depends on the live tail, not on the size of the history.
"""

from __future__ import annotations

import gc
import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, cast

import msgspec

from pseudoclaude.conversation import Offload
from pseudoclaude.llm.types import Message, utf8_len
from pseudoclaude.session.codec import (
    AgentEntry,
    AgentStopEntry,
    BadLine,
    CheckpointEntry,
    Entry,
    ForkEntry,
    KeepEntry,
    MessageEntry,
    ModeEntry,
    OffloadEntry,
    ReplaceEntry,
    SessionEntry,
    TasksEntry,
    decode,
    normalise,
)

DEFAULT_LINE_LIMIT = 64 * 1024 * 1024
MAX_TS = 32_503_680_000.0  # year 3000: later "timestamps" are not seconds
_BLOCK = 1 << 20
_TOO_LONG = object()
_batch_decoder = msgspec.json.Decoder(list[Entry])


@dataclass
class UsageAnchor:
    """The last usage stamp of the live part of a log (after its last replace): the
    estimate's anchor (SPEC §4) as the live session had it."""

    tokens: int
    """The usage's total (input + cache read + cache write + output)."""
    count: int
    """Messages up to and including the stamped assistant message."""
    saved: list[int] = field(default_factory=list)
    """Bytes saved by later Layer-1 offloads of results before the stamp, in log order (the
    live anchor shrank by the estimate of each)."""


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
    anchor: UsageAnchor | None = None  # the last usage stamp since the last replace
    checkpoints: list[tuple[int, str]] = field(default_factory=list)
    """``(turn, ref)`` of the ``checkpoint`` lines replayed, in order."""
    fork: ForkEntry | None = None  # the ``fork`` line of a forked session
    mode: str | None = None
    """The permission mode of the last ``mode`` line (``None``: none)."""
    tasks: list[tuple[str, str]] | None = None
    """The task list of the last ``tasks`` line, ``(content, status)`` each (``None``: none)."""
    agent: AgentEntry | None = None
    """A sub-agent's log: its first line (who started it, for what)."""
    agent_stop: AgentStopEntry | None = None
    """A sub-agent's log: how it ended (``None``: it has not, or was interrupted)."""


class _State:
    """Replay state. Message lines stay ``MessageEntry`` structs until :meth:`finish`, so the
    history a later ``replace`` throws away is never converted."""

    __slots__ = ("items", "r", "results")

    def __init__(self, r: Replay) -> None:
        self.r = r
        self.items: list[MessageEntry | Message] = []
        self.results: dict[str, list[int]] = {}  # call id -> indexes of its result messages

    def apply(self, entry: Entry) -> None:
        r = self.r
        if type(entry) is MessageEntry:
            result = entry.tool_result
            if result is not None:
                self.results.setdefault(result.call_id, []).append(len(self.items))
            self.items.append(entry)
            if entry.model:
                r.model = entry.model
            if entry.usage is not None and entry.usage.total > 0:
                r.anchor = UsageAnchor(entry.usage.total, len(self.items))
        elif type(entry) is OffloadEntry:
            r.offloads[entry.call_id] = Offload(
                entry.call_id, entry.path, entry.bytes, entry.preview
            )
            r.kept.discard(entry.call_id)
            anchor = r.anchor
            for i in self.results.get(entry.call_id, ()):
                item = self.items[i]
                assert item.tool_result is not None
                if anchor is not None and i < anchor.count and (
                        item.tool_result.content != entry.preview):
                    anchor.saved.append(utf8_len(item.tool_result.content)
                                        - utf8_len(entry.preview))
                self.items[i] = msgspec.structs.replace(
                    item,
                    tool_result=msgspec.structs.replace(item.tool_result, content=entry.preview),
                )
        elif type(entry) is KeepEntry:
            r.kept.update(entry.call_ids)
        elif type(entry) is ReplaceEntry:
            self.items = list(entry.messages or ())
            r.anchor = None  # a replace resets the estimate to a full one
            r.offloads = {}
            r.kept = set()
            self.results = {}
            for i, m in enumerate(self.items):
                if m.tool_result is not None:
                    self.results.setdefault(m.tool_result.call_id, []).append(i)
        elif type(entry) is SessionEntry:
            if r.header is None:
                r.header = entry
            return
        elif type(entry) is CheckpointEntry:
            r.checkpoints.append((entry.turn, entry.ref))
        elif type(entry) is ForkEntry and r.fork is None:
            r.fork = entry
        elif type(entry) is ModeEntry:
            r.mode = entry.mode
        elif type(entry) is TasksEntry:
            r.tasks = [(t.content, t.status) for t in entry.tasks]
        elif type(entry) is AgentEntry:
            if r.agent is None:
                r.agent = entry
            return
        elif type(entry) is AgentStopEntry:
            r.agent_stop = entry
        ts = cast("MessageEntry | OffloadEntry | KeepEntry | ReplaceEntry | CheckpointEntry"
                  " | ForkEntry | ModeEntry | TasksEntry | AgentStopEntry", entry).ts
        if 0 < ts < MAX_TS:  # a hand-made line may carry milliseconds, or nonsense
            r.last_ts = ts

    def finish(self) -> None:
        self.r.messages = [
            e.to_message() if type(e) is MessageEntry else e  # type: ignore[misc]
            for e in self.items
        ]


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


def iter_entries(path: Path | str, limit: int = DEFAULT_LINE_LIMIT) -> Iterator[Entry]:
    """Every valid entry of the log at ``path``, in order; bad and over-long lines are skipped,
    as in any replay (a full read, line by line: for the readers that need the whole past)."""
    with open(path, "rb") as f:
        for raw in iter_lines(f, limit):
            if raw is _TOO_LONG:
                continue
            assert isinstance(raw, bytes)
            try:
                yield decode(raw)
            except BadLine:
                continue


_NL_TO_COMMA = bytes.maketrans(b"\n", b",")
_OPEN, _CLOSE = ord("["), ord("]")


def _replay_from(f: io.BufferedReader, state: _State, limit: int) -> None:
    """Replay every line from the current position of ``f``.

    Blocks are read into one reused buffer. The whole lines of a block are decoded with a
    single call, as a JSON array made by one ``translate`` of the buffer (newlines become
    commas, the brackets are written over the first and last separators); only when that
    fails (a bad line in the block) are its lines decoded one by one. A line that continues
    past a block is assembled from pieces, and one over ``limit`` is counted bad without
    ever being held whole.
    """
    r = state.r
    apply = state.apply
    size = min(_BLOCK, limit)  # a line that fits inside one block is within the limit
    buf = bytearray(size + 1)
    buf[0] = _OPEN
    window = memoryview(buf)[1:]
    pieces: list[bytes] = []  # the start of a line that continues in the next block
    pending = 0
    skipping = False  # inside a line already known to be too long
    with _gc_paused():
        while True:
            n = f.readinto(window)
            if not n:
                if skipping:
                    r.bad_lines += 1
                elif pieces:
                    _apply_lines([b"".join(pieces)], state)
                break
            end = n + 1  # buf[1:end] holds the block
            first = buf.find(b"\n", 1, end)
            if first < 0:
                if not skipping:
                    pieces.append(bytes(buf[1:end]))
                    pending += n
                    if pending > limit:
                        skipping, pieces, pending = True, [], 0
                continue
            start = 1  # buf[start:last+1] will be whole lines
            if skipping:
                r.bad_lines += 1
                skipping, start = False, first + 1
            elif pieces:
                pieces.append(bytes(buf[1:first]))
                line = b"".join(pieces)
                pieces, pending, start = [], 0, first + 1
                if len(line) > limit:
                    r.bad_lines += 1
                else:
                    _apply_lines([line], state)
            last = buf.rfind(b"\n", 1, end)
            if last >= start:
                count = buf.count(b"\n", start, last + 1)
                array = buf.translate(_NL_TO_COMMA)
                array[start - 1] = _OPEN
                array[last] = _CLOSE
                try:
                    entries = _batch_decoder.decode(memoryview(array)[start - 1 : last + 1])
                except msgspec.DecodeError:
                    entries = None
                if entries is not None and len(entries) == count:
                    if b'"arguments":null' in array:  # rare: only then is a pass needed
                        for entry in entries:
                            normalise(entry)
                    for entry in entries:
                        apply(entry)
                else:
                    _apply_lines(bytes(buf[start:last]).split(b"\n"), state)
            if last + 1 < end:
                pieces.append(bytes(buf[last + 1 : end]))
                pending = end - last - 1
        state.finish()


def _apply_lines(lines: list[bytes], state: _State) -> None:
    for line in lines:
        if not line.strip():
            continue  # a blank line is not corruption
        try:
            entry = decode(line)
        except BadLine:
            state.r.bad_lines += 1
            continue
        state.apply(entry)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Replay allocates millions of long-lived objects; the cyclic GC only slows it down."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


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


_TAG = b'"replace"'  # the value of "type" in every replace line (v1 and the Go marker)
_WS = b" \t\r"  # JSON whitespace that can stand inside one line
_TYPE_KEY = b'"type"'
_CONTEXT = 64  # bytes looked at before a token to tell whether it can be the "type" value


def find_last_replace(f: BinaryIO, size: int, limit: int = DEFAULT_LINE_LIMIT) -> int | None:
    """Offset of the start of the last line that is a valid replace entry, or None.

    Every replace line holds the token ``"replace"`` as the value of its ``type`` key, in any
    position and with any spacing (text in a JSON string rarely holds the token: its quotes
    are escaped, ``\\"``). The file is read backward in blocks and searched for the token; a
    token preceded by ``"type"`` and a colon (whitespace allowed) is a candidate, and only
    then is its whole line read and decoded, once per line. The decode decides: a line that
    only mentions the token (tool-call arguments, a nested object) or a torn replace at the
    tail decodes to something else or not at all, and the search goes on before that line.

    Passing over a replace line is only ever slower, never wrong: replaying from an earlier
    replace, or from the start, reaches the same state. (That is the one cost of a tag spelled
    with ``\\u`` escapes, which no encoder writes.)
    """
    end = size  # bytes [0, end) are still to be searched
    overlap = b""  # the first bytes of the block after this one, for a token across the seam
    while end > 0:
        start = max(0, end - _BLOCK)
        f.seek(start)
        chunk = f.read(end - start) + overlap
        overlap = chunk[: len(_TAG) - 1]
        end = start
        hit = len(chunk)
        while (hit := chunk.rfind(_TAG, 0, hit)) >= 0:
            if not _can_be_type_value(chunk, hit, start > 0):
                continue
            newline = chunk.rfind(b"\n", 0, hit)
            line_start = start + newline + 1 if newline >= 0 else _line_start(f, start)
            if _is_replace_line(f, line_start, limit):
                return line_start
            if line_start < start:  # the rest of the block is this line: go on before it
                end, overlap = line_start, b""
                break
            hit = line_start - start
    return None


def _can_be_type_value(chunk: bytes, hit: int, more_before: bool) -> bool:
    """Whether the token at ``chunk[hit]`` can be the value of a ``"type"`` key: only
    whitespace, one colon and ``"type"`` before it. When the bytes looked at run out before
    that is settled (a block seam, absurd whitespace), it is a candidate all the same."""
    lo = max(0, hit - _CONTEXT)
    cut = lo > 0 or more_before  # are there bytes before the window?
    before = chunk[lo:hit].rstrip(_WS)
    if not before:
        return cut
    if before[-1:] != b":":
        return False
    key = before[:-1].rstrip(_WS)
    if key.endswith(_TYPE_KEY):
        return True
    return cut and len(key) < len(_TYPE_KEY) and _TYPE_KEY.endswith(key)


def _line_start(f: BinaryIO, end: int) -> int:
    """Offset just after the last newline before ``end``, or 0."""
    while end > 0:
        start = max(0, end - _BLOCK)
        f.seek(start)
        newline = f.read(end - start).rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        end = start
    return 0


def _is_replace_line(f: BinaryIO, offset: int, limit: int) -> bool:
    line = _read_line_at(f, offset, limit)
    if line is None:
        return False  # over the limit: a bad line in any replay
    try:
        entry = decode(line)
    except BadLine:
        return False  # e.g. a torn replace at the tail: the state before it stands
    return isinstance(entry, ReplaceEntry)


def replay_file(path: Path | str, *, fast: bool = True,
                limit: int = DEFAULT_LINE_LIMIT) -> Replay:
    """Replay a log. With ``fast`` only the part from the last committed replace is read."""
    r = Replay()
    state = _State(r)
    with open(path, "rb") as f:
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
