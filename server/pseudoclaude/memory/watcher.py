"""Notice hand edits of the memory stores with a watchdog observer (SPEC §5).

Each store **folder** is watched (not the files: an atomic save replaces the file, and a watch
on the old inode would go deaf). Relevant events are ``modified``/``closed`` (an in-place
write), ``created``, ``moved`` (an editor's atomic save: a temp file renamed onto
``MEMORY.md``; a note renamed away) and ``deleted``, for ``MEMORY.md`` and note files
(``*.md`` not starting with a dot; temp files, backups and lock files are ignored).

Events are coalesced per level into bursts: a burst ends after ``quiet`` seconds without a new
event, and never lasts longer than ``debounce`` seconds after its first event, so a hand edit
is reported within ``debounce`` seconds (0.3 s by default) and a burst of writes is reported
once. When a burst ends, each file it touched is read and compared with what this process
wrote there (:class:`~pseudoclaude.memory.atomic.FileStates`): ``on_settled(level,
hand_edit)`` is then called with ``hand_edit`` True when anything else changed a file.

A store folder that is deleted (``rm -rf``) is reported as a change of every file in it; the
watcher then looks every :data:`REARM_POLL` seconds for the folder to come back (recreated by
hand, or by the next write of this process) and watches it again.

Threads: ``on_settled`` is called from the watcher's own thread (never the event loop's); a
caller living on an asyncio loop must hop to it (``loop.call_soon_threadsafe``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from watchdog.events import (
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from pseudoclaude.memory.atomic import digest, read_bytes
from pseudoclaude.memory.notes import INDEX_NAME, unsafe_filename
from pseudoclaude.memory.store import NoteStore

log = logging.getLogger("pseudoclaude.memory")

DEBOUNCE = 0.3
QUIET = 0.15
REARM_POLL = 0.5
"""While a watched store folder is gone, how often to look whether it is back."""
_EVENTS: list[type[FileSystemEvent]] = [
    FileModifiedEvent, FileClosedEvent, FileCreatedEvent, FileDeletedEvent, FileMovedEvent,
    DirDeletedEvent, DirMovedEvent,
]

OnSettled = Callable[[str, bool], None]
"""``(level, hand_edit)``: a burst of changes to one level's files has settled."""


def relevant(name: str) -> bool:
    """Whether a file name in a store folder is ``MEMORY.md`` or a note."""
    return name == INDEX_NAME or unsafe_filename(name) is None


@dataclass
class _Burst:
    first: float
    last: float
    names: set[str] = field(default_factory=set)
    everything: bool = False


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: MemoryWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = [event.src_path]
        if event.dest_path:
            paths.append(event.dest_path)
        for raw in paths:
            self.watcher.touch(os.fsdecode(raw), event.is_directory)


class MemoryWatcher:
    """Watches the folders of ``stores``; ``start()`` and ``stop()`` may be called any number
    of times (also ``stop()`` before ``start()``)."""

    def __init__(self, stores: Sequence[NoteStore], on_settled: OnSettled, *,
                 debounce: float = DEBOUNCE, quiet: float = QUIET) -> None:
        self.stores = list(stores)
        self.on_settled = on_settled
        self.debounce = debounce
        self.quiet = min(quiet, debounce)
        self.bursts = 0
        """Bursts reported so far (all levels)."""
        self._dirs: dict[str, list[NoteStore]] = {}
        self._cond = threading.Condition()
        self._pending: dict[str, _Burst] = {}
        self._observer: BaseObserver | None = None
        self._watches: dict[str, ObservedWatch] = {}
        self._handler = _Handler(self)
        self._dead: set[str] = set()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._lifecycle = threading.Lock()

    @property
    def running(self) -> bool:
        return self._observer is not None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """Create missing store folders and start watching them (no-op when running)."""
        with self._lifecycle:
            if self._observer is not None:
                return
            self._dirs = {}
            for store in self.stores:
                store.ensure()
                self._dirs.setdefault(os.path.realpath(store.dir), []).append(store)
            observer = Observer()
            self._watches = {
                directory: observer.schedule(self._handler, directory, recursive=False,
                                             event_filter=_EVENTS)
                for directory in self._dirs}
            with self._cond:
                self._stopping = False
                self._pending.clear()
                self._dead.clear()
            self._thread = threading.Thread(target=self._run, name="memory-watcher",
                                            daemon=True)
            self._thread.start()
            observer.daemon = True
            observer.start()
            self._observer = observer
            for store in self.stores:  # the baseline: files as they are now
                for name, state in store.snapshot().items():
                    store.files.seed(name, state)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching (no-op when not running). Changes not yet reported are dropped."""
        with self._lifecycle:
            observer, thread = self._observer, self._thread
            self._observer = self._thread = None
            if observer is None:
                return
            with self._cond:
                self._stopping = True
                self._pending.clear()
                self._cond.notify_all()
        observer.stop()
        observer.join(timeout)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # -- events (watchdog's thread) ----------------------------------------------------------
    def touch(self, path: str, is_directory: bool = False) -> None:
        """Record a change of ``path`` (called from the observer's thread)."""
        directory, name = os.path.split(path)
        stores = self._dirs.get(directory)
        everything = False
        if stores is None:
            stores = self._dirs.get(path) if is_directory else None
            if stores is None:
                return
            everything = True  # the store folder itself went away (or was moved)
        elif is_directory or not relevant(name):
            return
        now = time.monotonic()
        with self._cond:
            if everything:
                self._dead.add(path)
            for store in stores:
                burst = self._pending.get(store.level)
                if burst is None:
                    burst = self._pending[store.level] = _Burst(now, now)
                burst.last = now
                if everything:
                    burst.everything = True
                else:
                    burst.names.add(name)
            self._cond.notify_all()

    # -- settling (the watcher's thread) -----------------------------------------------------
    def _due(self, burst: _Burst) -> float:
        return min(burst.last + self.quiet, burst.first + self.debounce)

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._stopping:
                        return
                    now = time.monotonic()
                    ready = [level for level, b in self._pending.items() if self._due(b) <= now]
                    revived = [d for d in self._dead if os.path.isdir(d)]
                    if ready or revived:
                        settled = [(level, self._pending.pop(level)) for level in ready]
                        self._dead.difference_update(revived)
                        break
                    dues = [self._due(b) for b in self._pending.values()]
                    if self._dead:
                        dues.append(now + REARM_POLL)
                    wait = min(dues, default=None)
                    self._cond.wait(None if wait is None else max(0.0, wait - now))
            for directory in revived:
                self._rearm(directory)
            for level, burst in settled:
                self._settle(level, burst)

    def _rearm(self, directory: str) -> None:
        """Watch a store folder again after it was deleted and came back."""
        with self._lifecycle:
            observer = self._observer
            if observer is None:
                return
            old = self._watches.pop(directory, None)
            if old is not None:
                with contextlib.suppress(KeyError, OSError):
                    observer.unschedule(old)
            try:
                self._watches[directory] = observer.schedule(
                    self._handler, directory, recursive=False, event_filter=_EVENTS)
            except OSError as exc:
                log.warning("memory watcher: cannot watch %s again: %s", directory, exc)
                return
        log.info("memory watcher: watching %s again", directory)
        self.touch(directory, is_directory=True)  # whatever it holds now is new
        with self._cond:
            self._dead.discard(directory)

    def _settle(self, level: str, burst: _Burst) -> None:
        store = next((s for s in self.stores if s.level == level), None)
        if store is None:
            return
        names = set(burst.names)
        if burst.everything:
            names |= set(store.snapshot()) | {INDEX_NAME}
        hand_edit = False
        for name in sorted(names):
            try:
                state = digest(read_bytes(store.dir / name))
            except OSError as exc:
                log.warning("memory watcher: cannot read %s: %s", store.dir / name, exc)
                hand_edit = True
                continue
            if store.files.observe(name, state):
                hand_edit = True
        self.bursts += 1
        try:
            self.on_settled(level, hand_edit)
        except Exception:
            log.exception("memory watcher: change callback failed")
