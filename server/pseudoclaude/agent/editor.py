"""The editor the agent lives in, as the tools see it (SPEC §12).

A front end that has an editor (the LSP server: the documents the client syncs; ACP: the
client's ``fs`` methods) gives the tools an :class:`Editor`:

- :meth:`Editor.open_text` — the text of an open document (its unsaved edits included) and
  its version, or ``None`` when the file is not open. Reads use it instead of the disk, and
  say ``unsaved: true`` where it differs from the file on disk.
- :meth:`Editor.apply_edit` — change an open document's text in the editor (the user keeps
  their unsaved work and can undo the agent's edit there); nothing is written to disk.
  :class:`~pseudoclaude.agent.tools.ToolError` ``unsaved`` when the editor cannot
  (``can_apply_edit`` false), ``changed`` when the document moved on since it was read, any
  other when the editor refused (its reason in the message).
- :meth:`Editor.diagnostics` — the errors and warnings the editor shows (``can_diagnose``).

``every_file``: the editor answers for any file, not only the open ones (ACP's ``fs`` methods):
every read asks it (a search does not: each answer is a request), and every write goes
through it, a file it does not know being created by it.

Paths are absolute (resolved) for the lookups and relative with ``/`` on the wire.
:meth:`open_text` is called from worker threads; the others on the event loop.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pseudoclaude.llm.editor import Diagnostic


@dataclass(frozen=True, slots=True)
class OpenText:
    """An open document: its text and the editor's version of it (``None``: untracked)."""

    text: str
    version: int | None = None


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace ``text[start:end]`` of the document (offsets in characters) with ``new``."""

    start: int
    end: int
    new: str


class Editor(Protocol):
    """What the tools may ask of the editor (see the module docstring)."""

    @property
    def can_apply_edit(self) -> bool: ...

    @property
    def can_diagnose(self) -> bool: ...

    @property
    def every_file(self) -> bool: ...

    def open_text(self, path: Path) -> OpenText | None: ...

    async def apply_edit(self, path: Path, label: str, before: OpenText, after: str) -> None:
        """``before``: the text the change was made on (``""`` with version ``None`` for a file
        the editor did not know)."""

    async def diagnostics(self, paths: Sequence[str] | None) -> list[Diagnostic]: ...


def text_edits(before: str, after: str) -> list[TextEdit]:
    """The smallest edits (by line; a line changed into one other line, trimmed to the
    characters that differ) that turn ``before`` into ``after``: what the editor applies, one
    undo step, the user's cursor and marks outside them kept. Offsets refer to ``before``; the
    edits do not overlap."""
    if before == after:
        return []
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    starts = [0]
    for line in old:
        starts.append(starts[-1] + len(line))
    edits: list[TextEdit] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = starts[i1], starts[i2]
        removed, added = before[start:end], "".join(new[j1:j2])
        head = tail = 0
        if i2 - i1 == 1 and j2 - j1 == 1:  # one line changed: only the characters that differ
            head = _common_prefix(removed, added)
            tail = _common_suffix(removed[head:], added[head:])
        edits.append(TextEdit(start + head, end - tail, added[head:len(added) - tail]))
    return edits


def apply_edits(text: str, edits: Sequence[TextEdit]) -> str:
    """``text`` with ``edits`` applied (as an editor would: all against the original)."""
    out: list[str] = []
    at = 0
    for edit in sorted(edits, key=lambda e: e.start):
        out.append(text[at:edit.start])
        out.append(edit.new)
        at = edit.end
    out.append(text[at:])
    return "".join(out)


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[len(a) - 1 - i] == b[len(b) - 1 - i]:
        i += 1
    return i


SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2, "hint": 3}


def new_problems(before: Sequence[Diagnostic], after: Sequence[Diagnostic]
                 ) -> list[Diagnostic]:
    """The errors and warnings of ``after`` that ``before`` did not have (compared by path,
    severity, message and source: an edit moves lines, so positions are not compared)."""
    def key(d: Diagnostic) -> tuple[str, str, str, str]:
        return d.path, d.severity, " ".join(d.message.split()), str(d.source or "")

    seen: dict[tuple[str, str, str, str], int] = {}
    for d in before:
        seen[key(d)] = seen.get(key(d), 0) + 1
    out: list[Diagnostic] = []
    for d in after:
        k = key(d)
        if seen.get(k, 0) > 0:
            seen[k] -= 1
            continue
        if d.severity in ("error", "warning"):
            out.append(d)
    return sorted(out, key=lambda d: (SEVERITY_ORDER[d.severity], d.range.start.line))


# -- LSP positions ------------------------------------------------------------------------------
# Line breaks are LSP's: ``\n``, ``\r\n`` and ``\r``. Each lookup runs at C speed over the
# text up to the position (``str.count``/``str.split``), never a Python loop per character: a
# keystroke in a 5 MB document costs about a millisecond.

_BREAKS = re.compile("\r\n|\r|\n")


def _units(chars: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(chars.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32" or chars.isascii():
        return len(chars)
    return len(chars) + sum(1 for c in chars if ord(c) > 0xFFFF)  # utf-16


def _chars(line: str, units: int, encoding: str) -> int:
    """How many characters of ``line`` make ``units`` code units (clamped to the line)."""
    if encoding == "utf-32" or line.isascii():
        return min(units, len(line))
    count = 0
    for index, char in enumerate(line):
        if count >= units:
            return index
        count += _units(char, encoding)
    return len(line)


def line_start(text: str, line: int) -> int | None:
    """Where line ``line`` (0-based) starts in ``text``; ``None`` past the last line."""
    if line <= 0:
        return 0
    parts = text.split("\n", line) if "\r" not in text else _BREAKS.split(text, line)
    if len(parts) <= line:
        return None
    return len(text) - len(parts[-1])


def position_at(text: str, offset: int, encoding: str = "utf-16") -> tuple[int, int]:
    """The LSP ``(line, character)`` of ``text[offset]`` (the character in ``encoding``'s
    code units: ``utf-16``, the LSP default, ``utf-8`` or ``utf-32``)."""
    offset = max(0, min(offset, len(text)))
    if "\r" not in text:
        line = text.count("\n", 0, offset)
        start = text.rfind("\n", 0, offset) + 1
    else:
        line, start = 0, 0
        for match in _BREAKS.finditer(text, 0, offset):  # a loop per line: rare texts
            line, start = line + 1, match.end()
    return line, _units(text[start:offset], encoding)


def offset_at(text: str, line: int, character: int, encoding: str = "utf-16",
              near: tuple[int, int] | None = None) -> int:
    """The offset in ``text`` of an LSP position (clamped to the line and the text).
    ``near``: a known ``(line, its start offset)`` to walk from (see :func:`apply_change`)."""
    start = _start_near(text, line, near) if near is not None else line_start(text, line)
    if start is None:
        return len(text)
    match = _BREAKS.search(text, start)
    end = match.start() if match else len(text)
    return start + _chars(text[start:end], max(0, character), encoding)


def _start_near(text: str, line: int, near: tuple[int, int]) -> int | None:
    """:func:`line_start`, walking from a known line start: a few ``find`` calls when the
    position is near it (typing stays on a line), whatever the size of the text."""
    known, at = near
    if "\r" in text or abs(line - known) > 64:
        return line_start(text, line)
    while known < line:
        found = text.find("\n", at)
        if found < 0:
            return None
        known, at = known + 1, found + 1
    while known > line:
        at = text.rfind("\n", 0, at - 1) + 1
        known -= 1
    return at


def apply_change(text: str, start: tuple[int, int], end: tuple[int, int], new: str,
                 encoding: str = "utf-16", near: tuple[int, int] | None = None
                 ) -> tuple[str, tuple[int, int]]:
    """``text`` with the LSP range ``start``-``end`` (``(line, character)``) replaced, and the
    ``(line, start offset)`` of the change's first line, to pass as ``near`` next time."""
    first = _start_near(text, start[0], near) if near is not None else line_start(
        text, start[0])
    if first is None:  # past the last line: at the end
        a, anchor = len(text), (0, 0)
    else:
        a = offset_at(text, start[0], start[1], encoding, (start[0], first))
        anchor = (start[0], first)
    b = max(a, offset_at(text, end[0], end[1], encoding, anchor))
    return text[:a] + new + text[b:], anchor
