"""A command's words as one line of text, the way rules see it. Pure.

Words are joined by single spaces; a word containing a space, a tab, a newline, ``"``, ``'`` or
``\\`` is written as a Go string literal (``strconv.Quote``: double quotes, backslash escapes),
as the Go PseudoClaude writes the commands it matches rules against. So ``git commit -m 'a b'``
and ``{"command": "git", "args": ["commit", "-m", "a b"]}`` are both
``git commit -m "a b"``.
"""

from __future__ import annotations

from collections.abc import Iterable

_NEEDS_QUOTES = frozenset(" \t\n\"'\\")
_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
            "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def go_quote(text: str) -> str:
    """``text`` as Go's ``strconv.Quote`` writes it."""
    out = ['"']
    for ch in text:
        escaped = _ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ch == " " or ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def quote_word(word: str) -> str:
    """One word as it appears in a command text."""
    return go_quote(word) if any(ch in _NEEDS_QUOTES for ch in word) else word


def join_words(words: Iterable[str]) -> str:
    """The command text of ``words``."""
    return " ".join(quote_word(word) for word in words)
