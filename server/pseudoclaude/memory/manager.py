"""The memory of one workspace: both stores, the cached index, updates, direct edits (SPEC §5).

- :meth:`MemoryManager.index_text` is what the system prompt gets (cached; refreshed by
  :meth:`~MemoryManager.refresh`, after every write of this process and by the watcher).
- :meth:`~MemoryManager.schedule_update` queues a background update after a completed run:
  one model call without tools, then validated operations applied project first, then user
  (``mode`` ``auto``) or queued as proposals for review (``confirm``, :mod:`.proposals`).
  Updates of one manager run one at a time, each model call bounded by ``update_timeout``.
  Every outcome is emitted as a :class:`~pseudoclaude.events.MemoryEvent` and logged on the
  ``pseudoclaude.memory`` logger; nothing fails silently, and no failure reaches the run.
- :meth:`~MemoryManager.drain` waits (bounded) for queued updates, for a clean shutdown.
- :meth:`~MemoryManager.remember` / :meth:`~MemoryManager.forget`: direct edits.
- :meth:`~MemoryManager.list_proposals` / :meth:`~MemoryManager.review`: the proposals queue.
- :meth:`~MemoryManager.start_watching`: hand edits refresh the cache and are announced, and
  other processes' changes to the proposals folder are noticed.

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
import logging
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec
from msgspec import UNSET

from pseudoclaude.events import Emit, MemoryChange, MemoryEvent, WarningEvent, ignore
from pseudoclaude.llm.errors import ProviderError
from pseudoclaude.llm.provider import Provider, complete
from pseudoclaude.llm.types import Message, copy_messages
from pseudoclaude.memory.index import MAX_BYTES, MAX_LINES, IndexText, build_index_text
from pseudoclaude.memory.notes import (
    LEVELS,
    NOTE_TYPES,
    derive_summary,
    derive_title,
)
from pseudoclaude.memory.operations import (
    Operation,
    OperationsError,
    Rejected,
    parse_operations,
)
from pseudoclaude.memory.prompt import build_update_prompt
from pseudoclaude.memory.proposals import (
    PROPOSALS_DIR,
    ProposalQueue,
    ProposalRecord,
    ProposalStale,
    ProposalWatcher,
    UnknownProposal,
    accept_state,
    accepted_bytes,
    draft,
    finish_interrupted,
    new_id,
)
from pseudoclaude.memory.sensitive import find_secret
from pseudoclaude.memory.store import (
    Change,
    HandEditKept,
    MemoryStoreError,
    NoteInfo,
    NoteStore,
    StaleNote,
)
from pseudoclaude.memory.watcher import DEBOUNCE, QUIET, MemoryWatcher

log = logging.getLogger("pseudoclaude.memory")

UPDATE_TIMEOUT = 60.0
DRAIN_TIMEOUT = 10.0
DEFAULT_TYPES = {"project": "project_knowledge", "user": "user_preference"}

REMEMBER_SOURCE = "remember"
"""The ``source`` of a note saved by ``remember`` outside any session."""

ProviderSource = Callable[[], Awaitable[Provider]]
OnChange = Callable[[str, str], None]
"""``(level, source)``; source is ``update``, ``remember``, ``forget``, ``review`` or
``hand-edit``."""
OnProposals = Callable[[int], None]
"""``(count)``: the pending proposals changed."""


def provenance(session_id: str, turn: int) -> str:
    """A note's ``source``: ``<session id> turn <n>`` (``n`` the run's 1-based index in the
    session; just the session id before its first run)."""
    return f"{session_id} turn {turn}" if turn > 0 else session_id


@dataclass(frozen=True)
class StoreView:
    level: str
    dir: Path
    index_path: Path
    notes: list[NoteInfo]


@dataclass(frozen=True)
class MemoryView:
    """The data of ``pseudoclaude/memory/show``: ``index`` is exactly what the prompt gets."""

    index: str
    truncated: bool
    stores: list[StoreView]
    lines: int = 0
    """Lines and bytes of the injected index before any cut (its health)."""
    bytes: int = 0


@dataclass(frozen=True)
class Applied:
    """What applying a list of operations did."""

    changes: list[Change]
    rejected: list[str]
    hand_edits: list[str]
    """Levels where a hand edit was found (and kept) while writing."""


@dataclass
class _Job:
    messages: list[Message]
    session_id: str
    turn: int
    mode: str = "auto"


@dataclass(frozen=True)
class Reviewed:
    """The outcome of a review: ``applied`` (accepted and written) and the note's name."""

    applied: bool
    filename: str
    level: str = ""
    decision: str = ""


def _check_level(level: str) -> str:
    if level not in LEVELS:
        raise MemoryStoreError(f"unknown memory level {level!r} (use project or user)", "level")
    return level


def in_level_order(operations: list[Operation]) -> list[Operation]:
    """Project operations first, then user ones (SPEC §5), each in their given order."""
    return [op for level in LEVELS for op in operations if op.level == level]


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
        on_change: OnChange | None = None,
        update_timeout: float = UPDATE_TIMEOUT,
        mode: str = "auto",
        proposals_dir: Path | str | None = None,
        on_proposals: OnProposals | None = None,
    ) -> None:
        self.project = NoteStore("project", project_dir)
        self.user = NoteStore("user", user_dir)
        self.provider = provider
        self.emit = emit
        self.on_change = on_change
        self.update_timeout = update_timeout
        self.mode = mode
        self.proposals = ProposalQueue(
            proposals_dir if proposals_dir is not None
            else self.project.dir.parent / PROPOSALS_DIR)
        self.on_proposals = on_proposals
        self._announced: frozenset[str] | None = None  # proposal ids last announced
        self._announce_lock = threading.Lock()
        self._queue_lock = threading.RLock()
        """Proposing and reviewing in this process, one at a time (an update proposing for a
        note while its proposal is being accepted would race)."""
        self._proposal_watcher: ProposalWatcher | None = None
        self._cache: IndexText | None = None
        self._cache_lock = threading.Lock()
        self._pending: deque[_Job] = deque()
        self._running: _Job | None = None
        self._worker: asyncio.Task[None] | None = None
        self._watcher: MemoryWatcher | None = None

    @property
    def stores(self) -> tuple[NoteStore, NoteStore]:
        """Project first: the order operations are applied and the index is built in."""
        return (self.project, self.user)

    def store(self, level: str) -> NoteStore:
        return self.project if _check_level(level) == "project" else self.user

    # -- the index ---------------------------------------------------------------------------
    def refresh(self) -> IndexText:
        """Re-read both indexes and rebuild the cached text (blocking; thread-safe)."""
        with self._cache_lock:
            text = build_index_text(self.project.read_index(), self.user.read_index())
            self._cache = text
            return text

    async def arefresh(self) -> IndexText:
        return await asyncio.to_thread(self.refresh)

    def index(self) -> IndexText:
        """The cached index (read from disk on first use)."""
        cached = self._cache
        return cached if cached is not None else self.refresh()

    def index_text(self) -> str:
        """What the system prompt gets: the cached injected index ("" when memory is empty)."""
        return self.index().text

    async def show(self) -> MemoryView:
        """Fresh index and note listing of both stores."""
        def gather() -> MemoryView:
            text = self.refresh()
            return MemoryView(text.text, text.truncated, [
                StoreView(s.level, s.dir, s.index_path, s.list_notes()) for s in self.stores],
                text.lines, text.bytes)
        return await asyncio.to_thread(gather)

    def _check_health(self, before: IndexText) -> None:
        """After a write: a warning when it brought the index to 80% of a limit."""
        after = self.index()
        if not after.crowded or before.crowded:
            return
        message = (f"the memory index is at {after.share:.0%} of its limit ({after.lines}/"
                   f"{MAX_LINES} lines, {after.bytes:,}/{MAX_BYTES:,} bytes): consider "
                   "consolidating notes (merge related ones, forget stale ones) before it "
                   "gets cut")
        log.warning("%s", message)
        self.emit(WarningEvent(message))

    # -- notifications -----------------------------------------------------------------------
    def _notify(self, level: str, source: str) -> None:
        callback = self.on_change
        if callback is None:
            return
        try:
            callback(level, source)
        except Exception:
            log.exception("memory change callback failed (%s, %s)", level, source)

    def _announce(self, changes: list[Change], hand_edits: list[str], source: str) -> None:
        for level in LEVELS:
            if level in hand_edits:
                log.info("%s memory was edited by hand during a %s; the hand edit was kept",
                         level, source)
                self._notify(level, "hand-edit")
        for level in LEVELS:
            if any(c.level == level for c in changes):
                self._notify(level, source)

    # -- applying operations -----------------------------------------------------------------
    def _apply_one(self, op: Operation, source: str) -> Change | None:
        store = self.store(op.level)
        if op.action == "create":
            return store.create(op.type, op.title, op.content, summary=op.summary, slug=op.slug,
                                source=source)
        if op.action == "update":
            return store.update(op.filename, op.content, note_type=op.type, title=op.title,
                                summary=op.summary, source=source)
        change = store.delete(op.filename)
        if change is None:
            raise MemoryStoreError(f"there is no note {op.filename!r} in {op.level} memory")
        return change

    def apply(self, operations: list[Operation], source: str) -> Applied:
        """Apply validated operations, project first, then user (blocking). An operation that
        fails is reported in ``rejected``; the others still apply."""
        changes: list[Change] = []
        rejected: list[str] = []
        hand_edits: list[str] = []
        for op in in_level_order(operations):
            try:
                change = self._apply_one(op, source)
            except HandEditKept as exc:
                hand_edits.append(exc.level)
                rejected.append(f"{op.describe()}: {exc}")
                continue
            except MemoryStoreError as exc:
                rejected.append(f"{op.describe()}: {exc}")
                continue
            except OSError as exc:
                rejected.append(f"{op.describe()}: could not write ({exc})")
                log.warning("memory write failed: %s", exc, exc_info=True)
                continue
            if change is not None:
                changes.append(change)
                if change.hand_edit:
                    hand_edits.append(change.level)
        if changes or hand_edits:
            self.refresh()
        return Applied(changes, rejected, hand_edits)

    # -- updates -----------------------------------------------------------------------------
    def schedule_update(self, messages: list[Message], session_id: str, turn: int,
                        mode: str | None = None) -> None:
        """Queue an update from the messages a completed run appended (copied now); ``mode``
        (default: the manager's) says whether it writes or proposes. Call it from the event
        loop; it returns at once and never raises for a memory problem."""
        self._pending.append(_Job(copy_messages(messages), session_id, turn, mode or self.mode))
        self._ensure_worker()

    def _ensure_worker(self) -> asyncio.Task[None] | None:
        """The task working through the queue on the running loop (started when needed; a
        worker left behind on a loop that is gone is replaced)."""
        loop = asyncio.get_running_loop()
        worker = self._worker
        if worker is not None and not worker.done() and worker.get_loop() is loop:
            return worker
        if not self._pending:
            return None
        self._worker = loop.create_task(self._work(), name="memory-update")
        return self._worker

    @property
    def pending(self) -> int:
        """Updates queued or running."""
        return len(self._pending) + (self._running is not None)

    async def _work(self) -> None:
        while self._pending:
            job = self._running = self._pending.popleft()
            try:
                await self.run_update(job.messages, job.session_id, job.turn, mode=job.mode)
            except asyncio.CancelledError:
                self._fail(job, "the memory update was cancelled before it finished")
                raise
            except Exception as exc:  # a bug: still reported, and the queue goes on
                log.exception("memory update crashed")
                self._fail(job, f"internal error: {type(exc).__name__}: {exc}")
            finally:
                self._running = None

    def _fail(self, job: _Job, error: str) -> MemoryEvent:
        log.warning("memory update failed (session %s turn %d): %s", job.session_id, job.turn,
                    error)
        event = MemoryEvent("failed", [], error)
        self.emit(event)
        return event

    async def _ask_model(self, system: str, prompt: str) -> str:
        if self.provider is None:
            raise ProviderError("no model is configured for memory updates")
        provider = await self.provider()
        completion = await complete(provider, system, [Message(role="user", content=prompt)])
        return completion.message.content

    async def run_update(self, messages: list[Message], session_id: str, turn: int, *,
                         mode: str | None = None) -> MemoryEvent:
        """One update, now (the queue calls this). Returns the event it emitted."""
        job = _Job(messages, session_id, turn, mode or self.mode)
        if not messages:
            event = MemoryEvent("unchanged")
            self.emit(event)
            return event
        project_raw, user_raw = await asyncio.to_thread(
            lambda: (self.project.read_index(), self.user.read_index()))
        system, prompt = build_update_prompt(project_raw, user_raw, messages)
        try:
            async with asyncio.timeout(self.update_timeout):
                reply = await self._ask_model(system, prompt)
        except TimeoutError:
            return self._fail(job, f"the memory update timed out after {self.update_timeout:g} s")
        except ProviderError as exc:
            return self._fail(job, str(exc))
        try:
            operations, rejected = parse_operations(reply)
        except OperationsError as exc:
            return self._fail(job, str(exc))
        reasons = [str(r) for r in rejected]
        for r in rejected:
            log.warning("memory operation rejected: %s", r)
        source = provenance(session_id, turn)
        if job.mode == "confirm":
            proposed, refused = await asyncio.to_thread(self.propose, operations, source,
                                                        session_id)
            for reason in refused:
                log.warning("memory operation not proposed: %s", reason)
            await asyncio.to_thread(self.announce_proposals)
            return self._report_proposed(proposed, reasons + refused, job)
        before = self.index()
        applied = await asyncio.to_thread(self.apply, operations, source)
        for reason in applied.rejected:
            log.warning("memory operation not applied: %s", reason)
        reasons += applied.rejected
        self._announce(applied.changes, applied.hand_edits, "update")
        if applied.changes:
            self._check_health(before)
        return self._report(applied.changes, reasons, rejected, job)

    def _report_proposed(self, proposed: list[ProposalRecord], reasons: list[str], job: _Job
                         ) -> MemoryEvent:
        if not proposed:
            return self._report([], reasons, [], job)
        error = "; ".join(reasons)
        event = MemoryEvent("proposed", [MemoryChange(p.action, p.level, p.filename)
                                         for p in proposed], error or UNSET)
        log.info("memory proposals queued (session %s turn %d): %s", job.session_id, job.turn,
                 ", ".join(f"{p.id} {p.action} {p.level}/{p.filename}" for p in proposed))
        self.emit(event)
        return event

    def _report(self, changes: list[Change], reasons: list[str], rejected: list[Rejected],
                job: _Job) -> MemoryEvent:
        error = "; ".join(reasons)
        if changes:
            event = MemoryEvent("updated", [MemoryChange(c.action, c.level, c.filename)
                                            for c in changes], error or UNSET)
            log.info("memory updated (session %s turn %d): %s", job.session_id, job.turn,
                     ", ".join(f"{c.action} {c.level}/{c.filename}" for c in changes))
        elif reasons:
            return self._fail(job, error)
        else:
            event = MemoryEvent("unchanged")
            log.info("memory unchanged (session %s turn %d)", job.session_id, job.turn)
        self.emit(event)
        return event

    async def drain(self, timeout: float = DRAIN_TIMEOUT) -> bool:
        """Wait at most ``timeout`` seconds for queued and running updates; True when none is
        left. Does not cancel anything (see :meth:`close`)."""
        worker = self._ensure_worker()
        if worker is None:
            return True
        await asyncio.wait({worker}, timeout=timeout)
        if worker.done() and not self._pending:
            return True
        log.warning("%d memory update(s) still pending after %.1f s", self.pending, timeout)
        return False

    async def close(self, timeout: float = DRAIN_TIMEOUT) -> None:
        """Shut down: drain (bounded), cancel what is left (each reported as failed), stop the
        watcher."""
        if not await self.drain(timeout):
            worker = self._worker
            abandoned = list(self._pending)
            self._pending.clear()
            if worker is not None and worker.get_loop() is asyncio.get_running_loop():
                worker.cancel()
                await asyncio.wait({worker})
            for job in abandoned:
                self._fail(job, "the memory update did not run: shutting down first")
        await asyncio.to_thread(self.stop_watching)

    # -- direct edits ------------------------------------------------------------------------
    async def remember(self, text: str, level: str, type: str | None = None,
                       title: str | None = None, *, source: str = REMEMBER_SOURCE
                       ) -> tuple[str, Path]:
        """Save ``text`` as a note now; returns ``(filename, path)``. A note of this level
        with the same title is updated instead. ``source`` is its provenance (the session and
        turn, see :func:`provenance`). Raises :class:`MemoryStoreError`."""
        store = self.store(level)
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
        before = self.index()
        change = await asyncio.to_thread(self._remember, store, note_type, note_title, text,
                                         source or REMEMBER_SOURCE)
        self._announce([change], [change.level] if change.hand_edit else [], "remember")
        self._check_health(before)
        return change.filename, change.path

    def _remember(self, store: NoteStore, note_type: str, title: str, text: str,
                  source: str) -> Change:
        change = store.create(note_type, title, text, summary=derive_summary(text),
                              source=source)
        self.refresh()
        log.info("remembered %s/%s", change.level, change.filename)
        return change

    async def forget(self, level: str, filename: str) -> bool:
        """Delete a note and its index line; False when there was no such note. Raises
        :class:`MemoryStoreError` for a bad level or file name."""
        store = self.store(level)
        store.note_path(filename)  # validates the name

        def delete() -> Change | None:
            change = store.delete(filename)
            if change is not None:
                self.refresh()
                log.info("forgot %s/%s", level, filename)
            return change

        try:
            change = await asyncio.to_thread(delete)
        except HandEditKept as exc:
            self._notify(level, "hand-edit")
            raise MemoryStoreError(str(exc), "filename") from None
        if change is None:
            return False
        self._announce([change], [level] if change.hand_edit else [], "forget")
        return True

    # -- proposals (memory.mode: confirm) -----------------------------------------------------
    def propose(self, operations: list[Operation], source: str, session_id: str
                ) -> tuple[list[ProposalRecord], list[str]]:
        """Queue validated operations as proposals, project first, then user (blocking);
        nothing is written to the stores. Returns the proposals and the refused operations."""
        with self._queue_lock:
            return self._propose(operations, source, session_id)

    def _propose(self, operations: list[Operation], source: str, session_id: str
                 ) -> tuple[list[ProposalRecord], list[str]]:
        pending = self.pending_proposals()
        proposed: list[ProposalRecord] = []
        refused: list[str] = []
        for op in in_level_order(operations):
            try:
                planned = draft(self.store(op.level), op, source, pending)
                if planned is None:
                    continue
                proposal = planned.proposal(new_id(), session_id)
                self.proposals.add(proposal)
            except MemoryStoreError as exc:
                refused.append(f"{op.describe()}: {exc}")
                continue
            except OSError as exc:
                refused.append(f"{op.describe()}: could not queue the proposal ({exc})")
                log.warning("memory proposal failed: %s", exc, exc_info=True)
                continue
            pending = [p for p in pending if p.target != proposal.target] + [proposal]
            proposed = [p for p in proposed if p.target != proposal.target] + [proposal]
        return proposed, refused

    def pending_proposals(self) -> list[ProposalRecord]:
        """The queue, oldest first, after finishing any accept a crash interrupted
        (blocking)."""
        with self._queue_lock:
            return self._pending_proposals()

    def _pending_proposals(self) -> list[ProposalRecord]:
        proposals = self.proposals.load()
        finished: list[str] = []
        for proposal in proposals:
            if not proposal.accepting:
                continue
            try:
                if finish_interrupted(self.store(proposal.level), self.proposals, proposal):
                    finished.append(proposal.level)
            except (MemoryStoreError, OSError) as exc:
                log.warning("memory proposal %s: cannot finish its accept: %s", proposal.id,
                            exc)
        if not finished:
            return proposals
        self.refresh()
        for level in LEVELS:
            if level in finished:
                self._notify(level, "review")
        return self.proposals.load()

    async def list_proposals(self) -> list[ProposalRecord]:
        return await asyncio.to_thread(self.pending_proposals)

    def announce_proposals(self, *, initial: bool = False) -> int:
        """Call ``on_proposals(count)`` when the pending proposals differ from those last
        announced (``initial``: only when some are pending, after finishing any accept a
        crash interrupted). Blocking; returns the count."""
        with self._announce_lock:  # read and announced in order (the watcher's thread too)
            pending = self.pending_proposals() if initial else self.proposals.load()
            ids = frozenset(p.id for p in pending)
            changed = ids != self._announced and not (initial and not ids)
            self._announced = ids
            if changed and self.on_proposals is not None:
                try:
                    self.on_proposals(len(ids))
                except Exception:
                    log.exception("memory proposals callback failed")
        return len(ids)

    async def review(self, proposal_id: str, decision: str, content: str | None = None
                     ) -> Reviewed:
        """Accept (write ``after``, or the edited ``content``) or reject a proposal. Raises
        :class:`~pseudoclaude.memory.proposals.UnknownProposal` (field ``id``),
        :class:`MemoryStoreError` (field ``content``) for an unusable edited text and
        :class:`~pseudoclaude.memory.proposals.ProposalStale` when the note changed since."""
        if decision not in ("accept", "reject"):
            raise MemoryStoreError(f"unknown decision {decision!r} (accept or reject)",
                                   "decision")
        before = self.index()
        try:
            reviewed, change = await asyncio.to_thread(self._review, proposal_id, decision,
                                                       content)
        finally:
            await asyncio.to_thread(self.announce_proposals)
        if change is not None:
            self._announce([change], [change.level] if change.hand_edit else [], "review")
            self._check_health(before)
        return reviewed

    def _review(self, proposal_id: str, decision: str, content: str | None
                ) -> tuple[Reviewed, Change | None]:
        with self._queue_lock:
            return self._review_locked(proposal_id, decision, content)

    def _review_locked(self, proposal_id: str, decision: str, content: str | None
                       ) -> tuple[Reviewed, Change | None]:
        proposal = next((p for p in self.pending_proposals() if p.id == proposal_id), None)
        if proposal is None:
            raise UnknownProposal(proposal_id)
        if decision == "reject":
            self.proposals.remove(proposal.id)
            log.info("memory proposal %s rejected (%s/%s)", proposal.id, proposal.level,
                     proposal.filename)
            return Reviewed(False, proposal.filename, proposal.level, decision), None
        store = self.store(proposal.level)
        data = accepted_bytes(proposal, content)
        self.proposals.save(msgspec.structs.replace(proposal, accepting=accept_state(data)))
        try:
            change = store.replace_note(proposal.filename, proposal.before_digest, data,
                                        summary=proposal.summary)
        except StaleNote:
            if self.proposals.get(proposal.id) is not None:
                self.proposals.save(proposal)  # not accepting any more
            log.info("memory proposal %s refused: %s/%s changed since it was proposed",
                     proposal.id, proposal.level, proposal.filename)
            raise ProposalStale(proposal) from None
        self.proposals.remove(proposal.id)
        self.refresh()
        log.info("memory proposal %s accepted%s (%s/%s)", proposal.id,
                 " with an edited text" if content is not None else "", proposal.level,
                 proposal.filename)
        return Reviewed(True, proposal.filename, proposal.level, decision), change

    # -- hand edits --------------------------------------------------------------------------
    def _settled(self, level: str, hand_edit: bool) -> None:
        self.refresh()
        if hand_edit:
            log.info("%s memory was edited by hand", level)
            self._notify(level, "hand-edit")

    def start_watching(self, *, debounce: float = DEBOUNCE, quiet: float = QUIET
                       ) -> MemoryWatcher:
        """Watch both store folders and the proposals folder (created if missing);
        idempotent."""
        if self._watcher is None:
            self._watcher = MemoryWatcher(self.stores, self._settled, debounce=debounce,
                                          quiet=quiet)
        self._watcher.start()
        if self._proposal_watcher is None:
            self._proposal_watcher = ProposalWatcher(self.proposals.dir,
                                                     self.announce_proposals,
                                                     debounce=debounce)
        try:
            self._proposal_watcher.start()
        except OSError as exc:
            log.warning("cannot watch the memory proposals folder %s: %s", self.proposals.dir,
                        exc)
        return self._watcher

    def stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
        if self._proposal_watcher is not None:
            self._proposal_watcher.stop()
