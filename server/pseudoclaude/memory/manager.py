"""The memory of one workspace: both stores, the cached index, updates, direct edits (SPEC §5).

:class:`MemoryManager` is the facade over the modules that do each job:

- :meth:`MemoryManager.index_text` is what the system prompt gets (cached; refreshed by
  :meth:`~MemoryManager.refresh`, after every write of this process and by the watcher):
  :mod:`.cache`.
- :meth:`~MemoryManager.schedule_update` queues a background update after a completed run:
  one model call without tools, then validated operations applied project first, then user
  (``mode`` ``auto``, :mod:`.applying`) or queued as proposals for review (``confirm``,
  :mod:`.consent`). Updates of one manager run one at a time (:mod:`.jobs`), each model call
  bounded by ``update_timeout`` (:mod:`.updates`). Every outcome is emitted as a
  :class:`~pseudoclaude.events.MemoryEvent` and logged on the ``pseudoclaude.memory`` logger
  (:mod:`.reporting`); nothing fails silently, and no failure reaches the run.
- :meth:`~MemoryManager.drain` waits (bounded) for queued updates, for a clean shutdown.
- :meth:`~MemoryManager.remember` / :meth:`~MemoryManager.forget`: direct edits
  (:mod:`.edits`).
- :meth:`~MemoryManager.list_proposals` / :meth:`~MemoryManager.review`: the proposals queue.
- :meth:`~MemoryManager.start_watching`: hand edits refresh the cache and are announced, and
  other processes' changes to the proposals folder are noticed (:mod:`.watching`).

Writes of an update, ``remember`` and an accepted proposal that bring the injected index to
80% of either limit (200 lines, 25,600 bytes) emit one ``warning`` event suggesting to
consolidate (once per crossing: the index was below before that write).

``on_change(level, source)`` is called with ``source`` ``update``, ``remember``, ``forget`` or
``review`` after this manager's own writes (on the event loop's thread) and ``hand-edit`` for a
change made by anything else: **that call comes from the watcher's thread** when the watcher
saw it, so a callback living on an event loop must hop to it (``loop.call_soon_threadsafe``).
``on_proposals(count)`` is called when the set of pending proposals changed (from the loop, or
from the watcher's thread for another process's change).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Generic, TypeVar

from pseudoclaude.events import Emit, MemoryEvent, ignore
from pseudoclaude.llm.types import Message, copy_messages
from pseudoclaude.memory.applying import Applied, apply_operations
from pseudoclaude.memory.cache import IndexCache, MemoryView, StoreView
from pseudoclaude.memory.consent import Consent, OnProposals, Proposed, Reviewed
from pseudoclaude.memory.edits import (
    DEFAULT_TYPES,
    REMEMBER_SOURCE,
    DirectEdits,
    Remembered,
    provenance,
)
from pseudoclaude.memory.index import IndexText
from pseudoclaude.memory.jobs import DRAIN_TIMEOUT, UpdateJob, UpdateQueue
from pseudoclaude.memory.levels import Levels, in_level_order
from pseudoclaude.memory.operations import Operation
from pseudoclaude.memory.proposals import PROPOSALS_DIR, ProposalQueue, ProposalRecord
from pseudoclaude.memory.reporting import EmitTo, OnChange, Reporter
from pseudoclaude.memory.store import NoteStore
from pseudoclaude.memory.updates import UPDATE_TIMEOUT, ProviderSource, Updater
from pseudoclaude.memory.watcher import DEBOUNCE, QUIET, MemoryWatcher
from pseudoclaude.memory.watching import Watching

__all__ = [
    "DEFAULT_TYPES",
    "DRAIN_TIMEOUT",
    "REMEMBER_SOURCE",
    "UPDATE_TIMEOUT",
    "Applied",
    "MemoryManager",
    "MemoryView",
    "OnChange",
    "OnProposals",
    "Proposed",
    "ProviderSource",
    "Remembered",
    "Reviewed",
    "StoreView",
    "in_level_order",
    "provenance",
]

T = TypeVar("T")


class _Setting(Generic[T]):
    """An attribute of the manager that is the same-named attribute of one of its parts
    (``part``: the manager's attribute holding it), read and set through the manager."""

    def __init__(self, part: str) -> None:
        self.part = part
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, manager: object, owner: type | None = None) -> T:
        value: T = getattr(getattr(manager, self.part), self.name)
        return value

    def __set__(self, manager: object, value: T) -> None:
        setattr(getattr(manager, self.part), self.name, value)


class MemoryManager:
    """Project and user memory of one workspace.

    ``provider`` gives the model used for updates (called once per update; None: updates are
    reported as failed). ``emit`` receives one :class:`MemoryEvent` per update (and the index
    health warnings). ``mode`` is ``auto`` or ``confirm`` (``off`` only stops the caller from
    scheduling updates). Proposals live in ``proposals_dir`` (default: ``proposals/`` beside
    the project store, i.e. ``<dataDir>/proposals``).
    """

    def __init__(
        self,
        project_dir: Path | str,
        user_dir: Path | str,
        *,
        provider: ProviderSource | None = None,
        emit: Emit = ignore,
        emit_to: EmitTo | None = None,
        on_change: OnChange | None = None,
        update_timeout: float = UPDATE_TIMEOUT,
        mode: str = "auto",
        proposals_dir: Path | str | None = None,
        on_proposals: OnProposals | None = None,
    ) -> None:
        levels = self._levels = Levels.open(project_dir=project_dir, user_dir=user_dir)
        self.project = levels.project
        self.user = levels.user
        self.proposals = ProposalQueue(
            proposals_dir if proposals_dir is not None
            else self.project.dir.parent / PROPOSALS_DIR)
        cache = self._cache = IndexCache(levels)
        reporter = self._reporter = Reporter(cache=cache, emit=emit, emit_to=emit_to,
                                                   on_change=on_change)
        self._consent = Consent(queue=self.proposals, levels=levels, cache=cache,
                                reporter=reporter, on_proposals=on_proposals)
        self._edits = DirectEdits(levels=levels, cache=cache, reporter=reporter)
        self._updater = Updater(levels=levels, cache=cache, reporter=reporter,
                                consent=self._consent, provider=provider,
                                update_timeout=update_timeout, mode=mode)
        self._jobs = UpdateQueue(run=self._updater.run, fail=reporter.failed)
        self._watching = Watching(levels=levels, cache=cache, reporter=reporter,
                                  proposals_dir=self.proposals.dir,
                                  announce_proposals=self.announce_proposals)

    # -- settings (changeable after construction) ---------------------------------------------
    provider = _Setting[ProviderSource | None]("_updater")
    mode = _Setting[str]("_updater")
    update_timeout = _Setting[float]("_updater")
    emit = _Setting[Emit]("_reporter")
    on_change = _Setting[OnChange | None]("_reporter")
    on_proposals = _Setting[OnProposals | None]("_consent")

    # -- the stores --------------------------------------------------------------------------
    @property
    def stores(self) -> tuple[NoteStore, NoteStore]:
        """Project first: the order operations are applied and the index is built in."""
        return self._levels.stores

    def store(self, level: str) -> NoteStore:
        return self._levels.store(level)

    # -- the index ---------------------------------------------------------------------------
    def refresh(self) -> IndexText:
        """Re-read both indexes and rebuild the cached text (blocking; thread-safe)."""
        return self._cache.refresh()

    async def arefresh(self) -> IndexText:
        return await self._cache.arefresh()

    def index(self) -> IndexText:
        """The cached index (read from disk on first use)."""
        return self._cache.index()

    def index_text(self) -> str:
        """What the system prompt gets: the cached injected index ("" when memory is empty)."""
        return self._cache.index().text

    async def show(self) -> MemoryView:
        """Fresh index and note listing of both stores."""
        return await asyncio.to_thread(self._cache.view)

    # -- applying operations -----------------------------------------------------------------
    def apply(self, operations: list[Operation], source: str) -> Applied:
        """Apply validated operations, project first, then user (blocking). An operation that
        fails is reported in ``rejected``; the others still apply."""
        return apply_operations(operations, source, levels=self._levels, cache=self._cache)

    # -- updates -----------------------------------------------------------------------------
    def schedule_update(self, messages: list[Message], session_id: str, turn: int,
                        mode: str | None = None) -> None:
        """Queue an update from the messages a completed run appended (copied now); ``mode``
        (default: the manager's) says whether it writes or proposes. Call it from the event
        loop; it returns at once and never raises for a memory problem."""
        self._jobs.schedule(UpdateJob(messages=copy_messages(messages), session_id=session_id,
                                      turn=turn, mode=mode or self.mode))

    @property
    def pending(self) -> int:
        """Updates queued or running."""
        return self._jobs.pending

    async def run_update(self, messages: list[Message], session_id: str, turn: int, *,
                         mode: str | None = None) -> MemoryEvent:
        """One update, now (the queue calls this). Returns the event it emitted."""
        return await self._updater.run(UpdateJob(messages=messages, session_id=session_id,
                                                 turn=turn, mode=mode or self.mode))

    async def drain(self, timeout: float = DRAIN_TIMEOUT) -> bool:
        """Wait at most ``timeout`` seconds for queued and running updates; True when none is
        left. Does not cancel anything (see :meth:`close`)."""
        return await self._jobs.drain(timeout)

    async def close(self, timeout: float = DRAIN_TIMEOUT) -> None:
        """Shut down: drain (bounded), cancel what is left (each reported as failed), stop the
        watcher."""
        await self._jobs.close(timeout)
        await asyncio.to_thread(self.stop_watching)

    # -- direct edits ------------------------------------------------------------------------
    async def remember(self, text: str, level: str, type: str | None = None,
                       title: str | None = None, *, source: str = REMEMBER_SOURCE
                       ) -> Remembered:
        """Save ``text`` as a note now; returns ``(filename, path)``. A note of this level
        with the same title is updated instead. ``source`` is its provenance (the session and
        turn, see :func:`provenance`). Raises :class:`MemoryStoreError`."""
        return await self._edits.remember(text, level, type, title, source=source)

    async def forget(self, level: str, filename: str) -> bool:
        """Delete a note and its index line; False when there was no such note. Raises
        :class:`MemoryStoreError` for a bad level or file name."""
        return await self._edits.forget(level, filename)

    # -- proposals (memory.mode: confirm) -----------------------------------------------------
    def propose(self, operations: list[Operation], source: str, session_id: str) -> Proposed:
        """Queue validated operations as proposals, project first, then user (blocking);
        nothing is written to the stores. Returns the proposals and the refused operations."""
        return self._consent.propose(operations, source, session_id)

    def pending_proposals(self) -> list[ProposalRecord]:
        """The queue, oldest first, after finishing any accept a crash interrupted
        (blocking)."""
        return self._consent.pending()

    async def list_proposals(self) -> list[ProposalRecord]:
        return await asyncio.to_thread(self.pending_proposals)

    def announce_proposals(self, *, initial: bool = False) -> int:
        """Call ``on_proposals(count)`` when the pending proposals differ from those last
        announced (``initial``: only when some are pending, after finishing any accept a
        crash interrupted). Blocking; returns the count."""
        return self._consent.announce(initial=initial)

    async def review(self, proposal_id: str, decision: str, content: str | None = None
                     ) -> Reviewed:
        """Accept (write ``after``, or the edited ``content``) or reject a proposal (see
        :meth:`.consent.Consent.review` for what it raises)."""
        return await self._consent.review(proposal_id, decision, content)

    # -- hand edits --------------------------------------------------------------------------
    def start_watching(self, *, debounce: float = DEBOUNCE, quiet: float = QUIET
                       ) -> MemoryWatcher:
        """Watch both store folders and the proposals folder (created if missing);
        idempotent."""
        return self._watching.start(debounce=debounce, quiet=quiet)

    def stop_watching(self) -> None:
        self._watching.stop()
