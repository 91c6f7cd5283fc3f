"""Tool calls a model printed as text instead of making them (local models whose server did
not parse its own tool-call format).

A text-only answer is taken for calls only when its whole content, trimmed, is one or more
``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` blocks (Qwen/Hermes style), or one
such JSON object alone, and every name is one of the tools offered in the request. JSON inside
prose, a name that was not offered, or anything else around the blocks leaves the answer as
text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any, NamedTuple

OPEN, CLOSE = "<tool_call>", "</tool_call>"
_BLOCK = re.compile(re.escape(OPEN) + r"(.*?)" + re.escape(CLOSE), re.DOTALL)


class TextCall(NamedTuple):
    name: str
    arguments: Any
    """A dict, or the raw text of arguments that are not a JSON object (a failed call)."""


def _call(text: str, tools: Collection[str]) -> TextCall | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or set(value) != {"name", "arguments"}:
        return None
    name, arguments = value["name"], value["arguments"]
    if not isinstance(name, str) or name not in tools:
        return None
    if isinstance(arguments, str):  # some models encode the arguments as a JSON string
        try:
            decoded = json.loads(arguments)
        except ValueError:
            decoded = None
        arguments = decoded if isinstance(decoded, dict) else arguments
    elif not isinstance(arguments, dict):
        return None
    return TextCall(name, arguments)


def calls_in_text(text: str, tools: Collection[str]) -> list[TextCall]:
    """The calls ``text`` consists of (empty when it is not only calls; see the module)."""
    whole = text.strip()
    if not whole or not tools:
        return []
    if not whole.startswith(OPEN):
        call = _call(whole, tools) if whole.startswith("{") else None
        return [call] if call is not None else []
    calls: list[TextCall] = []
    end = 0
    for match in _BLOCK.finditer(whole):
        if whole[end:match.start()].strip():
            return []
        call = _call(match.group(1).strip(), tools)
        if call is None:
            return []
        calls.append(call)
        end = match.end()
    return calls if whole[end:].strip() == "" else []
