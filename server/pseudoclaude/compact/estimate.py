"""Token estimates and the usage anchor (SPEC §4).

Estimate: the UTF-8 bytes of role + content + tool-call ids/names/arguments + result call
id/name/content/flag, divided by 3.5 and rounded up. The anchor calibrates it with what the
provider reported: after a model turn, anchor = (input + cache read + cache write + output
tokens, message count), and the estimate is the anchor plus the estimate of the messages after
it, so an estimate costs O(new messages).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass

from pseudoclaude.llm.editor import context_block
from pseudoclaude.llm.types import Message, Usage, utf8_len

BYTES_PER_TOKEN = 3.5


def _arguments_bytes(arguments: object) -> int:
    return utf8_len(arguments) if isinstance(arguments, str) else json_bytes(arguments)


def message_bytes(message: Message) -> int:
    return sum(message_parts(message))


def message_parts(message: Message) -> tuple[int, int, int]:
    """:func:`message_bytes` in three parts that add up to it: role + content, tool calls
    (ids, names, arguments), tool result (call id, name, content, flag)."""
    calls = 0
    for call in message.tool_calls:
        calls += utf8_len(call.id) + utf8_len(call.name) + _arguments_bytes(call.arguments)
    result = message.tool_result
    carried = 0
    if result is not None:
        carried = (utf8_len(result.call_id) + utf8_len(result.name)
                   + utf8_len(result.content) + (4 if result.is_error else 5))
    text = utf8_len(message.content)
    if message.context is not None:
        text += utf8_len(context_block(message.context))
    return len(message.role) + text, calls, carried


def json_bytes(value: object) -> int:
    """UTF-8 bytes of ``value`` as compact JSON (e.g. the tool schemas of a request)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"))


def tokens_for_bytes(n: int) -> int:
    return math.ceil(n / BYTES_PER_TOKEN) if n > 0 else 0


def estimate_messages(messages: Iterable[Message]) -> int:
    return tokens_for_bytes(sum(message_bytes(m) for m in messages))


@dataclass(frozen=True, slots=True)
class Anchor:
    """Provider-reported tokens for the first ``count`` messages."""

    tokens: int = 0
    count: int = 0

    @classmethod
    def from_usage(cls, usage: Usage, count: int) -> Anchor | None:
        total = usage.total
        return cls(total, count) if total > 0 else None
