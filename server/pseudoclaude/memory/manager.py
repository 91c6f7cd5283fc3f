"""The memory of one workspace: both stores, the cached index, updates, direct edits (SPEC §5).

- :meth:`MemoryManager.index_text` is what the system prompt gets (cached; refreshed by
  :meth:`~MemoryManager.refresh`, after every write of this process and by the watcher).
- :meth:`~MemoryManager.schedule_update` queues a background update after a completed run:
  one model call without tools, then validated operations applied project first, then user.
  Updates of one manager run one at a time, each model call bounded by ``update_timeout``.
  Every outcome is emitted as a :class:`~pseudoclaude.events.MemoryEvent` and logged on the
  ``pseudoclaude.memory`` logger; nothing fails silently, and no failure reaches the run.
- :meth:`~MemoryManager.drain` waits (bounded) for queued updates, for a clean shutdown.
- :meth:`~MemoryManager.remember` / :meth:`~MemoryManager.forget`: direct edits.
- :meth:`~MemoryManager.start_watching`: hand edits refresh the cache and are announced.

``on_change(level, source)`` is called with ``source`` ``update``, ``remember`` or ``forget``
after this manager's own writes (on the event loop's thread) and ``hand-edit`` for a change
made by anything else: **that call comes from the watcher's thread** when the watcher saw it,
so a callback living on an event loop must hop to it (``loop.call_soon_threadsafe``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from msgspec import UNSET

from pseudoclaude.events import Emit, MemoryChange, MemoryEvent, ignore
from pseudoclaude.llm.errors import ProviderError
from pseudoclaude.llm.provider import Provider, complete
from pseudoclaude.llm.types import Message, copy_messages
from pseudoclaude.memory.index import IndexText, build_index_text
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
from pseudoclaude.memory.sensitive import find_secret
from pseudoclaude.memory.store import (
    Change,
    HandEditKept,
    MemoryStore,
    MemoryStoreError,
    NoteInfo,
)
from pseudoclaude.memory.watcher import DEBOUNCE, QUIET, MemoryWatcher

log = logging.getLogger("pseudoclaude.memory")

UPDATE_TIMEOUT = 60.0
DRAIN_TIMEOUT = 10.0
DEFAULT_TYPES = {"project": "project_knowledge", "user": "user_preference"}

ProviderSource = Callable[[], Awaitable[Provider]]
OnChange = Callable[[str, str], None]
"""``(level, source)``; source is ``update``, ``remember``, ``forget`` or ``hand-edit``."""


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


def _check_level(level: str) -> str:
    if level not in LEVELS:
        raise MemoryStoreError(f"unknown memory level {level!r} (use project or user)", "level")
    return level


class MemoryManager:
    """Project and user memory of one workspace.

    ``provider`` gives the model used for updates (called once per update; None: updates are
    reported as failed). ``emit`` receives one :class:`MemoryEvent` per update.
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
    ) -> None:
        self.project = MemoryStore("project", project_dir)
        self.user = MemoryStore("user", user_dir)
        self.provider = provider
        self.emit = emit
        self.on_change = on_change
        self.update_timeout = update_timeout
        self._cache: IndexText | None = None
        self._cache_lock = threading.Lock()
        self._pending: deque[_Job] = deque()
        self._running: _Job | None = None
        self._worker: asyncio.Task[None] | None = None
        self._watcher: MemoryWatcher | None = None

    @property
    def stores(self) -> tuple[MemoryStore, MemoryStore]:
        """Project first: the order operations are applied and the index is built in."""
        return (self.project, self.user)

    def store(self, level: str) -> MemoryStore:
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
                StoreView(s.level, s.dir, s.index_path, s.list_notes()) for s in self.stores])
        return await asyncio.to_thread(gather)

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
        for level in LEVELS:
            for op in operations:
                if op.level != level:
                    continue
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
    def schedule_update(self, messages: list[Message], session_id: str, turn: int) -> None:
        """Queue an update from the messages a completed run appended (copied now). Call it
        from the event loop; it returns at once and never raises for a memory problem."""
        self._pending.append(_Job(copy_messages(messages), session_id, turn))
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
                await self.run_update(job.messages, job.session_id, job.turn)
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

    async def run_update(self, messages: list[Message], session_id: str, turn: int
                         ) -> MemoryEvent:
        """One update, now (the queue calls this). Returns the event it emitted."""
        job = _Job(messages, session_id, turn)
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
        source = f"session {session_id} turn {turn}"
        applied = await asyncio.to_thread(self.apply, operations, source)
        for reason in applied.rejected:
            log.warning("memory operation not applied: %s", reason)
        reasons += applied.rejected
        self._announce(applied.changes, applied.hand_edits, "update")
        return self._report(applied.changes, reasons, rejected, job)

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
                       title: str | None = None) -> tuple[str, Path]:
        """Save ``text`` as a note now; returns ``(filename, path)``. A note of this level
        with the same title is updated instead. Raises :class:`MemoryStoreError`."""
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
        change = await asyncio.to_thread(self._remember, store, note_type, note_title, text)
        self._announce([change], [change.level] if change.hand_edit else [], "remember")
        return change.filename, change.path

    def _remember(self, store: MemoryStore, note_type: str, title: str, text: str) -> Change:
        change = store.create(note_type, title, text, summary=derive_summary(text),
                              source="remember")
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

    # -- hand edits --------------------------------------------------------------------------
    def _settled(self, level: str, hand_edit: bool) -> None:
        self.refresh()
        if hand_edit:
            log.info("%s memory was edited by hand", level)
            self._notify(level, "hand-edit")

    def start_watching(self, *, debounce: float = DEBOUNCE, quiet: float = QUIET
                       ) -> MemoryWatcher:
        """Watch both store folders (created if missing); idempotent."""
        if self._watcher is None:
            self._watcher = MemoryWatcher(self.stores, self._settled, debounce=debounce,
                                          quiet=quiet)
        self._watcher.start()
        return self._watcher

    def stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
