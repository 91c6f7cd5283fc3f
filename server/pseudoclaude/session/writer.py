"""The append-only session writer (SPEC §3).

Every line is written with one ``write`` on an ``O_APPEND`` descriptor and fsynced before the
append returns, unless the caller groups lines with :meth:`SessionWriter.batch` (one fsync at
the end of the batch). A replace is a single line, so it commits atomically.

A log whose last line was torn by a crash does not end with ``\\n``; the writer then starts
with a newline so the torn fragment stays one bad line and never swallows the next entry.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from pseudoclaude.conversation import Hooks, Offload
from pseudoclaude.durable import fsync_dir
from pseudoclaude.llm.types import Message
from pseudoclaude.session.codec import (
    LOG_VERSION,
    CheckpointEntry,
    Entry,
    ForkEntry,
    KeepEntry,
    MessageEntry,
    ModeEntry,
    OffloadEntry,
    ReplaceEntry,
    SessionEntry,
    TaskEntry,
    TasksEntry,
    encode,
)
from pseudoclaude.session.ids import session_id_time
from pseudoclaude.session.store import FILE_MODE, SessionError, SessionStore


class SessionWriteError(SessionError):
    pass


class SessionWriter:
    """Appends entries to one session's log. Thread-safe; lines keep call order."""

    def __init__(self, store: SessionStore, session_id: str, *, model: str = "",
                 workspace: str = "") -> None:
        self.store = store
        self.session_id = session_id
        self.path: Path = store.log_path(session_id)
        self._model = model
        self._workspace = workspace
        self._stamped = False
        self._lock = threading.RLock()
        self._fd: int | None = None
        self._batch_depth = 0
        self._unsynced = False
        self._check_tail = True
        self._state: dict[str, bytes] = {}
        """The latest line of each state entry (``mode``), repeated after each ``replace``."""

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def create(cls, store: SessionStore, *, model: str = "", workspace: str = "",
               now: datetime | None = None) -> SessionWriter:
        """A writer for a brand-new session (its folder exists; the log appears on first use)."""
        return cls(store, store.allocate(now), model=model, workspace=workspace)

    @classmethod
    def open(cls, store: SessionStore, session_id: str, *, model: str = "",
             workspace: str = "") -> SessionWriter:
        """A writer that continues an existing session's log."""
        store.check_id(session_id)
        return cls(store, session_id, model=model, workspace=workspace)

    # -- entries ---------------------------------------------------------------------------
    def append_message(self, message: Message) -> None:
        # The hot path: kept short, since after each fsync it runs with cold CPU caches.
        with self._lock:
            model = "" if self._stamped else self._model
            self._write(encode(MessageEntry.from_message(message, time.time(), model)))
            self._stamped = True

    def append_replace(self, reason: str, messages: Sequence[Message],
                       turn: int | None = None) -> None:
        with self._lock:  # the state lines follow their replace, in one write
            self._write(encode(ReplaceEntry(reason=reason, messages=list(messages),
                                            ts=time.time(), turn=turn))
                        + b"".join(self._state.values()))

    def append_mode(self, mode: str) -> None:
        """A ``mode`` line: the session's permission mode from here on."""
        with self._lock:
            line = encode(ModeEntry(mode=mode, ts=time.time()))
            self._write(line)
            self._state["mode"] = line

    def append_tasks(self, tasks: Sequence[tuple[str, str]]) -> None:
        """A ``tasks`` line: the session's task list from here on, ``(content, status)``."""
        with self._lock:
            line = encode(_tasks_entry(tasks))
            self._write(line)
            self._state["tasks"] = line

    def keep_state(self, mode: str | None,
                   tasks: Sequence[tuple[str, str]] | None = None) -> None:
        """What a resumed log says the session's state is (its last ``mode`` and ``tasks``
        lines), to repeat after the next ``replace``; nothing is written now."""
        with self._lock:
            if mode is not None:
                self._state["mode"] = encode(ModeEntry(mode=mode, ts=time.time()))
            if tasks is not None:
                self._state["tasks"] = encode(_tasks_entry(tasks))

    def append_fork(self, parent: str, turn: int | None) -> None:
        """The ``fork`` line of a session forked from ``parent`` (before its prompt ``turn``;
        None: after its last)."""
        self._write(encode(ForkEntry(parent=parent, turn=turn, ts=time.time())))

    def append_checkpoint(self, turn: int, ref: str) -> None:
        """A ``checkpoint`` line: the files' snapshot ``ref`` during prompt ``turn``."""
        self._write(encode(CheckpointEntry(turn=turn, ref=ref, ts=time.time())))

    def append_offloads(self, offloads: Sequence[Offload], keep: Sequence[str]) -> None:
        now = time.time()
        entries: list[Entry] = [
            OffloadEntry(o.call_id, o.path, o.bytes, o.preview, now) for o in offloads
        ]
        if keep:
            entries.append(KeepEntry(list(keep), now))
        if entries:
            self._write(b"".join(encode(e) for e in entries))

    def hooks(self) -> Hooks:
        """Conversation hooks that log every change before the change is acknowledged."""
        return Hooks(
            on_append=self.append_message,
            on_replace=self.append_replace,
            on_offload=self.append_offloads,
        )

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group commit: lines written inside are fsynced once, when the batch ends."""
        with self._lock:
            self._batch_depth += 1
            try:
                yield
            finally:
                self._batch_depth -= 1
                if self._batch_depth == 0 and self._unsynced:
                    self._sync()

    def touch(self) -> None:
        """Create the log now (its header only) when it is not there yet, so a session with no
        message can be resumed and listed (the ACP front end: a client may switch away from a
        new session before its first prompt)."""
        with self._lock:
            try:
                self._open()
            except OSError as exc:
                raise SessionWriteError(
                    f"could not write session log {self.path}: {exc.strerror or exc}"
                ) from exc

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                try:
                    if self._unsynced:
                        self._sync()
                finally:
                    os.close(self._fd)
                    self._fd = None

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        """Append whole lines; returns once they are fsynced (at the end of a batch)."""
        with self._lock:
            try:
                fd = self._fd if self._fd is not None else self._open()
                if self._check_tail:
                    size = os.fstat(fd).st_size
                    if size and os.pread(fd, 1, size - 1) != b"\n":
                        data = b"\n" + data
                    self._check_tail = False
                written = os.write(fd, data)
                if written < len(data):  # only on odd file systems or a full disk
                    view = memoryview(data)[written:]
                    while view:
                        view = view[os.write(fd, view):]
                self._unsynced = True
                if not self._batch_depth:
                    os.fsync(fd)
                    self._unsynced = False
            except OSError as exc:
                self._check_tail = True
                raise SessionWriteError(
                    f"could not write session log {self.path}: {exc.strerror or exc}"
                ) from exc

    def _sync(self) -> None:
        assert self._fd is not None
        os.fsync(self._fd)
        self._unsynced = False

    def _open(self) -> int:
        if self._fd is not None:
            return self._fd
        created = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            if os.fstat(fd).st_size == 0:
                header = self._header()
                os.write(fd, header)
                os.fsync(fd)
                self._check_tail = False
            if created:
                fsync_dir(self.path.parent)
        except OSError:
            os.close(fd)
            raise
        self._fd = fd
        return fd

    def _header(self) -> bytes:
        born = session_id_time(self.session_id)
        created = (born.astimezone() if born else datetime.now().astimezone())
        return encode(SessionEntry(
            version=LOG_VERSION, id=self.session_id,
            created=created.isoformat(timespec="seconds"), workspace=self._workspace,
        ))


def _tasks_entry(tasks: Sequence[tuple[str, str]]) -> TasksEntry:
    return TasksEntry(tasks=[TaskEntry(content, status) for content, status in tasks],
                      ts=time.time())
