"""Note files: names, slugs and the front matter format (SPEC §5).

A note is ``<type>_<slug>.md``::

    ---
    type: project_knowledge
    title: "Build"
    created: 2025-06-01T10:00:00+02:00
    updated: 2025-06-02T09:30:00+02:00
    source: "20250602-093000-ab12 turn 3"
    ---

    Run `make build`; the output goes to dist/.

``title`` and ``source`` are JSON strings (valid YAML, and the Go original's double-quoted
titles read back the same); the other values are bare. Reading is lenient: a file without (or
with broken) front matter is still a note, its type taken from the file name.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Final

NOTE_TYPES: Final = (
    "user_preference",
    "correction_feedback",
    "project_knowledge",
    "reference_material",
)
LEVELS: Final = ("project", "user")
INDEX_NAME: Final = "MEMORY.md"
SLUG_MAX_BYTES: Final = 80
TITLE_MAX_CHARS: Final = 200
FRONT_MATTER_MAX: Final = 16 * 1024
"""Bytes of a note read to find its front matter (listing never reads whole bodies)."""


def now_rfc3339() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def cut_utf8(data: bytes, limit: int) -> bytes:
    """The longest prefix of ``data`` of at most ``limit`` bytes that ends on a character
    boundary (``data`` must be UTF-8)."""
    if len(data) <= limit:
        return data
    end = limit
    while end > 0 and (data[end] & 0xC0) == 0x80:  # a continuation byte: back up
        end -= 1
    return data[:end]


def _slug_char(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LNM"  # letters, digits, combining marks


def slugify(text: str) -> str:
    """Lower-case; every run of characters that are not letters or digits (any script)
    becomes ``-``; trimmed; at most 80 bytes, cut on a UTF-8 boundary. Empty → ``note``."""
    text = unicodedata.normalize("NFC", text).lower()
    out: list[str] = []
    dash = False
    for ch in text:
        if _slug_char(ch):
            out.append(ch)
            dash = False
        elif not dash:
            out.append("-")
            dash = True
    slug = "".join(out).strip("-")
    slug = cut_utf8(slug.encode(), SLUG_MAX_BYTES).decode().rstrip("-")
    return slug or "note"


def note_filename(note_type: str, slug: str, n: int = 1) -> str:
    """``<type>_<slug>.md``; from the second on ``<type>_<slug>-<n>.md``."""
    return f"{note_type}_{slug}.md" if n <= 1 else f"{note_type}_{slug}-{n}.md"


def unsafe_filename(name: str) -> str | None:
    """Why ``name`` may not name a note (None when it may)."""
    if not name or not name.strip():
        return "the filename is empty"
    if "/" in name or "\\" in name:
        return f"the filename {name!r} contains a path separator"
    if ".." in name:
        return f"the filename {name!r} contains '..'"
    if name.startswith("."):
        return f"the filename {name!r} starts with '.'"
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        return f"the filename {name!r} contains control characters"
    if not name.endswith(".md"):
        return f"the filename {name!r} does not end with .md"
    if name == INDEX_NAME:
        return f"{INDEX_NAME} is the index, not a note"
    if len(name.encode()) > 255:
        return "the filename is longer than 255 bytes"
    return None


def type_from_filename(name: str) -> str:
    for note_type in NOTE_TYPES:
        if name.startswith(note_type + "_"):
            return note_type
    return ""


def one_line(text: str, limit: int) -> str:
    """Whitespace (newlines included) collapsed; at most ``limit`` characters (``…``)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def title_key(title: str) -> str:
    """What makes two titles "the same": case and whitespace ignored."""
    return " ".join(unicodedata.normalize("NFC", title).casefold().split())


@dataclass(frozen=True)
class Note:
    """A parsed note file. ``problem`` says what was wrong with a hand-broken one."""

    type: str
    title: str
    created: str
    updated: str
    source: str
    body: str
    problem: str = ""


def render_note(note_type: str, title: str, created: str, updated: str, source: str,
                body: str) -> bytes:
    lines = [
        "---",
        f"type: {note_type}",
        f"title: {json.dumps(one_line(title, TITLE_MAX_CHARS), ensure_ascii=False)}",
        f"created: {created}",
        f"updated: {updated}",
    ]
    if source:
        lines.append(f"source: {json.dumps(one_line(source, 200), ensure_ascii=False)}")
    lines += ["---", "", body.strip(), ""]
    return "\n".join(lines).encode()


def _value(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        if raw[0] == '"':
            try:
                value = json.loads(raw)
            except ValueError:
                return raw[1:-1]
            return value if isinstance(value, str) else raw
        return raw[1:-1].replace("''", "'")
    return raw


_FENCE = re.compile(r"^---[ \t]*$")


def front_matter_end(lines: list[str]) -> int | None:
    """The index of the closing ``---`` when ``lines`` start with (closed) front matter."""
    if not lines or not _FENCE.match(lines[0]):
        return None
    return next((i for i in range(1, len(lines)) if _FENCE.match(lines[i])), None)


def parse_note(data: bytes, filename: str) -> Note:
    """Parse a note leniently: never raises. A note that cannot be read as intended keeps
    what could be recovered and says why in ``problem``."""
    fallback_type = type_from_filename(filename)
    fallback_title = filename.removesuffix(".md")
    if b"\x00" in data:
        return Note(fallback_type, fallback_title, "", "", "", "",
                    problem="binary content (NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        problem = "not valid UTF-8"
    else:
        problem = ""
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    lines = text.split("\n")
    if not lines or not _FENCE.match(lines[0]):
        return Note(fallback_type, fallback_title, "", "", "", text.strip(),
                    problem=problem or "no front matter")
    end = front_matter_end(lines)
    if end is None:
        return Note(fallback_type, fallback_title, "", "", "", text.strip(),
                    problem=problem or "front matter is not closed")
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, raw = line.partition(":")
        if sep and key.strip():
            fields[key.strip().lower()] = _value(raw)
    body = "\n".join(lines[end + 1:]).strip()
    note_type = fields.get("type", "")
    if note_type not in NOTE_TYPES:
        problem = problem or (f"unknown type {note_type!r}" if note_type else "no type")
        note_type = fallback_type
    return Note(note_type, fields.get("title") or fallback_title, fields.get("created", ""),
                fields.get("updated", ""), fields.get("source", ""), body, problem)


def derive_title(text: str, limit: int = 60) -> str:
    """A title for a note made from free text: its first non-empty line, shortened at a word
    boundary when it is long."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    first = " ".join(first.lstrip("#-*> ").split())
    if len(first) <= limit:
        return first or "Note"
    cut = first[:limit]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.") + "…"


def derive_summary(text: str, limit: int = 150) -> str:
    """A one-line summary of a note body: its text flattened and shortened."""
    return one_line(text, limit) or "No summary provided"
