"""How a person sees a tool result: its status and a readable preview (not the JSON envelope).

One function for every front end: the live ``toolResult`` event, the transcript of
``pseudoclaude/sessions/messages`` and ACP's tool-call cards all show a result through
:func:`tool_view`, so no client decodes the envelope of SPEC §6 itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pseudoclaude.events import ToolStatus

PREVIEW_LINES = 20
PREVIEW_CHARS = 1_000
ELLIPSIS = "…"

_CANCELED_TYPES = frozenset({"canceled", "interrupted"})


@dataclass(frozen=True)
class ToolView:
    status: ToolStatus
    preview: str
    """The first lines of the result's content (or its error), readable."""
    error: str | None = None
    """A failed call's own error message."""


def short(text: str, lines: int = PREVIEW_LINES, chars: int = PREVIEW_CHARS) -> str:
    """The first ``lines`` lines and at most ``chars`` characters, ``…`` when cut."""
    kept = text.split("\n", lines)
    cut = len(kept) > lines
    head = "\n".join(kept[:lines])
    if len(head) > chars:
        head, cut = head[:chars], True
    return head.rstrip() + ELLIPSIS if cut else head


def tool_view(content: str, is_error: bool) -> ToolView:
    """The status and readable preview of a result's ``content`` (the envelope, or any text a
    log written elsewhere holds)."""
    try:
        envelope = json.loads(content)
    except ValueError:
        envelope = None
    if not isinstance(envelope, dict):  # not an envelope: the text itself
        return ToolView("error" if is_error else "done", short(content),
                        short(content, 1, 300) if is_error else None)
    body = envelope.get("content")
    text = body if isinstance(body, str) else "" if body is None else json.dumps(
        body, ensure_ascii=False)
    error = envelope.get("error")
    error = error if isinstance(error, str) and error else None
    failed = is_error or envelope.get("ok") is False
    if not failed:
        return ToolView("done", short(text))
    error_type = envelope.get("error_type")
    metadata = envelope.get("metadata")
    refused = error_type in ("denied", "tool_not_allowed", "hook_blocked") or (
        error_type == "permission_denied" and isinstance(metadata, dict) and "source" in metadata)
    status: ToolStatus = ("denied" if refused else
                          "canceled" if error_type in _CANCELED_TYPES else "error")
    message = error or short(text, 1, 300) or "the tool failed"
    return ToolView(status, short(text) if text else message, message)
