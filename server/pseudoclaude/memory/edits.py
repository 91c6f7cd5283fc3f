"""Direct edits of memory (SPEC §5): ``remember`` saves a note now, ``forget`` deletes one."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from pseudoclaude.memory.cache import IndexCache
from pseudoclaude.memory.levels import Levels
from pseudoclaude.memory.notes import NOTE_TYPES, derive_summary, derive_title
from pseudoclaude.memory.reporting import Reporter
from pseudoclaude.memory.sensitive import find_secret
from pseudoclaude.memory.store import Change, HandEditKept, MemoryStoreError, NoteStore

log = logging.getLogger("pseudoclaude.memory")

DEFAULT_TYPES = {"project": "project_knowledge", "user": "user_preference"}

REMEMBER_SOURCE = "remember"
"""The ``source`` of a note saved by ``remember`` outside any session."""


def provenance(session_id: str, turn: int) -> str:
    """A note's ``source``: ``<session id> turn <n>`` (``n`` the run's 1-based index in the
    session; just the session id before its first run)."""
    return f"{session_id} turn {turn}" if turn > 0 else session_id


class Remembered(NamedTuple):
    """The note ``remember`` saved (a pair, for the callers that unpack it)."""

    filename: str
    path: Path


@dataclass(frozen=True, kw_only=True)
class DirectEdits:
    levels: Levels
    cache: IndexCache
    reporter: Reporter

    async def remember(self, text: str, level: str, type: str | None = None,
                       title: str | None = None, *, source: str = REMEMBER_SOURCE
                       ) -> Remembered:
        """Save ``text`` as a note now. A note of this level with the same title is updated
        instead. ``source`` is its provenance (the session and turn, see
        :func:`provenance`). Raises :class:`MemoryStoreError`."""
        store = self.levels.store(level)
        note_type = type or DEFAULT_TYPES[level]
        if note_type not in NOTE_TYPES:
            raise MemoryStoreError(
                f"unknown memory type {note_type!r} (use one of {', '.join(NOTE_TYPES)})",
                "type")
        if not text.strip():
            raise MemoryStoreError("nothing to remember: the text is empty", "text")
        for field, value in (("text", text), ("title", title or "")):
            kind = find_secret(value)
            if kind is not None:
                raise MemoryStoreError(
                    f"refused: the {field} looks like it contains {kind}; memory never stores "
                    "secrets", field)
        note_title = (title or "").strip() or derive_title(text)
        before = self.cache.index()

        def save() -> Change:
            return self._save(store, note_type=note_type, title=note_title, text=text,
                              source=source or REMEMBER_SOURCE)

        change = await asyncio.to_thread(save)
        self.reporter.announce_change(change, "remember")
        self.reporter.check_health(before)
        return Remembered(filename=change.filename, path=change.path)

    def _save(self, store: NoteStore, *, note_type: str, title: str, text: str,
              source: str) -> Change:
        change = store.create(note_type, title, text, summary=derive_summary(text),
                              source=source)
        self.cache.refresh()
        log.info("remembered %s/%s", change.level, change.filename)
        return change

    async def forget(self, level: str, filename: str) -> bool:
        """Delete a note and its index line; False when there was no such note. Raises
        :class:`MemoryStoreError` for a bad level or file name."""
        store = self.levels.store(level)
        store.note_path(filename)  # validates the name

        def delete() -> Change | None:
            change = store.delete(filename)
            if change is not None:
                self.cache.refresh()
                log.info("forgot %s/%s", level, filename)
            return change

        try:
            change = await asyncio.to_thread(delete)
        except HandEditKept as exc:
            self.reporter.notify(level, "hand-edit")
            raise MemoryStoreError(str(exc), "filename") from None
        if change is None:
            return False
        self.reporter.announce_change(change, "forget")
        return True
