"""What memory tells the rest of the server (SPEC §5): ``on_change`` calls, the index health
warning, and the :class:`~pseudoclaude.events.MemoryEvent` of each update — each also logged
on the ``pseudoclaude.memory`` logger.

Writes that bring the injected index to 80% of either limit (200 lines, 25,600 bytes) emit one
``warning`` event suggesting to consolidate (once per crossing: the index was below before).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from msgspec import UNSET

from pseudoclaude.events import Emit, MemoryChange, MemoryEvent, WarningEvent, ignore
from pseudoclaude.memory.cache import IndexCache
from pseudoclaude.memory.index import MAX_BYTES, MAX_LINES, IndexText
from pseudoclaude.memory.jobs import UpdateJob
from pseudoclaude.memory.notes import LEVELS
from pseudoclaude.memory.proposals import ProposalRecord
from pseudoclaude.memory.store import Change

log = logging.getLogger("pseudoclaude.memory")

EmitTo = Callable[[str, MemoryEvent], None]
"""``(session id, event)``: an update's event, with the session whose run it remembers."""
OnChange = Callable[[str, str], None]
"""``(level, source)``; source is ``update``, ``remember``, ``forget``, ``review`` or
``hand-edit``."""


@dataclass(kw_only=True)
class Reporter:
    """``emit`` receives the events; an update's events go to ``emit_to`` with the session
    whose run it remembers, when given; ``on_change`` hears of every change of a store."""

    cache: IndexCache
    emit: Emit = ignore
    emit_to: EmitTo | None = None
    on_change: OnChange | None = None

    def _emit_for(self, job: UpdateJob | None, event: MemoryEvent) -> None:
        if job is not None and self.emit_to is not None:
            self.emit_to(job.session_id, event)
        else:
            self.emit(event)

    # -- changes -----------------------------------------------------------------------------
    def notify(self, level: str, source: str) -> None:
        callback = self.on_change
        if callback is None:
            return
        try:
            callback(level, source)
        except Exception:
            log.exception("memory change callback failed (%s, %s)", level, source)

    def announce(self, changes: list[Change], hand_edits: list[str], source: str) -> None:
        """Hand edits found while writing first (``hand-edit``), then the levels written."""
        for level in LEVELS:
            if level in hand_edits:
                log.info("%s memory was edited by hand during a %s; the hand edit was kept",
                         level, source)
                self.notify(level, "hand-edit")
        for level in LEVELS:
            if any(c.level == level for c in changes):
                self.notify(level, source)

    def announce_change(self, change: Change, source: str) -> None:
        self.announce([change], [change.level] if change.hand_edit else [], source)

    def check_health(self, before: IndexText) -> None:
        """After a write: a warning when it brought the index to 80% of a limit."""
        after = self.cache.index()
        if not after.crowded or before.crowded:
            return
        message = (f"the memory index is at {after.share:.0%} of its limit ({after.lines}/"
                   f"{MAX_LINES} lines, {after.bytes:,}/{MAX_BYTES:,} bytes): consider "
                   "consolidating notes (merge related ones, forget stale ones) before it "
                   "gets cut")
        log.warning("%s", message)
        self.emit(WarningEvent(message))

    # -- updates -----------------------------------------------------------------------------
    def failed(self, job: UpdateJob, error: str) -> MemoryEvent:
        log.warning("memory update failed (session %s turn %d): %s", job.session_id, job.turn,
                    error)
        event = MemoryEvent("failed", [], error)
        self._emit_for(job, event)
        return event

    def unchanged(self, job: UpdateJob | None = None) -> MemoryEvent:
        event = MemoryEvent("unchanged")
        self._emit_for(job, event)
        return event

    def applied(self, job: UpdateJob, changes: list[Change], reasons: list[str]
                ) -> MemoryEvent:
        """``updated`` (with the reasons operations were refused, if any), ``failed`` when
        nothing changed for a reason, else ``unchanged``."""
        error = "; ".join(reasons)
        if changes:
            event = MemoryEvent("updated", [MemoryChange(c.action, c.level, c.filename)
                                            for c in changes], error or UNSET)
            log.info("memory updated (session %s turn %d): %s", job.session_id, job.turn,
                     ", ".join(f"{c.action} {c.level}/{c.filename}" for c in changes))
        elif reasons:
            return self.failed(job, error)
        else:
            event = MemoryEvent("unchanged")
            log.info("memory unchanged (session %s turn %d)", job.session_id, job.turn)
        self._emit_for(job, event)
        return event

    def proposed(self, job: UpdateJob, proposed: list[ProposalRecord], reasons: list[str]
                 ) -> MemoryEvent:
        if not proposed:
            return self.applied(job, [], reasons)
        error = "; ".join(reasons)
        event = MemoryEvent("proposed", [MemoryChange(p.action, p.level, p.filename)
                                         for p in proposed], error or UNSET)
        log.info("memory proposals queued (session %s turn %d): %s", job.session_id, job.turn,
                 ", ".join(f"{p.id} {p.action} {p.level}/{p.filename}" for p in proposed))
        self._emit_for(job, event)
        return event
