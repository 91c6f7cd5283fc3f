"""The v1 JSONL entry codec of the session log (SPEC §3), plus the Go original's legacy lines.

Decoding has two paths:
- the fast path: one typed msgspec decode of the tagged entry union, straight into structs;
- the legacy path, taken only when the fast path rejects a line: a generic decode that accepts
  the Go PseudoClaude's shapes (no ``type``, capitalised nested keys ``ID``/``CallID``...,
  replace markers without ``messages``).
A line neither path accepts raises :class:`BadLine`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from pseudoclaude.llm.editor import EditorContext
from pseudoclaude.llm.types import (
    Message,
    Role,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    clean_value,
)

LOG_VERSION = 1


class SessionEntry(msgspec.Struct, tag="session", tag_field="type", gc=False):
    version: int
    id: str
    created: str
    workspace: str = ""


class UsageStamp(msgspec.Struct, gc=False, rename={
        "input_tokens": "input", "output_tokens": "output", "cache_read": "cacheRead",
        "cache_write": "cacheWrite"}):
    """The provider's usage for the turn of an assistant message line:
    ``{input, output, cacheRead, cacheWrite}`` (SPEC §11 "Details"); it restores the
    estimate's anchor on resume."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read + self.cache_write

    @classmethod
    def of(cls, message: Message) -> UsageStamp | None:
        """The stamp of an assistant message carrying a (non-empty) usage, else None."""
        u = message.usage
        if u is None or message.role != "assistant" or u.total <= 0:
            return None
        return cls(u.input_tokens, u.output_tokens, u.cache_read, u.cache_write)


class MessageEntry(msgspec.Struct, tag="message", tag_field="type", omit_defaults=True, gc=False):
    """A message line. Its sequences are tuples: most messages have no tool calls and no
    thinking, and the empty tuple is shared, so a replay of a million lines allocates two
    million fewer objects."""

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_result: ToolResult | None = None
    thinking: tuple[ThinkingBlock, ...] = ()
    ts: float = 0.0
    model: str = ""
    usage: UsageStamp | None = None
    """Assistant lines: the turn's provider usage (absent when none was reported)."""
    context: EditorContext | None = None
    """A prompt's editor context (what the user had open when they sent it)."""

    def to_message(self) -> Message:
        return Message(self.role, self.content, list(self.tool_calls), self.tool_result,
                       list(self.thinking), context=self.context)

    @classmethod
    def from_message(cls, m: Message, ts: float, model: str = "") -> MessageEntry:
        return cls(m.role, m.content, tuple(m.tool_calls), m.tool_result, tuple(m.thinking),
                   ts, model, UsageStamp.of(m), m.context)


class OffloadEntry(msgspec.Struct, tag="offload", tag_field="type", gc=False):
    call_id: str
    path: str
    bytes: int
    preview: str
    ts: float = 0.0


class KeepEntry(msgspec.Struct, tag="keep", tag_field="type", gc=False):
    call_ids: list[str]
    ts: float = 0.0


class ReplaceEntry(msgspec.Struct, tag="replace", tag_field="type", omit_defaults=True, gc=False):
    reason: str = ""
    # None only in the Go original's marker, which is followed by separate message lines.
    messages: list[Message] | None = None
    ts: float = 0.0
    turn: int | None = None
    """A ``rewind``'s target: the turn the conversation went back to (its prompt and the ones
    after it are taken back)."""


class CheckpointEntry(msgspec.Struct, tag="checkpoint", tag_field="type", gc=False):
    """A snapshot of the workspace's files (the shadow repository's commit ``ref``), taken at
    the start of prompt ``turn`` (1-based) or after one of its tool calls that may change
    files."""

    turn: int
    ref: str
    ts: float = 0.0


class ForkEntry(msgspec.Struct, tag="fork", tag_field="type", omit_defaults=True, gc=False):
    """The first line after the header of a session forked from ``parent`` before its prompt
    ``turn`` (None: after its last)."""

    parent: str
    turn: int | None = None
    ts: float = 0.0


class ModeEntry(msgspec.Struct, tag="mode", tag_field="type", gc=False):
    """The session's permission mode from here on (a session without one starts in the
    folder's ``defaultMode``)."""

    mode: str
    ts: float = 0.0


class TaskEntry(msgspec.Struct, gc=False):
    content: str
    status: str


class TasksEntry(msgspec.Struct, tag="tasks", tag_field="type", gc=False):
    """The session's task list from here on (``update_tasks`` replaces it whole)."""

    tasks: list[TaskEntry]
    ts: float = 0.0


class AgentEntry(msgspec.Struct, tag="agent", tag_field="type", omit_defaults=True, gc=False,
                 rename="camel"):
    """The first line of a sub-agent's log (``<session dir>/agents/<agentId>.jsonl``, SPEC §13):
    its parent session, its id, the ``agent`` call that started it, its type and task."""

    parent: str
    agent_id: str
    call_id: str = ""
    subagent_type: str = ""
    description: str = ""
    name: str = ""
    model: str = ""
    created: str = ""
    version: int = LOG_VERSION


class AgentStopEntry(msgspec.Struct, tag="agentStop", tag_field="type", gc=False,
                     rename="camel"):
    """The last line of a sub-agent's log: how it ended (``completed``, ``failed``,
    ``canceled``, ``max_turns``) and what its requests were billed."""

    status: str
    input_tokens: int = 0
    output_tokens: int = 0
    error: str = ""
    ts: float = 0.0


Entry = (SessionEntry | MessageEntry | OffloadEntry | KeepEntry | ReplaceEntry
         | CheckpointEntry | ForkEntry | ModeEntry | TasksEntry | AgentEntry | AgentStopEntry)
STATE_ENTRIES = (ModeEntry, TasksEntry)
"""Entries that hold a state of the session rather than its history: a ``replace`` does not
reset them, and the writer repeats the latest of each after every ``replace`` it writes, so a
replay from the last ``replace`` still finds them."""


class BadLine(ValueError):
    """A line that is not a valid entry (bad JSON, bad UTF-8, wrong types, too long)."""


_decoder = msgspec.json.Decoder(Entry)
_encoder = msgspec.json.Encoder()


def encode(entry: Entry) -> bytes:
    """One log line, ``\\n``-terminated. Lone surrogates (never valid UTF-8) become U+FFFD."""
    try:
        return _encoder.encode(entry) + b"\n"
    except UnicodeEncodeError:
        return _encoder.encode(clean_value(msgspec.to_builtins(entry))) + b"\n"


def decode(line: bytes) -> Entry:
    """Decode one line (without or with its trailing newline)."""
    try:
        entry = _decoder.decode(line)
    except msgspec.DecodeError as fast_error:
        return _decode_legacy(line, fast_error)
    normalise(entry)
    return entry


def normalise(entry: Entry) -> None:
    """Tool-call arguments are a dict or the raw text, never null."""
    if isinstance(entry, MessageEntry):
        if entry.tool_calls:
            _normalise_arguments(entry.tool_calls)
    elif isinstance(entry, ReplaceEntry) and entry.messages:
        for m in entry.messages:
            if m.tool_calls:
                _normalise_arguments(m.tool_calls)


def _normalise_arguments(calls: Sequence[ToolCall]) -> None:
    for call in calls:
        if call.arguments is None:
            call.arguments = {}


# -- legacy (Go PseudoClaude) lines ------------------------------------------------------------

def _decode_legacy(line: bytes, fast_error: Exception) -> Entry:
    try:
        raw = msgspec.json.decode(line)
    except msgspec.DecodeError as exc:
        raise BadLine(str(exc)) from None
    if not isinstance(raw, dict):
        raise BadLine("line is not a JSON object")
    kind = raw.get("type") or "message"
    try:
        if kind == "message":
            return _legacy_message_entry(raw)
        if kind == "replace":
            messages = raw.get("messages")
            return ReplaceEntry(
                reason=_str(raw.get("reason")),
                messages=None if messages is None else [
                    _legacy_message_entry(m).to_message() for m in _list(messages)
                ],
                ts=_num(raw.get("ts")),
            )
    except (TypeError, ValueError, KeyError, msgspec.ValidationError) as exc:
        raise BadLine(f"{kind} entry: {exc}") from None
    raise BadLine(f"{kind} entry: {fast_error}")


def _get(obj: dict[str, Any], *names: str) -> Any:
    """Go's JSON decoder matches keys case-insensitively; so do we (plus snake_case)."""
    for name in names:
        if name in obj:
            return obj[name]
    lowered = {k.lower(): v for k, v in obj.items()}
    for name in names:
        key = name.lower()
        if key in lowered:
            return lowered[key]
    return None


def _str(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _num(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def _dict(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return value


def _legacy_message_entry(raw: Any) -> MessageEntry:
    raw = _dict(raw)
    role = _get(raw, "role")
    if role not in ("user", "assistant"):
        raise ValueError(f"role must be 'user' or 'assistant', got {role!r}")
    calls = []
    for item in _list(_get(raw, "tool_calls", "ToolCalls")):
        item = _dict(item)
        arguments = _get(item, "arguments", "Arguments")
        calls.append(
            ToolCall(
                id=_str(_get(item, "id", "ID")),
                name=_str(_get(item, "name", "Name")),
                arguments={} if arguments is None else arguments,
            )
        )
    result = None
    raw_result = _get(raw, "tool_result", "ToolResult")
    if raw_result is not None:
        raw_result = _dict(raw_result)
        result = ToolResult(
            call_id=_str(_get(raw_result, "call_id", "CallID")),
            name=_str(_get(raw_result, "name", "Name")),
            content=_str(_get(raw_result, "content", "Content")),
            is_error=bool(_get(raw_result, "is_error", "IsError")),
        )
    thinking = [
        msgspec.convert(t, ThinkingBlock) for t in _list(_get(raw, "thinking"))
    ]
    usage = raw.get("usage")
    return MessageEntry(
        role=role,
        content=_str(_get(raw, "content", "Content")),
        tool_calls=tuple(calls),
        tool_result=result,
        thinking=tuple(thinking),
        ts=_num(raw.get("ts")),
        model=_str(raw.get("model")),
        usage=None if usage is None else msgspec.convert(usage, UsageStamp),
    )
