"""The operations a memory update returns, and getting them out of a model's reply (SPEC §5).

A reply is expected to be a JSON array of
``{action: create|update|delete|noop, level: project|user, type, title, summary, slug, filename,
content}``. Models wrap it in prose and code fences, so :func:`extract_json_array` finds the
first balanced JSON array anywhere in the text (string- and escape-aware, so brackets inside
JSON strings do not count). :func:`parse_operations` then checks every operation **before any
is applied**: each bad one is rejected with a reason, the others go ahead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from pseudoclaude.memory.notes import LEVELS, NOTE_TYPES, unsafe_filename
from pseudoclaude.memory.sensitive import find_secret

ACTIONS: Final = ("create", "update", "delete", "noop")
FIELDS: Final = ("action", "level", "type", "title", "summary", "slug", "filename", "content")
REQUIRED: Final[dict[str, tuple[str, ...]]] = {
    "create": ("level", "type", "title", "content"),
    "update": ("level", "filename", "content"),
    "delete": ("level", "filename"),
    "noop": (),
}
MAX_REPLY_CHARS: Final = 400_000
MAX_CANDIDATES: Final = 64
"""``[`` positions tried at most (a reply full of unmatched brackets stays cheap)."""
MAX_CONTENT_CHARS: Final = 64_000


class OperationsError(ValueError):
    """The reply holds no usable JSON array of operations."""


@dataclass(frozen=True)
class Operation:
    action: str
    level: str = ""
    type: str = ""
    title: str = ""
    summary: str = ""
    slug: str = ""
    filename: str = ""
    content: str = ""

    def describe(self) -> str:
        target = self.filename or self.title or self.slug
        return f"{self.action} {self.level or '?'}" + (f" {target!r}" if target else "")


@dataclass(frozen=True)
class Rejected:
    """An operation that will not be applied, and why."""

    index: int
    raw: Any
    reason: str

    def __str__(self) -> str:
        return f"operation {self.index + 1}: {self.reason}"


def _array_end(text: str, start: int) -> int | None:
    """The index just past the ``]`` that closes the ``[`` at ``start`` (strings and escapes
    respected), or None when it is never closed."""
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return i + 1 if ch == "]" else None
            if depth < 0:
                return None
    return None


def extract_json_array(text: str) -> list[Any] | None:
    """The first balanced JSON array in ``text`` that parses, preferring one whose items are
    all objects (so ``Step [1]: ...`` before the real answer is passed over); None if none."""
    text = text[:MAX_REPLY_CHARS]
    fallback: list[Any] | None = None
    position = text.find("[")
    tries = 0
    while position != -1 and tries < MAX_CANDIDATES:
        tries += 1
        end = _array_end(text, position)
        if end is not None:
            try:
                value = json.loads(text[position:end])
            except ValueError:
                value = None
            if isinstance(value, list):
                if all(isinstance(item, dict) for item in value):
                    return value
                if fallback is None:
                    fallback = value
        position = text.find("[", position + 1)
    return fallback


def _text(raw: dict[str, Any], key: str) -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise TypeError(f"field {key!r} is not a string")


def check_operation(raw: Any) -> Operation | str:
    """The operation, or the reason it is rejected."""
    if not isinstance(raw, dict):
        return f"not a JSON object ({type(raw).__name__})"
    try:
        values = {key: _text(raw, key) for key in FIELDS}
    except TypeError as exc:
        return str(exc)
    action = values["action"].lower() or "noop"
    if action not in ACTIONS:
        return f"unknown action {values['action']!r} (expected one of {', '.join(ACTIONS)})"
    op = Operation(action=action, **{k: v for k, v in values.items() if k != "action"})
    if action == "noop":
        return op
    missing = [key for key in REQUIRED[action] if not values[key]]
    if missing:
        return f"{action} is missing {', '.join(missing)}"
    if op.level not in LEVELS:
        return f"unknown level {op.level!r} (expected project or user)"
    if op.type and op.type not in NOTE_TYPES:
        return f"unknown type {op.type!r} (expected one of {', '.join(NOTE_TYPES)})"
    if op.filename:
        problem = unsafe_filename(op.filename)
        if problem is not None:
            return problem
    if len(op.content) > MAX_CONTENT_CHARS:
        return f"content is longer than {MAX_CONTENT_CHARS} characters"
    for key in ("title", "summary", "slug", "content"):
        kind = find_secret(values[key])
        if kind is not None:
            return f"the {key} looks like it contains {kind}; secrets are never stored"
    return op


def parse_operations(reply: str) -> tuple[list[Operation], list[Rejected]]:
    """Every valid, non-noop operation of a reply, in order, and the rejected ones.
    Raises :class:`OperationsError` when the reply holds no JSON array."""
    array = extract_json_array(reply)
    if array is None:
        raise OperationsError("the reply holds no JSON array of operations"
                              if reply.strip() else "the reply is empty")
    valid: list[Operation] = []
    rejected: list[Rejected] = []
    for i, raw in enumerate(array):
        checked = check_operation(raw)
        if isinstance(checked, str):
            rejected.append(Rejected(i, raw, checked))
        elif checked.action != "noop":
            valid.append(checked)
    return valid, rejected
