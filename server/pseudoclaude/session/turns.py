"""How many runs a session has had: the turn number of memory provenance (SPEC §11).

A run appends its user prompt to the log before anything else, and nothing else appends a user
message without a tool result (summaries and undo travel in ``replace`` lines), so the runs of
a session are its ``message`` lines of role ``user`` without ``tool_result`` (but the
notifications of background tasks, :func:`~pseudoclaude.llm.types.is_notification`), counted
over the whole log (compaction does not renumber them). Counted once when a session is taken
up again, then incremented per run, so the numbers survive restarts.
"""

from __future__ import annotations

from pathlib import Path

from pseudoclaude.llm.types import NOTIFICATION_TAG
from pseudoclaude.session.codec import BadLine, MessageEntry, decode
from pseudoclaude.session.loader import _TOO_LONG, DEFAULT_LINE_LIMIT, iter_lines

_RESULT_KEYS = (b'"tool_result":{', b'"ToolResult":{')
"""A tool result's key followed by an object (inside a JSON string a quote is escaped, so
these bytes can only be a key): such lines are results, never prompts, and are not decoded."""


def count_prompts(path: Path | str, limit: int = DEFAULT_LINE_LIMIT) -> int:
    """The user prompts (runs) in the log at ``path``; 0 when there is no log. Bad lines are
    skipped, as in any replay."""
    count = 0
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return 0
    with f:
        for raw in iter_lines(f, limit):
            if raw is _TOO_LONG:
                continue
            assert isinstance(raw, bytes)
            if b'"user"' not in raw or any(key in raw for key in _RESULT_KEYS):
                continue
            try:
                entry = decode(raw)
            except BadLine:
                continue
            if isinstance(entry, MessageEntry) and entry.role == "user" and \
                    entry.tool_result is None and \
                    not entry.content.startswith(NOTIFICATION_TAG):
                count += 1
    return count
