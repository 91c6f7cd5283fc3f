"""The tool results a session's log recorded, all of them (a full read of the log).

Unlike a resume, which replays from the last ``replace`` (SPEC §3), this reads every line: a
result that was later spilled (Layer 1) or summarized away (Layer 2) is still on its own line,
as it came from the tool. The conversation a forked session started with (its ``replace`` of
reason ``fork``) counts too: it is the history the session began with. Other ``replace`` lines
(a compaction's, a rewind's, a repair's) repeat results already on their own lines, or take the
conversation back: they add nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pseudoclaude.llm.types import ToolResult
from pseudoclaude.session.codec import BadLine, MessageEntry, ReplaceEntry, decode
from pseudoclaude.session.loader import DEFAULT_LINE_LIMIT, iter_lines
from pseudoclaude.session.timeline import FORK


def tool_results(path: Path | str, *, containing: bytes = b"",
                 limit: int = DEFAULT_LINE_LIMIT) -> Iterator[ToolResult]:
    """Every tool result of the log at ``path``, in order (none when there is no log yet).

    ``containing``: only lines holding these bytes are decoded (the others are skipped
    unread: a cheap filter for a few results among many lines). Bad and over-long lines are
    skipped, as in any replay.
    """
    try:
        f = open(path, "rb")  # noqa: SIM115 (closed below; a missing log is no results)
    except FileNotFoundError:
        return
    with f:
        for raw in iter_lines(f, limit):
            if not isinstance(raw, bytes) or (containing and containing not in raw):
                continue
            try:
                entry = decode(raw)
            except BadLine:
                continue
            if type(entry) is MessageEntry:
                if entry.tool_result is not None:
                    yield entry.tool_result
            elif type(entry) is ReplaceEntry and entry.reason == FORK:
                for message in entry.messages or ():
                    if message.tool_result is not None:
                        yield message.tool_result
