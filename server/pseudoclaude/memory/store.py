"""One memory store: a folder with ``MEMORY.md`` and one note file per memory (SPEC §5).

The store applies single, already validated changes (:meth:`NoteStore.create`,
:meth:`~NoteStore.update`, :meth:`~NoteStore.delete`); deciding what to change is the
manager's job. Everything here is blocking file work: call it from a worker thread. All writes
to one folder in this process are serialised by the folder's lock and go through
:func:`~pseudoclaude.memory.atomic.commit` (atomic, and merged onto a hand edit made meanwhile).

Hand-broken files never raise out of a read: a note without front matter, a binary note or a
10 MB ``MEMORY.md`` are read as far as they make sense, and the reason is logged (once per
file state). A ``MEMORY.md`` with NUL bytes or invalid UTF-8 is ignored, not patched up: the
index is rebuilt from the note files, and no write touches the file until it is fixed.
"""

from __future__ import annotations

import codecs
import logging
import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from pseudoclaude.errors import PseudoClaudeError
from pseudoclaude.memory import index as idx
from pseudoclaude.memory.atomic import (
    BeforeRename,
    Committed,
    ConflictError,
    Exists,
    Skip,
    Transform,
    commit,
    digest,
    folder_state,
    make_private_dir,
    read_bytes,
)
from pseudoclaude.memory.notes import (
    FRONT_MATTER_MAX,
    INDEX_NAME,
    LEVELS,
    NOTE_TYPES,
    Note,
    cut_utf8,
    derive_summary,
    note_filename,
    now_rfc3339,
    parse_note,
    render_note,
    slugify,
    title_key,
    type_from_filename,
    unsafe_filename,
)

log = logging.getLogger("pseudoclaude.memory")

INDEX_READ_LIMIT = 1024 * 1024
"""Bytes of ``MEMORY.md`` read for the prompt and listings (the injected text is cut at
25,600 bytes anyway); writes always work on the whole file."""
MAX_CREATE_SUFFIX = 1000


class MemoryStoreError(PseudoClaudeError):
    """A memory request that cannot be carried out; the message is for the user. ``field``
    names the parameter at fault (``level``, ``type``, ``filename``, ``text``, ...), if any."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def __str__(self) -> str:
        return self.message


class HandEditKept(MemoryStoreError):
    """A note was edited by hand while this change was being written: the hand edit is kept
    and this change to the note is dropped."""

    def __init__(self, level: str, filename: str) -> None:
        super().__init__(f"{filename} was edited by hand while it was being written; the hand "
                         "edit is kept", "filename")
        self.level = level
        self.filename = filename


class StaleNote(MemoryStoreError):
    """A note is no longer in the state a change was prepared from (a hand edit, another
    accepted proposal): nothing was written."""

    def __init__(self, level: str, filename: str) -> None:
        super().__init__(f"{level}/{filename} changed since this change was prepared",
                         "filename")
        self.level = level
        self.filename = filename


def render_update(old: bytes | None, filename: str, content: str, *, note_type: str = "",
                  title: str = "", source: str = "", now: str | None = None
                  ) -> tuple[bytes, Note | None]:
    """The bytes of note ``filename`` rewritten with ``content`` from its ``old`` bytes: type
    and title given or kept, ``created`` kept, ``updated`` now, ``source`` given or kept.
    Returns them with the parsed old note (None when there was none)."""
    prior = parse_note(old, filename) if old is not None else None
    new_type = note_type or (prior.type if prior else "") or (
        type_from_filename(filename) or "project_knowledge")
    new_title = title or (prior.title if prior else "") or filename[:-3]
    now = now or now_rfc3339()
    created = (prior.created if prior else "") or now
    return render_note(new_type, new_title, created, now,
                       source or (prior.source if prior else ""), content), prior


def _first_pass_only(transform: Transform, level: str, filename: str) -> Transform:
    """A note transform that gives way to a hand edit: called again (the file changed between
    the read and the rename), it raises :class:`HandEditKept` instead of overwriting."""
    calls = 0

    def apply(old: bytes | None) -> bytes | None:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise HandEditKept(level, filename)
        return transform(old)

    return apply


@dataclass(frozen=True)
class Change:
    """One change made to a store."""

    action: str  # create | update | delete
    level: str
    filename: str
    path: Path
    hand_edit: bool = False
    """A hand edit of a file this change touched was found (and kept) while writing."""


@dataclass(frozen=True)
class NoteInfo:
    filename: str
    path: Path
    type: str
    title: str
    summary: str


_warned: dict[tuple[str, str], tuple[int, int]] = {}


def _warn_once(path: Path, reason: str) -> None:
    """Log a hand-broken file once per (file, reason, size and mtime)."""
    try:
        st = path.stat()
        stamp = (st.st_size, st.st_mtime_ns)
    except OSError:
        stamp = (-1, -1)
    key = (str(path), reason)
    if _warned.get(key) != stamp:
        _warned[key] = stamp
        log.warning("memory file %s: %s", path, reason)


_SCAN_CHUNK = 1024 * 1024
_scanned: dict[str, tuple[tuple[int, int, int], str]] = {}


def _file_broken(path: Path) -> str:
    """:func:`~pseudoclaude.memory.index.broken_reason` of the whole file at ``path``, read in
    chunks (cached per file state: a 10 MB index is scanned once per change)."""
    try:
        st = path.stat()
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        cached = _scanned.get(str(path))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        reason = ""
        decoder = codecs.getincrementaldecoder("utf-8")()
        with open(path, "rb") as f:
            while True:
                chunk = f.read(_SCAN_CHUNK)
                if b"\x00" in chunk:
                    reason = "contains NUL bytes"
                    break
                try:
                    decoder.decode(chunk, not chunk)
                except UnicodeDecodeError:
                    reason = "is not valid UTF-8"
                    break
                if not chunk:
                    break
    except OSError:
        return ""
    _scanned[str(path)] = (stamp, reason)
    return reason


_IGNORED = (f"ignored: the index is built from the note files instead, and {INDEX_NAME} is "
            "not updated until it is fixed")


class NoteStore:
    """The notes and index of one level (``project`` or ``user``)."""

    def __init__(self, level: str, directory: Path | str) -> None:
        if level not in LEVELS:
            raise MemoryStoreError(f"unknown memory level {level!r} (use project or user)",
                                   "level")
        self.level = level
        self.dir = Path(directory).expanduser()
        self.index_path = self.dir / INDEX_NAME
        self._state = folder_state(self.dir)
        self.files = self._state.files
        self.before_rename: BeforeRename | None = None
        """Test seam: called just before each rename (see :func:`atomic.commit`)."""

    def __repr__(self) -> str:
        return f"NoteStore({self.level!r}, {str(self.dir)!r})"

    # -- reading -----------------------------------------------------------------------------
    def ensure(self) -> None:
        make_private_dir(self.dir)

    def note_path(self, filename: str) -> Path:
        """The path of a note; raises :class:`MemoryStoreError` for an unsafe name."""
        problem = unsafe_filename(filename)
        if problem is not None:
            raise MemoryStoreError(problem, "filename")
        path = self.dir / filename
        base = os.path.realpath(self.dir)
        if os.path.commonpath([base, os.path.realpath(path)]) != base:
            raise MemoryStoreError(f"the filename {filename!r} leads outside the store",
                                   "filename")
        return path

    def read_index(self, limit: int | None = INDEX_READ_LIMIT) -> str:
        """The raw ``MEMORY.md`` text ("" when missing), at most ``limit`` bytes.

        A broken ``MEMORY.md`` (NUL bytes or invalid UTF-8 anywhere in it) is ignored: what is
        returned is an index rebuilt from the note files (:meth:`notes_index`), so none of its
        bytes reach the prompt, and writes leave the file as it is (see
        :meth:`_index_upsert`) until the user fixes or removes it."""
        try:
            data = read_bytes(self.index_path, None if limit is None else limit + 1)
        except OSError as exc:
            _warn_once(self.index_path, f"cannot be read ({exc.strerror or exc})")
            return ""
        if data is None:
            return ""
        whole = limit is None or len(data) <= limit
        broken = idx.broken_reason(data, final=whole)
        if not broken and not whole:
            broken = _file_broken(self.index_path)
        if broken:
            _warn_once(self.index_path, f"{broken}; {_IGNORED}")
            return self.notes_index()
        if limit is not None and len(data) > limit:
            _warn_once(self.index_path,
                       f"larger than {limit} bytes; only the first {limit} bytes are read")
            data = cut_utf8(data, limit)  # never a character cut in two by the limit
        return data.decode("utf-8")

    def notes_index(self) -> str:
        """An index made from the note files alone (name order; title and type from the front
        matter, the summary from the body): what stands in for a broken ``MEMORY.md``."""
        lines = []
        for name in self.note_files():
            note = self.read_note(name, FRONT_MATTER_MAX)
            if note is None:
                continue
            lines.append(idx.format_line(note.type or type_from_filename(name), note.title,
                                         derive_summary(note.body), name))
        return "\n".join(lines) + "\n" if lines else ""

    def read_note(self, filename: str, limit: int | None = None) -> Note | None:
        """A parsed note (None when there is no such file); hand-broken notes are returned
        with ``problem`` set, and logged."""
        path = self.note_path(filename)
        try:
            data = read_bytes(path, limit)
        except OSError as exc:
            _warn_once(path, f"cannot be read ({exc.strerror or exc})")
            return None
        if data is None:
            return None
        note = parse_note(data, filename)
        if note.problem:
            _warn_once(path, note.problem)
        return note

    def note_files(self) -> list[str]:
        """The note file names in the folder (sorted; other files ignored)."""
        try:
            names = os.listdir(self.dir)
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            _warn_once(self.dir, f"cannot be listed ({exc.strerror or exc})")
            return []
        return sorted(n for n in names
                      if unsafe_filename(n) is None and (self.dir / n).is_file())

    def _entries(self, text: str) -> Iterator[idx.IndexEntry]:
        for entry in idx.parse_index(text):
            problem = unsafe_filename(entry.filename)
            if problem is not None:
                _warn_once(self.index_path, f"index line skipped: {problem}")
                continue
            yield entry

    def list_notes(self) -> list[NoteInfo]:
        """Every note: the index's entries in index order, then note files the index does not
        list (title and type from their front matter, no summary)."""
        seen: set[str] = set()
        out: list[NoteInfo] = []
        for entry in self._entries(self.read_index()):
            if entry.filename in seen:
                continue
            seen.add(entry.filename)
            out.append(NoteInfo(entry.filename, self.dir / entry.filename,
                                entry.type or type_from_filename(entry.filename),
                                entry.title, entry.summary))
        for name in self.note_files():
            if name in seen:
                continue
            note = self.read_note(name, FRONT_MATTER_MAX)
            if note is None:
                continue
            out.append(NoteInfo(name, self.dir / name, note.type, note.title, ""))
        return out

    def find_title(self, title: str) -> str | None:
        """The file name of the note whose title is ``title`` (case and spacing ignored)."""
        key = title_key(title)
        if not key:
            return None
        for name in self.note_files():
            note = self.read_note(name, FRONT_MATTER_MAX)
            if note is not None and not note.problem and title_key(note.title) == key:
                return name
        for entry in self._entries(self.read_index()):
            if title_key(entry.title) == key and (self.dir / entry.filename).is_file():
                return entry.filename
        return None

    def exists(self, filename: str) -> bool:
        path = self.note_path(filename)
        return path.is_file() or idx.has_line(self.read_index(None), filename)

    # -- writing -----------------------------------------------------------------------------
    def _commit(self, path: Path, transform: Transform, *, exclusive: bool = False
                ) -> Committed:
        return commit(path, transform, self.files, exclusive=exclusive,
                      before_rename=self.before_rename)

    def _skip_broken(self, old: bytes) -> None:
        """Raise :class:`Skip` for a broken ``MEMORY.md``: it is never rewritten (its broken
        bytes would be written back); the note files carry the change meanwhile."""
        broken = idx.broken_reason(old)
        if broken:
            _warn_once(self.index_path, f"{broken}; {_IGNORED}")
            raise Skip(f"{INDEX_NAME} {broken}")

    def _index_upsert(self, filename: str, line: str) -> Committed:
        def apply(old: bytes | None) -> bytes:
            if old is None:
                return idx.upsert_line("", filename, line).encode()
            self._skip_broken(old)
            return idx.upsert_line(old.decode("utf-8"), filename, line).encode()
        return self._commit(self.index_path, apply)

    def _index_delete(self, filename: str) -> Committed:
        def apply(old: bytes | None) -> bytes | None:
            if old is None:
                raise Skip("no index")
            self._skip_broken(old)
            return idx.delete_lines(old.decode("utf-8"), filename).encode()
        return self._commit(self.index_path, apply)

    def summary_of(self, filename: str) -> str:
        for entry in idx.parse_index(self.read_index()):
            if entry.filename == filename:
                return entry.summary
        return ""

    def create(self, note_type: str, title: str, content: str, *, summary: str = "",
               slug: str = "", source: str = "") -> Change:
        """A new note ``<type>_<slug>.md`` (``-2``, ``-3``... when taken: never overwrites), or,
        when a note of this store already has this title, an update of that note."""
        if note_type not in NOTE_TYPES:
            raise MemoryStoreError(f"unknown memory type {note_type!r}", "type")
        with self._state.lock:
            existing = self.find_title(title)
            if existing is not None:
                return self.update(existing, content, note_type=note_type, title=title,
                                   summary=summary, source=source)
            self.ensure()
            base = slugify(slug or title)
            now = now_rfc3339()
            data = render_note(note_type, title, now, now, source, content)
            for n in range(1, MAX_CREATE_SUFFIX + 1):
                filename = note_filename(note_type, base, n)
                path = self.note_path(filename)
                if os.path.lexists(path) or idx.has_line(self.read_index(None), filename):
                    continue
                try:
                    note = self._commit(path, lambda _old: data, exclusive=True)
                except Exists:
                    continue
                break
            else:
                raise MemoryStoreError(f"too many notes named {note_filename(note_type, base)}")
            line = idx.format_line(note_type, title, summary or derive_summary(content),
                                   filename)
            index = self._index_upsert(filename, line)
            return Change("create", self.level, filename, path, note.hand_edit or index.hand_edit)

    def update(self, filename: str, content: str, *, note_type: str = "", title: str = "",
               summary: str = "", source: str = "") -> Change:
        """Rewrite a note (its file name never changes; type and title may). Raises
        :class:`MemoryStoreError` when the store has no such note."""
        if note_type and note_type not in NOTE_TYPES:
            raise MemoryStoreError(f"unknown memory type {note_type!r}", "type")
        path = self.note_path(filename)
        with self._state.lock:
            if not self.exists(filename):
                raise MemoryStoreError(f"there is no note {filename!r} in {self.level} memory",
                                       "filename")
            self.ensure()
            final: list[bytes] = []

            def apply(old: bytes | None) -> bytes:
                data, prior = render_update(old, filename, content, note_type=note_type,
                                            title=title, source=source)
                if prior is not None and prior.problem:
                    _warn_once(path, f"{prior.problem}; rewritten with valid front matter")
                final.append(data)
                return data

            note = self._commit(path, _first_pass_only(apply, self.level, filename))
            written = parse_note(final[-1], filename)
            line = idx.format_line(
                written.type, written.title,
                summary or self.summary_of(filename) or derive_summary(content), filename)
            index = self._index_upsert(filename, line)
            return Change("update", self.level, filename, path,
                          note.hand_edit or index.hand_edit)

    def free_filename(self, note_type: str, slug: str, taken: Collection[str] = ()) -> str:
        """The name a new note ``<type>_<slug>.md`` would get now (``-2``, ``-3``... when the
        name is used on disk, in the index or in ``taken``)."""
        index = self.read_index(None)
        for n in range(1, MAX_CREATE_SUFFIX + 1):
            filename = note_filename(note_type, slug, n)
            if filename in taken or os.path.lexists(self.note_path(filename)) or \
                    idx.has_line(index, filename):
                continue
            return filename
        raise MemoryStoreError(f"too many notes named {note_filename(note_type, slug)}")

    def replace_note(self, filename: str, expected: str | None, data: bytes | None, *,
                     summary: str = "") -> Change:
        """Make note ``filename`` hold exactly ``data`` (None: delete it) and its index line
        follow, provided the note is still in the state ``expected`` (the
        :func:`~pseudoclaude.memory.atomic.digest` of its bytes; None: no file). Otherwise
        raises :class:`StaleNote` and writes nothing. The index line takes type and title from
        ``data``'s front matter and ``summary`` (else the current line's, else the body's)."""
        path = self.note_path(filename)
        with self._state.lock:
            self.ensure()

            def apply(old: bytes | None) -> bytes | None:
                if digest(old) != expected:
                    raise StaleNote(self.level, filename)
                return data

            note = self._commit(path, apply)
            if data is None:
                index = self._index_delete(filename)
                action = "delete"
            else:
                written = parse_note(data, filename)
                line = idx.format_line(
                    written.type, written.title,
                    summary or self.summary_of(filename) or derive_summary(written.body),
                    filename)
                index = self._index_upsert(filename, line)
                action = "create" if expected is None else "update"
            return Change(action, self.level, filename, path, note.hand_edit or index.hand_edit)

    def delete(self, filename: str) -> Change | None:
        """Remove a note and its index lines; None when neither existed."""
        path = self.note_path(filename)
        with self._state.lock:
            note = self._commit(path, _first_pass_only(lambda _old: None, self.level, filename))
            index = self._index_delete(filename)
            if not (note.changed or index.changed):
                return None
            return Change("delete", self.level, filename, path,
                          note.hand_edit or index.hand_edit)

    def snapshot(self) -> dict[str, str | None]:
        """The content identity of ``MEMORY.md`` and every note (for the watcher's start)."""
        names = [INDEX_NAME, *self.note_files()]
        out: dict[str, str | None] = {}
        for name in names:
            try:
                out[name] = digest(read_bytes(self.dir / name))
            except OSError:
                continue
        return out


__all__ = [
    "Change",
    "ConflictError",
    "HandEditKept",
    "MemoryStoreError",
    "NoteInfo",
    "NoteStore",
    "StaleNote",
    "render_update",
]
