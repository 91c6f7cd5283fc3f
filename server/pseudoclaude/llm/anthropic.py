"""Anthropic Messages API adapter on the official SDK (``AsyncAnthropic``), streaming.

Imported lazily by :func:`pseudoclaude.llm.provider.create_provider` (it imports the SDK).

Request shape:

- the system prompt is one text block marked ``cache_control: ephemeral`` (tools and system
  are the stable, cached prefix); the last block of the last user turn is marked too, so each
  request of a tool loop reads the previous one's prefix from the cache;
- consecutive messages of one role are merged into one turn (tool results first, then text),
  as the API requires strict alternation; a leading assistant turn gets a placeholder user
  turn before it;
- assistant thinking blocks (and redacted ones) are sent back first in their turn, with their
  signatures; tool-call arguments that are a raw string (not a JSON object) are sent as
  ``{"_raw_arguments": text}``, since the API takes only objects;
- tool ids are reduced to ``[A-Za-z0-9_-]`` (ids from another provider may not fit).

Tool calls are announced when their block is known to be complete: when the next block starts
or the turn stops. A ``max_tokens`` stop while the last block is a tool call raises
:class:`MaxTokensTruncated` instead of a half call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import anthropic

from pseudoclaude.llm.errors import (
    NetworkError,
    ProviderError,
    ProviderTimeout,
    connection_failed,
    from_status,
    from_transport,
    scrub,
)
from pseudoclaude.llm.provider import (
    ProviderOptions,
    SdkProvider,
    Stop,
    StreamEvent,
    TextDelta,
    ThinkingComplete,
    ThinkingDelta,
    ToolCallComplete,
    ToolSpec,
    UsageEvent,
    truncated_tool_call,
)
from pseudoclaude.llm.types import (
    Message,
    ThinkingBlock,
    ToolCall,
    Usage,
    parse_arguments,
    prompt_texts,
)

CACHE = {"type": "ephemeral"}
REMINDER = "<system-reminder>"
"""How a request's trailing reminder starts (``pseudoclaude.agent.reminders``)."""
_TRUNCATING_STOPS = ("max_tokens", "model_context_window_exceeded")


def _tool_id(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", value) or "tool"


def _tool_input(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    return {"_raw_arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}


def _blocks(message: Message) -> list[dict[str, Any]]:
    """The content blocks of one message (tool results and thinking first)."""
    blocks: list[dict[str, Any]] = []
    if message.role == "assistant":
        for t in message.thinking:
            if t.data:
                blocks.append({"type": "redacted_thinking", "data": t.data})
            else:
                blocks.append({"type": "thinking", "thinking": t.thinking,
                               "signature": t.signature})
    if message.tool_result is not None:
        r = message.tool_result
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": _tool_id(r.call_id)}
        if r.content:
            block["content"] = r.content
        if r.is_error:
            block["is_error"] = True
        blocks.append(block)
    blocks += [{"type": "text", "text": text} for text in prompt_texts(message)]
    if message.role == "assistant":
        for call in message.tool_calls:
            blocks.append({"type": "tool_use", "id": _tool_id(call.id), "name": call.name,
                           "input": _tool_input(call.arguments)})
    return blocks


def _order(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Within a turn: thinking, then tool results, then the rest (stable)."""
    rank = {"thinking": 0, "redacted_thinking": 0, "tool_result": 1}
    return sorted(blocks, key=lambda b: rank.get(b["type"], 2))


def to_anthropic_messages(messages: list[Message], *, cache: bool = True
                          ) -> list[dict[str, Any]]:
    """Our history as Messages API turns (merged, alternating, user first; with ``cache``, the
    last block of a last user turn is a cache breakpoint)."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == message.role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": message.role, "content": blocks})
    for turn in turns:
        turn["content"] = _order(turn["content"])
    if turns and turns[0]["role"] == "assistant":
        turns.insert(0, {"role": "user",
                         "content": [{"type": "text", "text": "(conversation continues)"}]})
    if cache and turns and turns[-1]["role"] == "user":
        blocks = turns[-1]["content"]
        # a reminder that ends the request (never logged, changing each round) stays after
        # the cached prefix: the breakpoint goes on the block before it
        while len(blocks) > 1 and blocks[-1]["type"] == "text" and \
                blocks[-1]["text"].startswith(REMINDER):
            blocks = blocks[:-1]
        last = blocks[-1]
        if last["type"] in ("text", "tool_result") and not (
                last["type"] == "text" and last["text"].startswith(REMINDER)):
            last["cache_control"] = dict(CACHE)
    return turns


def to_anthropic_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools]


@dataclass
class _Block:
    kind: str
    text: list[str] = field(default_factory=list)
    signature: str = ""
    data: str = ""
    call_id: str = ""
    name: str = ""
    initial_input: Any = None
    json_parts: list[str] = field(default_factory=list)


@dataclass
class _Turn:
    """State of one streamed turn."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    pending: ToolCall | None = None
    open_tool: bool = False
    usage: Usage = field(default_factory=Usage)
    stop_raw: str = ""
    stopped: bool = False


def _usage_from(raw: Any, into: Usage) -> None:
    if raw is None:
        return
    for attr, name in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
                       ("cache_read_input_tokens", "cache_read"),
                       ("cache_creation_input_tokens", "cache_write")):
        value = getattr(raw, attr, None)
        if isinstance(value, int):
            setattr(into, name, value)


class AnthropicProvider(SdkProvider[_Turn]):
    """:class:`~pseudoclaude.llm.provider.Provider` on ``anthropic.AsyncAnthropic``."""

    name = "anthropic"

    def __init__(self, options: ProviderOptions) -> None:
        super().__init__(options)
        key = options.key() or "no-key"  # a keyless local endpoint (base_url) still needs one
        self._client = anthropic.AsyncAnthropic(
            api_key=key,
            base_url=options.base_url,
            max_retries=0,
            timeout=anthropic.Timeout(options.read_timeout, connect=options.connect_timeout),
            default_headers=options.extra_headers or None,
        )

    async def aclose(self) -> None:
        await self._client.close()

    def request(self, system: str, messages: list[Message], tools: list[ToolSpec],
                cache: bool = True, environment: str = "") -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` (without ``stream``); without
        ``cache``, no breakpoint (a request no later one repeats writes nothing). The
        ``environment`` block is a second system block, after the breakpoint."""
        opts = self.options
        params: dict[str, Any] = {
            "model": opts.model,
            "max_tokens": opts.max_tokens,
            "messages": to_anthropic_messages(messages, cache=cache),
        }
        if system:
            params["system"] = [{"type": "text", "text": system}]
            if cache:
                params["system"][0]["cache_control"] = dict(CACHE)
        if environment:
            params.setdefault("system", []).append({"type": "text", "text": environment})
        if tools:
            params["tools"] = to_anthropic_tools(tools)
        if opts.thinking:
            params["thinking"] = (
                {"type": "adaptive"} if opts.thinking_mode == "adaptive"
                else {"type": "enabled", "budget_tokens": opts.thinking_budget})
        return params

    def map_error(self, exc: BaseException) -> ProviderError | None:
        """A typed error for an SDK or transport exception (``None``: not ours to map)."""
        secrets = [self.options.key()]
        if isinstance(exc, anthropic.APITimeoutError):
            return ProviderTimeout(f"anthropic: request timed out after "
                                   f"{self.options.read_timeout:g}s", provider=self.name)
        if isinstance(exc, anthropic.APIConnectionError):
            return connection_failed(exc, provider=self.name, secrets=secrets)
        if isinstance(exc, anthropic.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else {}
            inner = body.get("error")
            error: dict[str, Any] = inner if isinstance(inner, dict) else {}
            message = str(error.get("message") or exc.message)
            return from_status(
                exc.status_code, scrub(message, secrets), provider=self.name,
                error_type=error.get("type"), retry_after=_retry_after(exc.response),
            )
        return from_transport(exc, provider=self.name, secrets=secrets)

    async def _open(self, params: dict[str, Any]) -> Any:
        return await self._client.messages.create(**params, stream=True)

    def _new_turn(self, params: dict[str, Any]) -> _Turn:
        return _Turn()

    def _stopped(self, turn: _Turn) -> bool:
        return bool(turn.stop_raw)

    def _on_item(self, turn: _Turn, item: Any) -> list[StreamEvent]:
        return self._on_event(turn, item)

    def _on_event(self, turn: _Turn, event: Any) -> list[StreamEvent]:
        kind = getattr(event, "type", "")
        out: list[StreamEvent] = []
        if kind == "message_start":
            _usage_from(getattr(event.message, "usage", None), turn.usage)
        elif kind == "content_block_start":
            if turn.pending is not None:  # the previous tool call is complete
                out.append(ToolCallComplete(turn.pending))
                turn.pending = None
            out.extend(self._start_block(turn, event.index, event.content_block))
        elif kind == "content_block_delta":
            out.extend(self._delta(turn, event.index, event.delta))
        elif kind == "content_block_stop":
            out.extend(self._stop_block(turn, event.index))
        elif kind == "message_delta":
            stop = getattr(event.delta, "stop_reason", None)
            if stop:
                turn.stop_raw = stop
            _usage_from(getattr(event, "usage", None), turn.usage)
        elif kind == "message_stop":
            turn.stopped = True
        return out

    def _start_block(self, turn: _Turn, index: int, block: Any) -> list[StreamEvent]:
        kind = getattr(block, "type", "")
        state = _Block(kind=kind)
        turn.blocks[index] = state
        if kind == "text" and getattr(block, "text", ""):
            state.text.append(block.text)
            turn.text.append(block.text)
            return [TextDelta(block.text)]
        if kind == "thinking":
            if getattr(block, "thinking", ""):
                state.text.append(block.thinking)
            state.signature = getattr(block, "signature", "") or ""
        elif kind == "redacted_thinking":
            state.data = getattr(block, "data", "") or ""
        elif kind == "tool_use":
            state.call_id, state.name = block.id, block.name
            state.initial_input = getattr(block, "input", None)
            turn.open_tool = True
        return []

    def _delta(self, turn: _Turn, index: int, delta: Any) -> list[StreamEvent]:
        state = turn.blocks.get(index)
        kind = getattr(delta, "type", "")
        if state is None:
            return []
        if kind == "text_delta":
            state.text.append(delta.text)
            turn.text.append(delta.text)
            return [TextDelta(delta.text)]
        if kind == "thinking_delta":
            state.text.append(delta.thinking)
            return [ThinkingDelta(delta.thinking)]
        if kind == "signature_delta":
            state.signature += delta.signature
        elif kind == "input_json_delta":
            state.json_parts.append(delta.partial_json)
        return []

    def _stop_block(self, turn: _Turn, index: int) -> list[StreamEvent]:
        state = turn.blocks.get(index)
        if state is None:
            return []
        if state.kind == "thinking":
            return [ThinkingComplete(ThinkingBlock(thinking="".join(state.text),
                                                   signature=state.signature))]
        if state.kind == "redacted_thinking":
            return [ThinkingComplete(ThinkingBlock(data=state.data))]
        if state.kind == "tool_use":
            raw = "".join(state.json_parts)
            if raw.strip():
                arguments = parse_arguments(raw)
            elif isinstance(state.initial_input, dict):
                arguments = state.initial_input
            else:
                arguments = {}
            turn.pending = ToolCall(id=state.call_id, name=state.name, arguments=arguments)
            turn.open_tool = False
        return []

    def _finish(self, turn: _Turn) -> list[StreamEvent]:
        if not turn.stopped and not turn.stop_raw:
            raise NetworkError("anthropic: the stream ended before message_stop",
                               provider=self.name)
        if turn.stop_raw in _TRUNCATING_STOPS and (turn.pending is not None or turn.open_tool):
            raise truncated_tool_call(self.name, self.options.max_tokens, "".join(turn.text))
        out: list[StreamEvent] = []
        if turn.pending is not None:
            out.append(ToolCallComplete(turn.pending))
            turn.pending = None
        out.append(UsageEvent(turn.usage))
        out.append(Stop(reason=turn.stop_raw or "end_turn", raw=turn.stop_raw))
        return out


def _retry_after(response: Any) -> float | None:
    try:
        value = response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None
