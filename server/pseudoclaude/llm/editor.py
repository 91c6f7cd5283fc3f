"""What the editor tells the agent (SPEC §12 "The agent lives in the editor"): the context a
prompt is sent with (the active file, the selection, the open files) and the editor's
diagnostics, in the shapes the wire, the session log and the tools share.

Paths are relative to the workspace with ``/``. Positions are LSP positions (0-based line and
character, the character in the client's units).
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

Severity = Literal["error", "warning", "info", "hint"]
"""How bad a diagnostic is."""

MAX_CONTEXT_CHARS = 8000
"""The selection's text in the model's "Editor context" block is cut to this many
characters (the rest is said to be left out)."""
MAX_OPEN_FILES = 20
"""At most this many open files are named in the block."""


class Position(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    line: int
    """0-based."""
    character: int
    """0-based, in the client's units."""


class Range(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    start: Position
    end: Position

    @property
    def lines(self) -> str:
        """``"12"`` or ``"12-15"``: the 1-based lines the range covers (an end at the start
        of a line does not count that line)."""
        first = self.start.line + 1
        last = self.end.line + (1 if self.end.character > 0 or self.end.line
                                == self.start.line else 0)
        return str(first) if last <= first else f"{first}-{last}"


class Selection(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    path: str
    range: Range
    text: str


class Diagnostic(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """A problem the editor reports in a file (from any of its language servers)."""

    path: str
    range: Range
    severity: Severity
    message: str
    source: str | UnsetType = UNSET
    """Who reported it (``pyright``, ``eslint``...), when the editor says."""

    def line(self) -> str:
        """``path:12: error: message (source)``, as the model reads it."""
        source = f" ({self.source})" if isinstance(self.source, str) and self.source else ""
        message = " ".join(self.message.split())
        return f"{self.path}:{self.range.start.line + 1}: {self.severity}: {message}{source}"


class EditorContext(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """What the user was looking at when they sent a prompt."""

    active_file: str | UnsetType = UNSET
    selection: Selection | UnsetType = UNSET
    open_files: list[str] | UnsetType = UNSET
    diagnostics: list[Diagnostic] | UnsetType = UNSET
    """The problems the user asks about (the *Fix* code action sends the range's)."""

    def is_empty(self) -> bool:
        return not (self.active_file or self.selection or self.open_files or self.diagnostics)

    def paths(self) -> list[tuple[str, str]]:
        """``(field, path)`` of every path it names (to check them)."""
        out: list[tuple[str, str]] = []
        if isinstance(self.active_file, str):
            out.append(("activeFile", self.active_file))
        if isinstance(self.selection, Selection):
            out.append(("selection.path", self.selection.path))
        for index, path in enumerate(self.open_files or []):
            out.append((f"openFiles[{index}]", path))
        for index, problem in enumerate(self.diagnostics or []):
            out.append((f"diagnostics[{index}].path", problem.path))
        return out


def context_block(context: EditorContext) -> str:
    """The one short block the model reads before the prompt."""
    lines = ["Editor context (what the user has open; the request follows):"]
    if isinstance(context.active_file, str):
        lines.append(f"- Active file: {context.active_file}")
    selection = context.selection
    if isinstance(selection, Selection):
        text = selection.text
        cut = ""
        if len(text) > MAX_CONTEXT_CHARS:
            rest = text[MAX_CONTEXT_CHARS:].count("\n") + 1
            text = text[:MAX_CONTEXT_CHARS]
            cut = f"\n[... {rest} more line(s) of the selection left out]"
        fence = "````" if "```" in text else "```"
        span = selection.range.lines
        lines.append(f"- Selection in {selection.path}, line{'s' if '-' in span else ''} {span}:")
        lines.append(f"{fence}\n{text.rstrip(chr(10))}\n{fence}{cut}")
    problems = context.diagnostics
    if isinstance(problems, list) and problems:
        lines.append("- Problems the editor reports there:")
        lines += [f"  {problem.line()}" for problem in problems[:MAX_OPEN_FILES]]
    files = context.open_files
    if isinstance(files, list) and files:
        shown = ", ".join(files[:MAX_OPEN_FILES])
        more = len(files) - MAX_OPEN_FILES
        lines.append(f"- Open files: {shown}" + (f" (and {more} more)" if more > 0 else ""))
    return "\n".join(lines)
