"""Human and JSON renderings of sessions and messages (shared by the CLI and the editors)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import msgspec

from pseudoclaude.llm.types import Message
from pseudoclaude.names import plural


def message_to_json(message: Message) -> dict[str, Any]:
    """The v1 log shape of a message (as inside a ``replace`` line): empty fields omitted."""
    value = msgspec.to_builtins(message)
    assert isinstance(value, dict)
    return value


def describe_size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB"
    if n >= 1024:
        return f"{n / 1024:.1f} KB"
    return plural(n, "byte")


def describe_age(moment: datetime, now: datetime | None = None) -> str:
    now = now or datetime.now(moment.tzinfo)
    seconds = (now - moment).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h ago"
    return f"{int(seconds // 86400)}d ago"


def _short(text: str, limit: int = 400) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"... [{plural(len(text) - limit, 'more char')}]"


def render_message(message: Message) -> str:
    """A few readable lines for a terminal transcript."""
    lines: list[str] = []
    if message.tool_result is not None:
        r = message.tool_result
        status = "error" if r.is_error else "ok"
        lines.append(f"[tool result {r.name} {r.call_id} {status}] {_short(r.content)}")
        return "\n".join(lines)
    if message.thinking:
        lines.append(f"[{message.role} thinking: {plural(len(message.thinking), 'block')}]")
    if message.content:
        lines.append(f"[{message.role}] {_short(message.content)}")
    for call in message.tool_calls:
        args = call.arguments if isinstance(call.arguments, str) else json.dumps(
            call.arguments, ensure_ascii=False)
        lines.append(f"[tool call {call.name} {call.id}] {_short(args, 200)}")
    return "\n".join(lines) or f"[{message.role}] (empty)"
