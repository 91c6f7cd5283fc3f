"""``MEMORY.md`` lines and the index text injected into the system prompt (SPEC §5).

Index line: ``- [<type>] <title> — <summary> (<filename>)`` (the separator is a space, U+2014
EM DASH, a space); ``- [<type>] <title> (<filename>)`` when the summary would only repeat the
title (a short note whose title is its whole text, docs/memory.md).
:func:`upsert_line` and :func:`delete_lines` edit an index text in place of
its lines for one file and keep every other line (hand-written headings and notes included)
as it was.

:func:`build_index_text` is the one function that makes the injected text: the system prompt,
``pseudoclaude/memory/show`` and the CLI all use it.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Final

from pseudoclaude.memory.notes import cut_utf8, one_line

MAX_LINES: Final = 200
MAX_BYTES: Final = 25_600
TRUNCATED_MARKER: Final = "(index truncated)"
PROJECT_HEADING: Final = "## Project Memory"
USER_HEADING: Final = "## User Memory"
SUMMARY_MAX_CHARS: Final = 300
DEFAULT_SUMMARY: Final = "No summary provided"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_LINE = re.compile(
    r"^\s*[-*]\s*\[(?P<type>[^\]]*)\]\s*(?P<rest>.*?)\s*\((?P<filename>[^()]+)\)\s*$")


@dataclass(frozen=True)
class IndexEntry:
    type: str
    title: str
    summary: str
    filename: str


def same_text(title: str, summary: str) -> bool:
    """Whether a summary says no more than its title (case and a final period aside)."""
    def bare(text: str) -> str:
        return " ".join(text.split()).rstrip(" .").casefold()
    return bare(title) == bare(summary)


def format_line(note_type: str, title: str, summary: str, filename: str) -> str:
    """An index line. Control characters (a NUL byte of a hand-broken note or ``MEMORY.md``,
    an escape sequence) are left out: an index line never carries one into ``MEMORY.md``."""
    note_type = _CONTROL.sub("", note_type)
    title = one_line(_CONTROL.sub(" ", title), 200) or filename
    summary = one_line(_CONTROL.sub(" ", summary), SUMMARY_MAX_CHARS) or DEFAULT_SUMMARY
    if same_text(title, summary):  # "X. — X." says it twice: once is enough
        return f"- [{note_type}] {title} ({filename})"
    return f"- [{note_type}] {title} — {summary} ({filename})"


def parse_line(line: str) -> IndexEntry | None:
    """The entry of one index line; None for any other line (headings, prose)."""
    match = _LINE.match(line)
    if match is None:
        return None
    rest = match.group("rest")
    title, sep, summary = rest.partition(" — ")
    if not sep:
        title, sep, summary = rest.partition(" - ")
    return IndexEntry(match.group("type").strip(), title.strip(), summary.strip(),
                      match.group("filename").strip())


def parse_index(text: str) -> list[IndexEntry]:
    return [e for e in (parse_line(line) for line in text.splitlines()) if e is not None]


def _names(line: str, filename: str) -> bool:
    return line.rstrip().endswith(f"({filename})")


def upsert_line(text: str, filename: str, line: str) -> str:
    """``text`` with the line of ``filename`` replaced by ``line`` (appended when there is
    none; later duplicates removed). Every other line is kept as it was."""
    lines = text.splitlines()
    out: list[str] = []
    done = False
    for current in lines:
        if _names(current, filename):
            if not done:
                out.append(line)
                done = True
            continue
        out.append(current)
    if not done:
        while out and not out[-1].strip():
            out.pop()
        out.append(line)
    return "\n".join(out) + "\n"


def delete_lines(text: str, filename: str) -> str:
    """``text`` without the lines of ``filename``."""
    lines = [line for line in text.splitlines() if not _names(line, filename)]
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""


def has_line(text: str, filename: str) -> bool:
    return any(_names(line, filename) for line in text.splitlines())


def broken_reason(data: bytes, *, final: bool = True) -> str:
    """Why index bytes cannot be used as text ("" when they can): NUL bytes, or not valid
    UTF-8 (``final=False``: ``data`` is a prefix, so a character cut at its end is fine)."""
    if b"\x00" in data:
        return "contains NUL bytes"
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        decoder.decode(data, final)
    except UnicodeDecodeError:
        return "is not valid UTF-8"
    return ""


def clean_text(text: str) -> str:
    """An index text fit for a prompt: CRLF normalised, control characters other than tab and
    newline removed (a hand-broken, binary ``MEMORY.md`` cannot smuggle them in)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    return _CONTROL.sub("", text)


HEALTH_WARNING_SHARE: Final = 0.8
"""At this share of either limit a write suggests consolidating (SPEC §11)."""


@dataclass(frozen=True)
class IndexText:
    text: str
    truncated: bool
    lines: int = 0
    """Lines of the index as it would be injected before any cut (headings included)."""
    bytes: int = 0
    """UTF-8 bytes of the same."""

    @property
    def share(self) -> float:
        """The larger of ``lines / MAX_LINES`` and ``bytes / MAX_BYTES``."""
        return max(self.lines / MAX_LINES, self.bytes / MAX_BYTES)

    @property
    def crowded(self) -> bool:
        """At or over :data:`HEALTH_WARNING_SHARE` of either limit."""
        return self.share >= HEALTH_WARNING_SHARE


def build_index_text(project: str, user: str) -> IndexText:
    """The injected index: ``## Project Memory`` + the project index, a blank line,
    ``## User Memory`` + the user index (an empty level is left out; both empty → ""), at most
    200 lines and 25,600 bytes (cut on a UTF-8 boundary), then ``(index truncated)`` when
    anything was cut. Project first, so user memory is what gets cut. ``lines`` and ``bytes``
    measure the text before the cut (the index health of ``pseudoclaude/memory/show``)."""
    parts = []
    project, user = clean_text(project).strip(), clean_text(user).strip()
    if project:
        parts.append(f"{PROJECT_HEADING}\n{project}")
    if user:
        parts.append(f"{USER_HEADING}\n{user}")
    text = "\n\n".join(parts)
    if not text:
        return IndexText("", False)
    truncated = False
    lines = text.split("\n")
    size = len(text.encode())
    if len(lines) > MAX_LINES:
        text = "\n".join(lines[:MAX_LINES])
        truncated = True
    data = text.encode()
    if len(data) > MAX_BYTES:
        text = cut_utf8(data, MAX_BYTES).decode()
        truncated = True
    if truncated:
        text = text.rstrip() + "\n" + TRUNCATED_MARKER
    return IndexText(text, truncated, len(lines), size)
