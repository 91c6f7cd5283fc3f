"""Memory with consent: what a background update would change, waiting for review (SPEC §11).

In ``memory.mode: confirm`` a background update writes nothing: each validated operation
becomes a :class:`ProposalRecord` holding the whole note file before and after (front matter
included; ``""`` when absent), persisted as one JSON file ``<dataDir>/proposals/<id>.json``
(folder 0700, files 0600, written atomically: temp file + fsync + rename). Proposals survive
restarts and crashes; a torn or hand-broken file is skipped with a log line, never fatal.
There is one pending proposal per target note (level and file name): a newer one replaces it
(a crash between writing the new one and removing the old leaves both; loading keeps the newest
and removes the others). User-level proposals wait in the workspace that made them.

Review:

- *accept* writes ``after`` (or an edited text: a whole file, or a body without front matter to
  which the proposal's front matter is applied), with ``updated`` set to the time of acceptance,
  through :meth:`~pseudoclaude.memory.store.MemoryStore.replace_note` (atomic, index line) —
  provided the note is still exactly what the proposal was made from (``beforeDigest``);
  otherwise :class:`ProposalStale` and the proposal stays until rejected;
- *reject* deletes the proposal file.

An accept is journalled: the proposal is first rewritten with ``accepting`` (the state the note
is about to get), then the note and its index line are written, then the proposal is removed.
If the process dies in between, the next load (:func:`finish_interrupted`) sees the note in the
``accepting`` state and completes the accept (index line, removal), so an accepted note is
never half-applied and an applied proposal never lingers as a stale one.

:class:`ProposalWatcher` notices another process changing the folder.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Final

import msgspec
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from pseudoclaude.errors import PseudoClaudeError
from pseudoclaude.memory.atomic import (
    digest,
    folder_state,
    make_private_dir,
    read_bytes,
    remove_file,
    replace_file,
)
from pseudoclaude.memory.index import parse_index
from pseudoclaude.memory.notes import (
    LEVELS,
    NOTE_TYPES,
    derive_summary,
    front_matter_end,
    now_rfc3339,
    parse_note,
    render_note,
    slugify,
    title_key,
    type_from_filename,
    unsafe_filename,
)
from pseudoclaude.memory.operations import MAX_CONTENT_CHARS, Operation
from pseudoclaude.memory.sensitive import find_secret
from pseudoclaude.memory.store import MemoryStoreError, NoteStore, render_update

log = logging.getLogger("pseudoclaude.memory")

PROPOSALS_DIR: Final = "proposals"
"""The folder under ``<dataDir>``."""
PROPOSAL_VERSION: Final = 1
ACTIONS: Final = ("create", "update", "delete")
ABSENT: Final = "absent"
"""The ``accepting`` state of an accept that deletes the note."""
MAX_PROPOSAL_BYTES: Final = 1024 * 1024
"""A proposal file larger than this is not read (a note is at most 64,000 characters)."""
WATCH_DEBOUNCE: Final = 0.2
_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{8}$")


class ProposalStale(PseudoClaudeError):
    """The note changed since the proposal was made: it is not applied, and stays queued."""

    def __init__(self, proposal: ProposalRecord) -> None:
        super().__init__(
            f"proposal {proposal.id} is stale: {proposal.level}/{proposal.filename} changed "
            "since it was proposed (a hand edit or another accepted change); nothing was "
            "written, and the proposal stays in the queue until you reject it")
        self.proposal = proposal


class UnknownProposal(MemoryStoreError):
    def __init__(self, proposal_id: str) -> None:
        super().__init__(f"there is no pending memory proposal {proposal_id[:80]!r}", "id")


class Proposal(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    """A memory change a background update proposed (``memory.mode: confirm``), as a person
    reviews it (``pseudoclaude/memory/proposals``)."""

    id: str
    created_at: str
    session_id: str
    action: str
    """The effect on the file: ``create``, ``update`` or ``delete``."""
    level: str
    """``project`` or ``user``."""
    type: str
    title: str
    summary: str
    filename: str
    before: str
    """The whole note file (front matter included) before; ``""`` when absent."""
    after: str
    """The whole note file after; ``""`` for a delete."""

    def shown(self) -> Proposal:
        """Just the reviewable part (a :class:`ProposalRecord`'s bookkeeping left out)."""
        return Proposal(**{name: getattr(self, name) for name in Proposal.__struct_fields__})


class ProposalRecord(Proposal, kw_only=True, frozen=True):
    """One pending proposal, as persisted: what is reviewed, plus bookkeeping."""

    before_digest: str | None
    """sha256 of the note's bytes when proposed (None: no file): an accept needs this state."""
    created_ns: int = 0
    """Orders the queue (``createdAt`` has whole seconds)."""
    accepting: str = ""
    """Set just before an accept writes the note: the digest of the bytes it writes, or
    :data:`ABSENT` for a delete; ``""`` otherwise."""
    version: int = PROPOSAL_VERSION

    @property
    def target(self) -> tuple[str, str]:
        return (self.level, self.filename)

    def problem(self, stem: str) -> str | None:
        """Why a decoded file cannot be a proposal (None when it can)."""
        if self.version != PROPOSAL_VERSION:
            return f"unknown version {self.version}"
        if self.id != stem or not _ID.match(self.id):
            return f"id {self.id[:40]!r} does not match the file name"
        if self.action not in ACTIONS:
            return f"unknown action {self.action[:20]!r}"
        if self.level not in LEVELS:
            return f"unknown level {self.level[:20]!r}"
        return unsafe_filename(self.filename)


def new_id() -> str:
    """``YYYYMMDD-HHMMSS-xxxxxxxx`` (local time, 8 random hex digits)."""
    return f"{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(4)}"


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(ProposalRecord)


def encode_proposal(proposal: ProposalRecord) -> bytes:
    return _encoder.encode(proposal) + b"\n"


def decode_proposal(data: bytes, stem: str) -> ProposalRecord:
    """A proposal file's content; ``ValueError`` naming the problem when it is not one."""
    try:
        proposal = _decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ValueError(str(exc)) from None
    problem = proposal.problem(stem)
    if problem is not None:
        raise ValueError(problem)
    return proposal


_warned: dict[str, tuple[int, int]] = {}


def _warn_once(path: Path, reason: str) -> None:
    try:
        st = path.stat()
        stamp = (st.st_size, st.st_mtime_ns)
    except OSError:
        stamp = (-1, -1)
    if _warned.get(str(path)) != stamp:
        _warned[str(path)] = stamp
        log.warning("memory proposal %s skipped: %s", path, reason)


class ProposalQueue:
    """The proposals of one ``<dataDir>/proposals/`` folder. Blocking; thread-safe within a
    process (the folder's lock); several processes may share the folder."""

    def __init__(self, directory: Path | str) -> None:
        self.dir = Path(directory).expanduser()
        self._lock = folder_state(self.dir).lock

    def path(self, proposal_id: str) -> Path:
        return self.dir / f"{proposal_id}.json"

    def ensure(self) -> None:
        make_private_dir(self.dir)

    def load(self) -> list[ProposalRecord]:
        """Every pending proposal, oldest first (one per target: the newest; older files for
        the same target are removed). Broken files are skipped and logged."""
        with self._lock:
            try:
                names = os.listdir(self.dir)
            except (FileNotFoundError, NotADirectoryError):
                return []
            found: list[ProposalRecord] = []
            for name in names:
                stem, dot, ext = name.rpartition(".")
                if not dot or ext != "json" or not _ID.match(stem):
                    continue  # temp files (``.<name>.tmp``) and anything else
                path = self.dir / name
                try:
                    data = read_bytes(path, MAX_PROPOSAL_BYTES + 1)
                except OSError as exc:
                    _warn_once(path, f"cannot be read ({exc.strerror or exc})")
                    continue
                if data is None:
                    continue  # removed meanwhile
                if len(data) > MAX_PROPOSAL_BYTES:
                    _warn_once(path, f"larger than {MAX_PROPOSAL_BYTES} bytes")
                    continue
                try:
                    found.append(decode_proposal(data, stem))
                except ValueError as exc:
                    _warn_once(path, str(exc))
            found.sort(key=lambda p: (p.created_ns, p.id))
            newest: dict[tuple[str, str], ProposalRecord] = {}
            for proposal in found:
                older = newest.get(proposal.target)
                if older is not None:
                    log.info("memory proposal %s replaced by %s (same note)", older.id,
                             proposal.id)
                    remove_file(self.path(older.id))
                newest[proposal.target] = proposal
            return sorted(newest.values(), key=lambda p: (p.created_ns, p.id))

    def get(self, proposal_id: str) -> ProposalRecord | None:
        return next((p for p in self.load() if p.id == proposal_id), None)

    def save(self, proposal: ProposalRecord) -> None:
        """Write (or rewrite) one proposal file atomically."""
        with self._lock:
            self.ensure()
            replace_file(self.path(proposal.id), encode_proposal(proposal))

    def add(self, proposal: ProposalRecord) -> list[str]:
        """Queue ``proposal``; the pending proposals for the same note are removed (after the
        new one is on disk). Returns their ids."""
        with self._lock:
            replaced = [p.id for p in self.load() if p.target == proposal.target]
            self.save(proposal)
            for old in replaced:
                remove_file(self.path(old))
            return replaced

    def remove(self, proposal_id: str) -> bool:
        with self._lock:
            if not _ID.match(proposal_id):
                return False
            return remove_file(self.path(proposal_id))


# -- making proposals ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Draft:
    """What one operation would do to one note file."""

    action: str
    level: str
    type: str
    title: str
    summary: str
    filename: str
    before: bytes | None
    after: bytes | None

    def proposal(self, proposal_id: str, session_id: str) -> ProposalRecord:
        return ProposalRecord(
            id=proposal_id, created_at=now_rfc3339(), created_ns=time.time_ns(),
            session_id=session_id, action=self.action, level=self.level, type=self.type,
            title=self.title, summary=self.summary, filename=self.filename,
            before=_text(self.before), after=_text(self.after),
            before_digest=digest(self.before))


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", "replace")


def _action(before: bytes | None, after: bytes | None) -> str:
    if after is None:
        return "delete"
    return "create" if before is None else "update"


def draft(store: NoteStore, op: Operation, source: str, pending: list[ProposalRecord]
          ) -> Draft | None:
    """What ``op`` (validated) would change in ``store`` now, computed as the update would
    apply it (a ``create`` whose title a note already has updates that note; a new note gets
    a free name, or the name of a pending proposal's new note of the same title). None when
    the note would not change. Raises :class:`MemoryStoreError` for an operation the store
    refuses (no such note). Blocking."""
    level = store.level
    filename = op.filename
    if op.action == "create":
        filename = store.find_title(op.title) or ""
        if not filename:
            key = title_key(op.title)
            creating = [p for p in pending if p.level == level and p.before_digest is None]
            same = next((p.filename for p in creating if title_key(p.title) == key), None)
            filename = same or store.free_filename(
                op.type, slugify(op.slug or op.title), {p.filename for p in creating})
            now = now_rfc3339()
            after = render_note(op.type, op.title, now, now, source, op.content)
            before = read_bytes(store.note_path(filename))
            if before is not None:  # appeared meanwhile: an update of it
                after, _ = render_update(before, filename, op.content, note_type=op.type,
                                         title=op.title, source=source)
            return _draft(store, filename, before, after,
                          op.summary or derive_summary(op.content), op)
    if not store.exists(filename):
        raise MemoryStoreError(f"there is no note {filename!r} in {level} memory", "filename")
    before = read_bytes(store.note_path(filename))
    if op.action == "delete":
        return _draft(store, filename, before, None, "", op)
    after, _ = render_update(before, filename, op.content, note_type=op.type,
                             title=op.title, source=source)
    return _draft(store, filename, before, after,
                  op.summary or store.summary_of(filename) or derive_summary(op.content), op)


def _draft(store: NoteStore, filename: str, before: bytes | None, after: bytes | None,
           summary: str, op: Operation) -> Draft | None:
    if after == before and after is not None:
        return None
    shown = after if after is not None else before
    note = parse_note(shown, filename) if shown is not None else None
    entry = next((e for e in parse_index(store.read_index()) if e.filename == filename), None)
    note_type = (note.type if note else "") or (entry.type if entry else "") or \
        type_from_filename(filename)
    title = (note.title if note else "") or (entry.title if entry else "") or filename[:-3]
    if after is None:
        summary = summary or (entry.summary if entry else "")
    return Draft(_action(before, after), store.level, note_type, title, summary, filename,
                 before, after)


# -- accepting ----------------------------------------------------------------------------------

def with_updated(text: str, now: str) -> str:
    """A whole note file with ``updated`` in its front matter set to ``now`` (added when
    missing); everything else kept as it is."""
    lines = text.split("\n")
    end = front_matter_end(lines)
    assert end is not None
    for i in range(1, end):
        if lines[i].split(":", 1)[0].strip().lower() == "updated":
            lines[i] = f"updated: {now}"
            break
    else:
        lines.insert(end, f"updated: {now}")
    out = "\n".join(lines)
    return out if out.endswith("\n") else out + "\n"


def accepted_bytes(proposal: ProposalRecord, content: str | None, now: str | None = None
                   ) -> bytes | None:
    """What accepting ``proposal`` writes (None: delete the note): ``after``, or ``content``
    (a whole file with front matter, or a body to which the proposal's front matter is
    applied), with ``updated`` set to ``now``. Raises :class:`MemoryStoreError` (field
    ``content``) for an edited text that cannot be a note, or that looks like a secret."""
    now = now or now_rfc3339()
    text = proposal.after if content is None else content
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    if not text.strip():
        return None
    if len(text) > MAX_CONTENT_CHARS + 4096:
        raise MemoryStoreError(f"the text is longer than {MAX_CONTENT_CHARS} characters",
                               "content")
    kind = find_secret(text)
    if kind is not None:
        raise MemoryStoreError(f"refused: the text looks like it contains {kind}; memory never "
                               "stores secrets", "content")
    filename = proposal.filename
    if front_matter_end(text.split("\n")) is not None:
        data = with_updated(text, now).encode()
    else:  # a body: the proposal's front matter (of the note it proposes, else the current)
        base_text = proposal.after or proposal.before
        data, _ = render_update(base_text.encode() if base_text else None, filename, text,
                                note_type="" if base_text else proposal.type,
                                title="" if base_text else proposal.title, now=now)
    note = parse_note(data, filename)
    if note.problem:
        raise MemoryStoreError(f"the edited note cannot be used: {note.problem}", "content")
    if note.type not in NOTE_TYPES:  # pragma: no cover - parse_note reports it as a problem
        raise MemoryStoreError(f"unknown memory type {note.type!r}", "content")
    return data


def accept_state(data: bytes | None) -> str:
    """The ``accepting`` mark of an accept that writes ``data``."""
    return digest(data) or ABSENT


def note_state(store: NoteStore, filename: str) -> str:
    """The current state of a note in the terms of :func:`accept_state`."""
    return accept_state(read_bytes(store.note_path(filename)))


def finish_interrupted(store: NoteStore, queue: ProposalQueue, proposal: ProposalRecord) -> bool:
    """Complete an accept that a crash interrupted after the note was written (its index
    line, then the proposal's removal). True when it did; False when the note does not hold
    the accepted text (the accept never happened: the proposal stays pending)."""
    if not proposal.accepting or note_state(store, proposal.filename) != proposal.accepting:
        return False
    data = read_bytes(store.note_path(proposal.filename))
    store.replace_note(proposal.filename, digest(data), data, summary=proposal.summary)
    queue.remove(proposal.id)
    log.info("finished accepting memory proposal %s (%s/%s) after an interruption",
             proposal.id, proposal.level, proposal.filename)
    return True


# -- watching ----------------------------------------------------------------------------------


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: ProposalWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        for raw in (event.src_path, event.dest_path):
            name = os.path.basename(os.fsdecode(raw)) if raw else ""
            if name.endswith(".json") and not name.startswith("."):
                self.watcher.touch()
                return


class ProposalWatcher:
    """Calls ``on_change()`` (from its own thread) at most :data:`WATCH_DEBOUNCE` seconds
    after a proposal file of the folder was created, replaced or removed (by any process)."""

    def __init__(self, directory: Path, on_change: Callable[[], object], *,
                 debounce: float = WATCH_DEBOUNCE) -> None:
        self.dir = directory
        self.on_change = on_change
        self.debounce = debounce
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._observer: BaseObserver | None = None

    def start(self) -> None:
        with self._lock:
            if self._observer is not None:
                return
            make_private_dir(self.dir)
            observer = Observer()
            observer.schedule(_Handler(self), str(self.dir), recursive=False)
            observer.daemon = True
            observer.start()
            self._observer = observer

    def stop(self, timeout: float = 5.0) -> None:
        with self._lock:
            observer, self._observer = self._observer, None
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        if observer is not None:
            observer.stop()
            observer.join(timeout)

    def touch(self) -> None:
        with self._lock:
            if self._timer is not None or self._observer is None:
                return
            self._timer = threading.Timer(self.debounce, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
        try:
            self.on_change()
        except Exception:
            log.exception("memory proposals: change callback failed")
