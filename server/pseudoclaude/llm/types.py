"""Message types shared by every layer (SPEC §2).

The structs are msgspec ``Struct`` types so the session log can decode a JSONL line straight
into them without an intermediate dict (the hot path of resume). They are plain value objects:
treat them as immutable and use :func:`copy_message` when a private copy is needed.

Encoding a :class:`Message` with ``msgspec.json`` gives exactly the inline message shape of the
v1 session log (empty fields omitted).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

import msgspec

from pseudoclaude.llm.editor import EditorContext, context_block

Role = Literal["user", "assistant"]



def utf8_len(text: str) -> int:
    """UTF-8 bytes of ``text`` (lone surrogates counted as their three bytes)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))

class ToolCall(msgspec.Struct, omit_defaults=True, gc=False):
    """One tool call produced by the model.

    ``arguments`` is the JSON object the model produced. When the model produced something
    that is not a JSON object (malformed JSON, a bare string, nothing), the raw text is kept as
    a ``str`` so nothing is ever dropped.
    """

    id: str
    name: str
    arguments: Any = msgspec.field(default_factory=dict)


class ToolResult(msgspec.Struct, omit_defaults=True, gc=False):
    call_id: str
    name: str = ""
    content: str = ""
    is_error: bool = False


class ThinkingBlock(msgspec.Struct, omit_defaults=True, gc=False):
    """An Anthropic extended-thinking block, kept verbatim so it can be sent back.

    ``data`` is set (and ``thinking`` empty) for a redacted thinking block.
    """

    thinking: str = ""
    signature: str = ""
    data: str = ""


class Usage(msgspec.Struct, omit_defaults=True, gc=False):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read + self.cache_write

    @property
    def input_all(self) -> int:
        """Every input token of the requests: uncached, read from the cache and written to it
        (``input_tokens`` alone is the uncached part)."""
        return self.input_tokens + self.cache_read + self.cache_write

    def plus(self, other: Usage) -> Usage:
        """The two added up."""
        return Usage(self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens,
                     self.cache_read + other.cache_read, self.cache_write + other.cache_write)


class Message(msgspec.Struct, omit_defaults=True, gc=False):
    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = msgspec.field(default_factory=list)
    tool_result: ToolResult | None = None
    thinking: list[ThinkingBlock] = msgspec.field(default_factory=list)
    usage: Usage | None = None
    """What the provider reported for the turn that produced this assistant message: only
    carried from the runner to the session log (its ``usage`` stamp). The conversation does
    not keep it and providers never send it."""
    context: EditorContext | None = None
    """A prompt's editor context (the active file, the selection...): the model reads it as
    one short block before the prompt's text (:func:`prompt_texts`)."""
    summary: bool = False
    """The summary a compaction put first (:mod:`pseudoclaude.conversation.summary`)."""


def prompt_texts(message: Message) -> list[str]:
    """The texts of a message as the model reads them: the editor context block (a prompt
    sent with one), then the content (when not blank)."""
    texts = [context_block(message.context)] if message.context is not None else []
    if message.content.strip():
        texts.append(message.content)
    return texts


def parse_arguments(raw: str | bytes | None) -> Any:
    """Turn a provider's raw tool-argument text into the value stored on a ToolCall.

    A JSON object becomes a dict; anything else (empty, invalid JSON, a JSON scalar or array)
    is kept as the original text so it is never lost.
    """
    if raw is None:
        return {}
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) else text


NOTIFICATION_TAG = "<task-notification>"
"""How a user message that tells the model of background tasks that ended starts."""


def is_notification(message: Message) -> bool:
    """A user message the session appended to tell the model that background tasks ended (SPEC
    §13): part of the conversation, but not a prompt (no turn of its own)."""
    return message.role == "user" and message.tool_result is None \
        and message.content.startswith(NOTIFICATION_TAG)


def user(text: str) -> Message:
    return Message(role="user", content=text)


def assistant(
    text: str = "",
    tool_calls: list[ToolCall] | None = None,
    thinking: list[ThinkingBlock] | None = None,
) -> Message:
    return Message(
        role="assistant", content=text, tool_calls=list(tool_calls or []),
        thinking=list(thinking or []),
    )


def tool_result_message(result: ToolResult) -> Message:
    return Message(role="user", tool_result=result)


def _copy_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_value(v) for v in value]
    return value


def copy_message(message: Message) -> Message:
    """A deep copy: mutating the copy (or its lists, dicts, results) never reaches the original."""
    result = message.tool_result
    return Message(
        role=message.role,
        content=message.content,
        tool_calls=[
            ToolCall(c.id, c.name, _copy_value(c.arguments)) for c in message.tool_calls
        ],
        tool_result=None if result is None else ToolResult(
            result.call_id, result.name, result.content, result.is_error
        ),
        thinking=[ThinkingBlock(t.thinking, t.signature, t.data) for t in message.thinking],
        usage=message.usage,
        context=message.context,
        summary=message.summary,
    )


def copy_messages(messages: list[Message]) -> list[Message]:
    return [copy_message(m) for m in messages]


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_value(value: Any) -> Any:
    """``value`` with lone surrogates (text that is not valid Unicode, e.g. from undecodable
    bytes) replaced by U+FFFD, in strings at any depth; unchanged objects are returned as is."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {clean_value(k): clean_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_value(v) for v in value]
    return value


def clean_message(message: Message) -> Message:
    """A message every provider and the log can encode (see :func:`clean_value`).

    Works on a private copy: it may modify ``message`` in place.
    """
    message.content = clean_value(message.content)
    for call in message.tool_calls:
        call.id, call.name = clean_value(call.id), clean_value(call.name)
        call.arguments = clean_value(call.arguments)
    result = message.tool_result
    if result is not None:
        result.call_id, result.name = clean_value(result.call_id), clean_value(result.name)
        result.content = clean_value(result.content)
    for block in message.thinking:
        block.thinking = clean_value(block.thinking)
    return message


def error_envelope(tool: str, error_type: str, error: str) -> str:
    """The JSON envelope of a failed tool call (SPEC §6), as the text of a ToolResult."""
    return json.dumps(
        {"ok": False, "tool": tool, "content": "", "error_type": error_type, "error": error},
        ensure_ascii=False,
    )


def synthetic_error_result(call: ToolCall, error_type: str, error: str) -> Message:
    """A tool-result message standing in for a call that never produced one."""
    return tool_result_message(
        ToolResult(
            call_id=call.id, name=call.name,
            content=error_envelope(call.name, error_type, error), is_error=True,
        )
    )
