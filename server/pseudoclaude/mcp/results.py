"""A tool call's result as the text the model reads.

Text blocks are joined with newlines; an image (or audio) is a short note
(``[image: image/png, 12345 bytes]``); an embedded resource is its text (a binary one a note);
a resource link is a line with its URI; ``structuredContent`` is used (as compact JSON) when
there is no text. Nothing is cut: a large result is returned whole (the agent's Layer 1 spills
it). ``isError`` makes an error result. Pure; reads the SDK's result objects by their
attributes, so importing this module does not import the SDK.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

ErrorType = Literal["tool_error", "timeout", "connection_lost", "unavailable", "unknown_tool",
                    "invalid_arguments", "protocol_error"]
"""Why a call failed: the server's tool reported an error (``isError``); no answer within
``mcp.toolTimeout``; the server went away during the call; the server is not running (failed,
disabled, waiting for approval, or the manager is closed); no such tool; the arguments are not a
JSON object; the server answered with a protocol error (such as an unknown tool)."""


@dataclass(frozen=True, slots=True)
class McpCallResult:
    """The outcome of one MCP tool call: ``text`` for the model, and whether it failed."""

    text: str
    is_error: bool = False
    error_type: ErrorType | None = None

    @classmethod
    def error(cls, error_type: ErrorType, text: str) -> McpCallResult:
        return cls(text=text, is_error=True, error_type=error_type)


def _base64_bytes(data: str) -> int:
    """The decoded size of base64 ``data`` (without decoding it)."""
    data = "".join(data.split())
    return max(0, len(data) * 3 // 4 - (len(data) - len(data.rstrip("="))))


def _note(kind: str, mime: Any, data: Any) -> str:
    size = _base64_bytes(data) if isinstance(data, str) else 0
    return f"[{kind}: {mime or 'unknown type'}, {size} bytes]"


def block_text(block: Any) -> tuple[str, bool]:
    """One content block as text, and whether it is text (rather than a note)."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", "")), True
    if kind in ("image", "audio"):
        mime, data = getattr(block, "mime_type", None), getattr(block, "data", None)
        return _note(kind, mime, data), False
    if kind == "resource":
        resource = getattr(block, "resource", None)
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return text, True
        uri = getattr(resource, "uri", "")
        mime = getattr(resource, "mime_type", None)
        size = _base64_bytes(getattr(resource, "blob", "") or "")
        return f"[resource: {uri}, {mime or 'binary'}, {size} bytes]", False
    if kind == "resource_link":
        uri = str(getattr(block, "uri", ""))
        name = getattr(block, "name", None)
        shown = f" ({name})" if isinstance(name, str) and name and name != uri else ""
        return f"[resource link: {uri}{shown}]", False
    return f"[{kind or 'unknown'} content]", False


def result_text(result: Any) -> str:
    """The text of a ``CallToolResult`` (see the module docstring)."""
    parts: list[str] = []
    has_text = False
    for block in getattr(result, "content", None) or ():
        text, is_text = block_text(block)
        has_text = has_text or is_text
        parts.append(text)
    structured = getattr(result, "structured_content", None)
    if not has_text and structured is not None:
        parts.insert(0, json.dumps(structured, ensure_ascii=False, separators=(",", ":"),
                                   default=str))
    return "\n".join(parts)


def convert(result: Any) -> McpCallResult:
    """A ``CallToolResult`` as an :class:`McpCallResult` (``isError`` → ``tool_error``)."""
    text = result_text(result)
    if getattr(result, "is_error", False):
        return McpCallResult.error("tool_error", text or "the tool reported an error")
    return McpCallResult(text=text)
