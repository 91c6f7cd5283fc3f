"""The preview that replaces a spilled tool result (SPEC §4)."""

from __future__ import annotations

import re

HEAD_LINES = 20
HEAD_BYTES = 2048
READ_HINT = (
    "The full content is saved in the file above. Read it with the read_file tool when you "
    "need more than this preview; do not guess what the rest says."
)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(call_id: str) -> str:
    """A file name for a call id: runs of characters outside ``[A-Za-z0-9._-]`` become ``_``."""
    name = _UNSAFE.sub("_", call_id).strip(".")
    return name or "tool-result"


def utf8_head(text: str, max_lines: int = HEAD_LINES, max_bytes: int = HEAD_BYTES) -> str:
    """The first ``max_lines`` lines, at most ``max_bytes`` bytes, cut on a character boundary."""
    lines = text.split("\n", max_lines)
    head = "\n".join(lines[:max_lines])
    data = head.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return head
    return data[:max_bytes].decode("utf-8", "ignore")


def make_preview(content: str, path_label: str) -> str:
    size = len(content.encode("utf-8", "surrogatepass"))
    head = utf8_head(content)
    if head and not head.endswith("\n"):
        head += "\n"
    return (
        f"[content offloaded] original size: {size} bytes\n"
        f"[saved to] {path_label}\n"
        f"[head preview]\n"
        f"{head}\n"
        f"{READ_HINT}"
    )
