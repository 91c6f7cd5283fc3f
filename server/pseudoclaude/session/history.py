"""Every ``replace`` of a session log with the history it replaced (for undo, SPEC §11).

A full replay of the log, line by line, that keeps a snapshot of the live history (and the
Layer-1 ledger) just before each ``replace`` that carries its messages. Bad lines are skipped
as in any replay. Used only by undo, so its cost (the whole log) is paid on request.
"""

from __future__ import annotations

from pathlib import Path

from pseudoclaude.conversation import PastReplace
from pseudoclaude.llm.types import Message
from pseudoclaude.session.codec import MessageEntry, ReplaceEntry
from pseudoclaude.session.loader import DEFAULT_LINE_LIMIT, Replay, _State, iter_entries


def _snapshot(state: _State) -> list[Message]:
    return [e.to_message() if type(e) is MessageEntry else e  # type: ignore[misc]
            for e in state.items]


def compaction_history(path: Path | str, limit: int = DEFAULT_LINE_LIMIT) -> list[PastReplace]:
    """The replaces of the log at ``path``, oldest first (the Go original's markers, which
    carry no messages, are replayed but not listed)."""
    out: list[PastReplace] = []
    state = _State(Replay())
    for entry in iter_entries(path, limit):
        if type(entry) is ReplaceEntry and entry.messages is not None:
            before = _snapshot(state)
            offloads, kept = dict(state.r.offloads), frozenset(state.r.kept)
            state.apply(entry)
            out.append(PastReplace(entry.reason, before, _snapshot(state), offloads, kept))
        else:
            state.apply(entry)
    return out
