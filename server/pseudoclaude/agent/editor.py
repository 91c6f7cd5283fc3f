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
