"""``read_file``, ``write_file``, ``edit_file`` (SPEC §6).

Files are UTF-8 text. A file with a NUL byte in its first 8 KiB, or whose text is not valid
UTF-8, is refused as ``binary_file``. Line endings are kept as they are (``\\r\\n`` stays).

``read_file{path, offset?, limit?}`` returns whole lines from line ``offset`` (1-based, default
1): ``limit`` lines (default: as many as fit). One answer holds at most
:data:`~pseudoclaude.agent.tools.base.MAX_READ_BYTES` of the file and at most the envelope's
content limit, whichever is smaller (today the 64 KiB content limit); when the lines stop
early, the content ends with ``...[truncated]`` and ``metadata.next_offset`` says where to go
on. A single line longer than that is cut on a character boundary. Metadata: ``path``,
``offset``, ``lines`` (returned), ``total_lines`` (``null`` for a file over 64 MiB, which is not
scanned to the end), ``bytes`` (the file's size), ``truncated`` (the 64 KiB limit stopped the
lines), ``next_offset`` (present whenever lines remain after the ones returned), ``sha256``
(of all the bytes read: the editor's text when the answer comes from it, else the file; absent
for a file over 64 MiB read in part). An ``offset`` past the last line is
``invalid_arguments``. The first read of a file under a subfolder with its own ``AGENTS.md`` or
``CLAUDE.md`` makes those instructions apply to the session
(:mod:`~pseudoclaude.agent.instructions`): the content ends with a blank line and
``(instructions from sub/AGENTS.md now apply)`` (room is kept for it within the limit), and
``metadata.instructions`` lists them.

``write_file{path, content}`` creates the missing parent folders (inside the workspace) and
writes atomically: a temporary file in the same folder, ``fsync``, ``rename`` over the target,
``fsync`` of the folder. Replacing a file keeps its permission bits. An existing file the
user cannot write is refused as ``permission_denied`` and left as it is (the rename would
replace it regardless of its mode): a file whose owner write bit is off (``chmod a-w``, mode
``000``) counts as unwritable even when the server runs as root, as does one ``os.access``
says is not writable. The same check applies to ``edit_file``. Metadata: ``path``,
``bytes``, ``created``, ``sha256`` (of the bytes written).

``edit_file{path, old_text, new_text}`` replaces the one occurrence of ``old_text``: none is
``no_match``, more than one is ``ambiguous_match`` (with the count; overlapping occurrences
count). When the file uses ``\\r\\n`` and ``old_text`` (with ``\\n``) only matches in that form,
both texts are converted to ``\\r\\n``. Files over 8 MiB are ``too_large``. The write is atomic
as above. Metadata: ``path``, ``line`` (where the replacement starts), ``bytes``, ``sha256``.

Stale writes (with the session's ledger in :attr:`ToolContext.files`): ``write_file`` and
``edit_file`` of an existing file the session has not read, or that changed since it last read
or wrote it, fail with ``stale`` before anything is shown or written
(:mod:`~pseudoclaude.agent.tools.freshness`).

Approval as a diff (SPEC §11): when the user is to be asked, :meth:`~Tool.prepare` computes what
they see first: the path relative to the workspace, ``before`` (the whole text without the
change; ``""`` for a new file) and ``after`` (with it). A change that cannot apply fails there,
without asking: ``no_match``, ``ambiguous_match``, ``outside_workspace``, and for a file that
cannot be shown as text (``binary_file``, ``too_large``) even for ``write_file``.
:meth:`~Tool.apply` re-reads the file after the approval and writes exactly the ``after`` shown
only when the file is still the ``before`` shown (or still absent); otherwise the call fails
with ``changed`` and nothing is written.

Cancellation: the blocking work runs in a worker thread, which finishes on its own after the
task is cancelled; a write is atomic, so the file is either old or new, never torn.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import stat
from dataclasses import dataclass
from typing import Any, BinaryIO, ClassVar

from pseudoclaude import durable
from pseudoclaude.agent.editor import OpenText
from pseudoclaude.agent.instructions import INSTRUCTIONS_KEY, notice
from pseudoclaude.agent.tools.base import (
    BINARY_SNIFF_BYTES,
    MAX_CONTENT_BYTES,
    MAX_READ_BYTES,
    TRUNCATION_MARKER,
    ApprovalClass,
    Param,
    Preview,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
)
from pseudoclaude.agent.tools.freshness import DIGEST_KEY, digest, digest_text
from pseudoclaude.agent.tools.paths import Located, open_dir, open_file, os_error
from pseudoclaude.names import plural

COUNT_LINES_MAX_BYTES = 64 * 1024 * 1024
"""Files up to this size are scanned to the end to count their lines."""
EDIT_MAX_BYTES = 8 * 1024 * 1024
_CHUNK = 64 * 1024
# Room kept in the content for the marker (and the newline before it).
_READ_BUDGET = min(MAX_READ_BYTES, MAX_CONTENT_BYTES - len(TRUNCATION_MARKER) - 1)


def _open_regular(located: Located) -> tuple[int, os.stat_result]:
    """Open a regular file for reading (never blocking on a FIFO), with its ``fstat``."""
    try:
        fd = open_file(located, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise os_error(exc, located.label) from exc
    return fd, _check_regular(fd, located)


def _check_regular(fd: int, located: Located) -> os.stat_result:
    """The ``fstat`` of an open regular file (made blocking); closes ``fd`` and raises
    :class:`ToolError` when it is not one."""
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ToolError("is_directory", f"{located.label} is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise ToolError("not_a_file", f"{located.label} is not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return info


def _binary(located: Located) -> ToolError:
    return ToolError("binary_file",
                     f"{located.label} is a binary file (or not UTF-8 text); it cannot be "
                     "shown as text")


def _cut_utf8(data: bytes, limit: int) -> bytes:
    """The first ``limit`` bytes of ``data``, shortened so no character is split."""
    head = data[:limit]
    return head.decode("utf-8", "ignore").encode("utf-8")


def read_lines(located: Located, offset: int, limit: int | None, text: str | None = None,
               reserve: int = 0) -> ToolOutput:
    """The blocking body of ``read_file``: the file's lines, or those of ``text`` (an open
    document's, in the editor); ``reserve`` bytes of the content are left for a note after
    them."""
    budget = _READ_BUDGET - reserve
    whole: str | None = None  # the digest of all the bytes (None: not scanned to the end)
    if text is None:
        fd, info = _open_regular(located)
        source: BinaryIO = os.fdopen(fd, "rb")
        file_bytes = info.st_size
    else:
        data = text.encode("utf-8", "surrogatepass")
        source, file_bytes = io.BytesIO(data), len(data)
        whole = digest(data)
    hashing = hashlib.sha256()
    with source as f:
        if b"\x00" in f.read(BINARY_SNIFF_BYTES):
            raise _binary(located)
        f.seek(0)
        out = bytearray()
        line_start = 0  # where the line being collected starts in `out`
        line = 1  # the number of the line being scanned
        returned = 0  # complete lines in `out` (a cut first line counts)
        collecting = True
        truncated = False
        scanned = 0
        last_byte = b""
        complete = True  # scanned to the end
        while True:
            chunk = f.read(_CHUNK)
            if not chunk:
                break
            scanned += len(chunk)
            hashing.update(chunk)
            last_byte = chunk[-1:]
            pos, size = 0, len(chunk)
            while pos < size:
                nl = chunk.find(b"\n", pos)
                end = size if nl < 0 else nl + 1
                if collecting and line >= offset:
                    piece = chunk[pos:end]
                    if len(out) + len(piece) <= budget:
                        out += piece
                        if nl >= 0:
                            returned += 1
                            line_start = len(out)
                            if limit is not None and returned >= limit:
                                collecting = False
                    else:
                        if returned == 0:  # the first line alone is too long: its head
                            out += piece[:budget - len(out)]
                            out[:] = _cut_utf8(bytes(out), budget)
                            returned = 1
                        else:  # drop the partial line; it starts the next page
                            del out[line_start:]
                        truncated = True
                        collecting = False
                if nl >= 0:
                    line += 1
                pos = end
            if not collecting and scanned >= COUNT_LINES_MAX_BYTES:
                complete = False
                break
        if collecting and len(out) > line_start:
            returned += 1  # the last line, without a newline
    total_lines: int | None = None
    if complete:
        total_lines = line - 1 + (1 if last_byte and last_byte != b"\n" else 0)
        if offset > max(total_lines, 1):
            raise ToolError("invalid_arguments",
                            f"read_file: `offset` {offset} is past the end of {located.label} "
                            f"({total_lines} lines)")
    try:
        text = bytes(out).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _binary(located) from exc
    if truncated:
        text += ("" if text.endswith("\n") or not text else "\n") + TRUNCATION_MARKER
    following = offset + returned
    more = not collecting if total_lines is None else following <= total_lines
    metadata: dict[str, Any] = {
        "path": located.label, "offset": offset, "lines": returned,
        "total_lines": total_lines, "bytes": file_bytes, "truncated": truncated,
    }
    if more:
        metadata["next_offset"] = following
    if whole is None and complete:
        whole = hashing.hexdigest()
    if whole is not None:
        metadata[DIGEST_KEY] = whole
    return ToolOutput(text, metadata)


def read_text(located: Located, max_bytes: int = EDIT_MAX_BYTES) -> tuple[str, int]:
    """A whole text file and its permission bits, or :class:`ToolError` (binary, too large)."""
    fd, info = _open_regular(located)
    return _read_whole(fd, info, located, max_bytes)


def read_current(located: Located, max_bytes: int = EDIT_MAX_BYTES) -> tuple[str, int] | None:
    """As :func:`read_text`, or ``None`` when the file does not exist (its folder may not
    either); a parent that is a file, a folder in its place, a binary file: :class:`ToolError`."""
    try:
        fd = open_file(located, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise os_error(exc, located.label) from exc
    return _read_whole(fd, _check_regular(fd, located), located, max_bytes)


def _read_whole(fd: int, info: os.stat_result, located: Located, max_bytes: int
                ) -> tuple[str, int]:
    with os.fdopen(fd, "rb") as f:
        if info.st_size > max_bytes:
            raise ToolError("too_large",
                            f"{located.label} is {info.st_size} bytes, over the "
                            f"{max_bytes}-byte limit for editing")
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ToolError("too_large",
                        f"{located.label} is over the {max_bytes}-byte limit for editing")
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise _binary(located)
    try:
        return data.decode("utf-8"), stat.S_IMODE(info.st_mode)
    except UnicodeDecodeError as exc:
        raise _binary(located) from exc


def _check_writable(located: Located, name: str, dir_fd: int, existing: os.stat_result) -> None:
    """:class:`ToolError` ``permission_denied`` when the user may not write the existing file.

    The atomic rename replaces a name and never opens the file, so it would replace a file the
    user cannot write: check first. A file without the owner's write bit is refused even for
    root (who passes ``os.access``), so the user's "read-only" means read-only to the agent.
    """
    if not existing.st_mode & stat.S_IWUSR or not os.access(name, os.W_OK, dir_fd=dir_fd):
        raise ToolError("permission_denied",
                        f"{located.label}: permission denied (the file is not writable)")


def atomic_write(located: Located, data: bytes, mode: int | None = None) -> bool:
    """Write ``data`` to ``located`` atomically; returns whether the file was created.

    The parent folders are created by a symlink-free walk from the root; the temporary file is
    made with ``O_EXCL | O_NOFOLLOW`` and renamed over the final name (``rename`` replaces a
    name, it never follows a symlink). ``mode`` (the permission bits to keep) defaults to the
    existing file's, else ``0o666`` less the umask.
    """
    parts = located.parts
    if not parts:
        raise ToolError("is_directory", f"{located.label} is a folder, not a file")
    name = parts[-1]
    try:
        dir_fd = open_dir(located.root, parts[:-1], create=True)
    except OSError as exc:
        raise os_error(exc, located.label) from exc
    try:
        created = True
        try:
            existing = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None:
            if stat.S_ISDIR(existing.st_mode):
                raise ToolError("is_directory", f"{located.label} is a folder, not a file")
            if stat.S_ISLNK(existing.st_mode):
                raise ToolError("outside_workspace",
                                f"{located.label}: a symbolic link appeared in the path "
                                "while it was used")
            if not stat.S_ISREG(existing.st_mode):
                raise ToolError("not_a_file", f"{located.label} is not a regular file")
            created = False
            _check_writable(located, name, dir_fd, existing)
            if mode is None:
                mode = stat.S_IMODE(existing.st_mode)
        durable.atomic_write(name, data, mode=mode, dir_fd=dir_fd, folder_sync_optional=True)
        return created
    except OSError as exc:
        raise os_error(exc, located.label) from exc
    finally:
        os.close(dir_fd)


def _editor_and_disk(ctx: ToolContext, located: Located) -> tuple[OpenText | None, str | None]:
    """The editor's text of a workspace file (``None``: not open there) and, when it has one,
    the file's text on disk (``None``: absent, or not text)."""
    editor = ctx.editor
    if editor is None or located.root != ctx.paths.workspace:
        return None, None
    doc = editor.open_text(located.path)
    if doc is None:
        return None, None
    try:
        disk = read_current(located)
    except ToolError:
        disk = None  # not text on disk (or too large): the editor's text is what the user has
    return doc, None if disk is None else disk[0]


def open_document(ctx: ToolContext, located: Located) -> OpenText | None:
    """The editor's text of ``located`` when the file is open there with unsaved changes (the
    text differs from the file on disk, or the file is not on disk); else ``None``."""
    doc, disk = _editor_and_disk(ctx, located)
    return None if doc is None or doc.text == disk else doc


NEW_IN_EDITOR = OpenText("", None)
"""What a write through an ``every_file`` editor is made on for a file that does not exist."""


def dirty_document(ctx: ToolContext, located: Located) -> OpenText | None:
    """The document a write goes to in the editor (``None``: to disk): an open one with
    unsaved changes; with an ``every_file`` editor, any file (:data:`NEW_IN_EDITOR` for one
    it does not know). :class:`ToolError` ``unsaved`` when the file has unsaved changes the
    editor cannot take the agent's edit on (nothing is written under the user's work)."""
    editor = ctx.editor
    doc, disk = _editor_and_disk(ctx, located)
    if editor is None or located.root != ctx.paths.workspace:
        return None
    if not editor.every_file and doc is not None and doc.text == disk:
        return None  # open and saved: written to disk, the editor reloads it
    if editor.every_file and editor.can_apply_edit and doc is None:
        # a file the editor does not know: created through it when it is nowhere, else (the
        # editor did not answer for a file on disk) written to disk
        return NEW_IN_EDITOR if read_current(located) is None else None
    if doc is not None and not editor.can_apply_edit:
        if doc.text == disk:
            return None
        raise ToolError("unsaved",
                        f"{located.label} has unsaved changes in the editor, and the editor "
                        "cannot take the agent's edits; nothing was changed (ask the user to "
                        "save or revert the file first)")
    return doc


IN_EDITOR = (" in the editor, unsaved: the user has unsaved changes to this file, so the "
             "change went into their editor (they can undo it there), not to the file on disk")


_NOTE_GAP = "\n"
"""Before the note of the instruction files a read made apply (after the text's last line)."""


class ReadFile(Tool):
    name: ClassVar[str] = "read_file"
    description: ClassVar[str] = (
        "Read a UTF-8 text file in the workspace (or a saved tool result). Returns the file's "
        "lines verbatim, starting at line `offset` (1-based, default 1), at most `limit` lines "
        "and at most 64 KiB; when more remains, the text ends with `...[truncated]` and "
        "metadata.next_offset gives the offset to continue from. metadata.total_lines is the "
        "file's line count. Binary files are refused. A file open in the user's editor with "
        "unsaved changes is read as the editor has it (`unsaved: true`)."
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("path", "string", "File path, relative to the workspace root (or absolute "
              "inside it).", required=True, non_empty=True),
        Param("offset", "integer", "First line to return, 1-based. Default 1.", minimum=1),
        Param("limit", "integer", "Maximum number of lines to return. Default: as many as "
              "fit in 64 KiB.", minimum=1),
    )
    read_only: ClassVar[bool] = True
    approval_class: ClassVar[ApprovalClass] = "none"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        def work() -> ToolOutput:
            located = ctx.paths.locate(args["path"], tool=self.name)
            inside = located.root == ctx.paths.workspace
            nested = ctx.instructions if inside else None
            waiting = [] if nested is None else nested.waiting(located.root, located.rel)
            reserve = len(f"\n{_NOTE_GAP}{notice(waiting)}".encode()) if waiting else 0
            doc, disk = _editor_and_disk(ctx, located)
            if doc is None:
                out = read_lines(located, args.get("offset", 1), args.get("limit"),
                                 reserve=reserve)
            else:
                # the editor's text (the disk's, when they are the same: read once)
                out = read_lines(located, args.get("offset", 1), args.get("limit"), doc.text,
                                 reserve=reserve)
                out.unsaved = doc.text != disk
            seen = (out.metadata or {}).get(DIGEST_KEY)
            if ctx.files is not None and seen and inside:
                ctx.files.saw(located.path, seen)
            joined = nested.join(waiting) if nested is not None and waiting else []
            if joined:  # the read made them apply: said at the end of what it returns
                out.content += ("\n" if out.content and not out.content.endswith("\n")
                                else "") + _NOTE_GAP + notice(joined)
                out.metadata = {**(out.metadata or {}), INSTRUCTIONS_KEY: joined}
            return out

        return await asyncio.to_thread(work)


class WriteFile(Tool):
    name: ClassVar[str] = "write_file"
    description: ClassVar[str] = (
        "Create or overwrite a text file in the workspace with `content` (UTF-8), creating "
        "missing parent folders. The whole file is replaced atomically. A read-only file "
        "(no write permission) is refused with permission_denied. To change part of an "
        "existing file, prefer edit_file."
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("path", "string", "File path, relative to the workspace root (or absolute "
              "inside it).", required=True, non_empty=True),
        Param("content", "string", "The complete new content of the file.", required=True),
    )
    read_only: ClassVar[bool] = False
    approval_class: ClassVar[ApprovalClass] = "write"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        change = await asyncio.to_thread(self._change, args, ctx, False)
        return _wrote(change, await _commit(ctx, change, check=False), ctx)

    async def prepare(self, args: dict[str, Any], ctx: ToolContext) -> Preview:
        change = await asyncio.to_thread(self._change, args, ctx, True)
        return Preview(path=change.located.label, before=change.before or "",
                       after=args["content"], state=change)

    async def apply(self, args: dict[str, Any], ctx: ToolContext, preview: Preview
                    ) -> ToolOutput:
        change = _change_of(preview)
        return _wrote(change, await _commit(ctx, change, check=True), ctx)

    def _change(self, args: dict[str, Any], ctx: ToolContext, shown: bool) -> _Change:
        """The write (blocking); ``shown``: its ``before`` is read to be shown."""
        data = _content_bytes(args["content"])
        located = ctx.paths.locate(args["path"], write=True, tool=self.name)
        doc = dirty_document(ctx, located)
        if doc is not None:
            before = None if doc is NEW_IN_EDITOR else doc.text
            _check_fresh(ctx, located, None if before is None else digest_text(before))
            return _Change(located, before, data, doc=doc)
        if not shown:
            if ctx.files is not None:
                _check_fresh(ctx, located, _disk_digest(located))
            return _Change(located, None, data)
        current = read_current(located)
        _check_fresh(ctx, located, None if current is None else digest_text(current[0]))
        return _Change(located, None if current is None else current[0], data)


def _content_bytes(content: str) -> bytes:
    try:
        return content.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError("invalid_arguments",
                        "write_file: `content` is not valid Unicode text") from exc


def _disk_digest(located: Located) -> str | None:
    """The digest of the file's bytes on disk (``None``: it does not exist), whatever they
    are (text or not, any size)."""
    try:
        fd = open_file(located, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise os_error(exc, located.label) from exc
    _check_regular(fd, located)
    hashing = hashlib.sha256()
    with os.fdopen(fd, "rb") as f:
        while chunk := f.read(_CHUNK):
            hashing.update(chunk)
    return hashing.hexdigest()


def _check_fresh(ctx: ToolContext, located: Located, current: str | None) -> None:
    """:class:`ToolError` ``stale`` when the session has a ledger and does not know the file
    as it is now (``current``: the digest of what it holds; ``None``: it does not exist)."""
    if ctx.files is not None:
        ctx.files.check(located.path, located.label, current)


def _recorded(ctx: ToolContext, change: _Change) -> str:
    """The digest of what a change wrote, recorded in the session's ledger."""
    written = digest(change.data)
    if ctx.files is not None:
        ctx.files.wrote(change.located.path, written)
    return written


def _wrote(change: _Change, written: _Written, ctx: ToolContext) -> ToolOutput:
    label, data = change.located.label, change.data
    created = written.created
    verb = "created" if created else "wrote"
    return ToolOutput(f"{verb} {label} ({plural(len(data), 'byte')}){written.where}",
                      {"path": label, "bytes": len(data), "created": created,
                       DIGEST_KEY: _recorded(ctx, change)},
                      unsaved=written.unsaved)


@dataclass(frozen=True, slots=True)
class _Written:
    """Where a change went."""

    created: bool
    unsaved: bool = False
    """Into the editor, where it is not saved (the file on disk is not what was written)."""
    editor: bool = False
    """Through the editor."""

    @property
    def where(self) -> str:
        if self.unsaved:
            return IN_EDITOR
        return " (through the editor)" if self.editor else ""


async def _commit(ctx: ToolContext, change: _Change, *, check: bool) -> _Written:
    """Write the change: through the editor when it was made on the editor's text, else to
    disk (``check``: only if the file is still what was shown). Nothing is written to disk
    under unsaved work that appeared meanwhile."""
    if change.doc is not None:
        assert ctx.editor is not None
        after = change.data.decode("utf-8")
        await ctx.editor.apply_edit(change.located.path, change.located.label, change.doc,
                                    after)

        def saved() -> bool:
            try:
                current = read_current(change.located)
            except ToolError:
                return False
            return current is not None and current[0] == after

        on_disk = await asyncio.to_thread(saved)
        return _Written(created=change.doc is NEW_IN_EDITOR, unsaved=not on_disk, editor=True)

    def work() -> _Written:
        mode = change.check_unchanged() if check else change.mode
        if open_document(ctx, change.located) is not None:
            raise ToolError("changed", f"{change.located.label} got unsaved changes in the "
                            "editor meanwhile; nothing was written (read it again)")
        return _Written(created=atomic_write(change.located, change.data, mode))

    return await asyncio.to_thread(work)


_GONE_TYPES = frozenset({"not_found", "is_directory", "not_a_file", "binary_file", "too_large",
                         "outside_workspace"})


@dataclass(frozen=True, slots=True)
class _Change:
    """A write shown for approval: the file as it was shown (``None``: absent) and the bytes
    to write."""

    located: Located
    before: str | None
    data: bytes
    line: int = 0
    """Where an edit's replacement starts (1-based)."""
    mode: int | None = None
    """The permission bits the file had when it was read."""
    doc: OpenText | None = None
    """The editor's unsaved document the change was made on (written there, not to disk)."""

    def check_unchanged(self) -> int | None:
        """The file's permission bits (``None`` when absent) after checking that it is still
        what the user saw; else :class:`ToolError` ``changed`` and nothing is written."""
        label = self.located.label
        try:
            current = read_current(self.located)
        except ToolError as exc:
            if exc.error_type not in _GONE_TYPES:
                raise
            raise ToolError("changed", f"{label} changed after the change was shown for "
                            f"approval ({exc.message}); nothing was written") from exc
        if current is None and self.before is None:
            return None
        if current is None:
            raise ToolError("changed", f"{label} was removed after the change was shown for "
                            "approval; nothing was written")
        if self.before is None:
            raise ToolError("changed", f"{label} was created by someone else after the change "
                            "was shown for approval; nothing was written")
        if current[0] != self.before:
            raise ToolError("changed", f"{label} changed after the change was shown for "
                            "approval; nothing was written (read it again)")
        return current[1]


def _change_of(preview: Preview) -> _Change:
    if not isinstance(preview.state, _Change):
        raise TypeError("the preview was not made by this tool")
    return preview.state


def _occurrences(text: str, needle: str, stop: int = 1000) -> list[int]:
    """Start offsets of ``needle`` in ``text``, overlapping ones included (at most ``stop``)."""
    found: list[int] = []
    start = text.find(needle)
    while start >= 0 and len(found) < stop:
        found.append(start)
        start = text.find(needle, start + 1)
    return found


class EditFile(Tool):
    name: ClassVar[str] = "edit_file"
    description: ClassVar[str] = (
        "Replace one exact occurrence of `old_text` with `new_text` in a text file in the "
        "workspace. `old_text` must match the file verbatim (whitespace and indentation "
        "included) and occur exactly once: include enough surrounding lines to make it "
        "unique. Fails with no_match or ambiguous_match otherwise, leaving the file unchanged."
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("path", "string", "File path, relative to the workspace root (or absolute "
              "inside it).", required=True, non_empty=True),
        Param("old_text", "string", "The exact text to replace; must occur exactly once.",
              required=True, non_empty=True),
        Param("new_text", "string", "The replacement text (may be empty to delete).",
              required=True),
    )
    read_only: ClassVar[bool] = False
    approval_class: ClassVar[ApprovalClass] = "write"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        change = await asyncio.to_thread(self._change, args, ctx)
        return _edited(change, await _commit(ctx, change, check=False), ctx)

    async def prepare(self, args: dict[str, Any], ctx: ToolContext) -> Preview:
        change = await asyncio.to_thread(self._change, args, ctx)
        assert change.before is not None
        return Preview(path=change.located.label, before=change.before,
                       after=change.data.decode("utf-8"), state=change)

    async def apply(self, args: dict[str, Any], ctx: ToolContext, preview: Preview
                    ) -> ToolOutput:
        change = _change_of(preview)
        return _edited(change, await _commit(ctx, change, check=True), ctx)

    def _change(self, args: dict[str, Any], ctx: ToolContext) -> _Change:
        """The edit, computed on the file as it is now (blocking; the editor's text when it
        has unsaved changes); :class:`ToolError` when it cannot apply."""
        located = ctx.paths.locate(args["path"], write=True, tool=self.name)
        doc = dirty_document(ctx, located)
        if doc is None or doc is NEW_IN_EDITOR:
            doc = None
            text, mode = read_text(located)  # the editor does not know it: not_found
        else:
            text, mode = doc.text, None
        _check_fresh(ctx, located, digest_text(text))
        old_text: str = args["old_text"]
        new_text: str = args["new_text"]
        found = _occurrences(text, old_text)
        if not found and "\r\n" in text and "\n" in old_text and "\r\n" not in old_text:
            crlf_old = old_text.replace("\n", "\r\n")
            crlf_found = _occurrences(text, crlf_old)
            if crlf_found:
                old_text, new_text = crlf_old, new_text.replace("\r\n", "\n").replace(
                    "\n", "\r\n")
                found = crlf_found
        if not found:
            raise ToolError("no_match",
                            f"edit_file: `old_text` was not found in {located.label}; "
                            "read the file and copy the text exactly")
        if len(found) > 1:
            count = f"{len(found)}" if len(found) < 1000 else "1000 or more"
            raise ToolError("ambiguous_match",
                            f"edit_file: `old_text` occurs {count} times in "
                            f"{located.label}; include more surrounding text so it "
                            "occurs once", metadata={"count": len(found)})
        at = found[0]
        result = text[:at] + new_text + text[at + len(old_text):]
        try:
            data = result.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ToolError("invalid_arguments",
                            "edit_file: `new_text` is not valid Unicode text") from exc
        return _Change(located, text, data, text.count("\n", 0, at) + 1, mode, doc)


def _edited(change: _Change, written: _Written, ctx: ToolContext) -> ToolOutput:
    label = change.located.label
    return ToolOutput(f"edited {label} at line {change.line}{written.where}",
                      {"path": label, "line": change.line, "bytes": len(change.data),
                       DIGEST_KEY: _recorded(ctx, change)},
                      unsaved=written.unsaved)
