"""What a session's model requests were billed: the sum of the usage stamps of its log.

Each assistant ``message`` line carries the provider's usage for its turn (SPEC §11
"Details"); compaction never removes a line, so the sum over the whole log is what the session
has used since it began, across restarts (a ``replace`` line's copies are not new requests and
are not counted).
"""

from __future__ import annotations

from pathlib import Path

from pseudoclaude.llm.types import Usage
from pseudoclaude.session.codec import BadLine, MessageEntry, decode
from pseudoclaude.session.loader import _TOO_LONG, DEFAULT_LINE_LIMIT, iter_lines

_USAGE_KEY = b'"usage"'
"""Only lines with this key can carry a stamp (in any JSON spelling); the others are not
decoded."""


def logged_usage(path: Path | str, limit: int = DEFAULT_LINE_LIMIT) -> Usage | None:
    """The summed usage of the log at ``path``; ``None`` when no line reports any (or there is
    no log). Bad lines are skipped, as in any replay. Blocking: one read of the log."""
    total = Usage()
    stamped = False
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return None
    with f:
        for raw in iter_lines(f, limit):
            if raw is _TOO_LONG:
                continue
            assert isinstance(raw, bytes)
            if _USAGE_KEY not in raw:
                continue
            try:
                entry = decode(raw)
            except BadLine:
                continue
            if isinstance(entry, MessageEntry) and entry.usage is not None:
                stamped = True
                u = entry.usage
                total.input_tokens += u.input_tokens
                total.output_tokens += u.output_tokens
                total.cache_read += u.cache_read
                total.cache_write += u.cache_write
    return total if stamped else None
