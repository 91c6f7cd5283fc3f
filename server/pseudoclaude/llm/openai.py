"""OpenAI Chat Completions adapter on the official SDK (``AsyncOpenAI``), streaming.

Imported lazily by :func:`pseudoclaude.llm.provider.create_provider` (it imports the SDK).
Works with any OpenAI-compatible ``base_url`` (Ollama, vLLM, llama.cpp server, ...).

Request shape: the system prompt as a ``system`` message; tool results as ``tool`` messages;
assistant tool calls with their arguments serialised to JSON (raw-string arguments that are not
a JSON object are sent as ``{}``: compatible servers parse them); consecutive user texts, and
consecutive assistant messages, merged (some chat templates need alternation); thinking blocks
are Anthropic-only and not sent. ``max_tokens`` goes out as ``max_completion_tokens`` to
api.openai.com and as ``max_tokens`` elsewhere (what compatible servers understand).
``stream_options.include_usage`` is always requested.

Stream reassembly: tool calls are put together from their fragments by ``index`` and
announced when the turn ends. ``reasoning_content``/``reasoning`` deltas (DeepSeek, vLLM,
Ollama) become :class:`ThinkingDelta` events only.

Tolerance rule for compatible servers: a stream that ends cleanly without ``[DONE]``, without a
``finish_reason`` or without usage is accepted (the stop reason is then inferred; no
:class:`UsageEvent`); a connection lost *after* the ``finish_reason`` loses nothing and is
accepted too. A connection lost before it raises :class:`NetworkError`, and a stream that
ended without any output at all raises :class:`NetworkError`.

Local servers (SPEC §13 "Local models"): with ``finish_reason == "length"`` the turn's last
tool call was cut off: it is announced with an ``error`` (the runner answers it with a failed
result, so the run goes on) instead of failing the turn. A turn without calls whose whole text
is calls (:mod:`.text_calls`) announces those calls. A server that refuses tools (Ollama's
"does not support tools", llama.cpp's "tools param requires --jinja flag", vLLM's auto tool
choice) is :class:`~pseudoclaude.llm.errors.ToolsUnsupported`, never retried; a llama.cpp
server whose ``/props`` says its template has no tools gets it before the first request
(:mod:`.window`, asked once per process).

Usage: ``input_tokens`` is ``prompt_tokens`` minus the cached part, which is reported as
``cache_read`` (``prompt_tokens_details.cached_tokens``), so that the four counts add up to the
request's size as they do for Anthropic. ``cache_write`` is always 0.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

import openai

from pseudoclaude.llm.errors import (
    NetworkError,
    ProviderError,
    ProviderTimeout,
    connection_failed,
    from_status,
    from_transport,
    refuses_tools,
    scrub,
    tools_unsupported,
)
from pseudoclaude.llm.provider import (
    ProviderOptions,
    SdkProvider,
    Stop,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallComplete,
    ToolSpec,
    UsageEvent,
    cut_off_call,
)
from pseudoclaude.llm.text_calls import calls_in_text
from pseudoclaude.llm.types import Message, ToolCall, Usage, parse_arguments, prompt_texts
from pseudoclaude.llm.window import server_facts

log = logging.getLogger("pseudoclaude.llm")

FINISH_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def _arguments_text(arguments: Any) -> str:
    """A call's arguments as sent back: JSON text of an object. Arguments the model got wrong
    (kept as their raw text, answered by a failed result) go as ``{}``: compatible servers
    parse them (llama.cpp answers 500, Ollama 400 to invalid JSON)."""
    if isinstance(arguments, str):
        return arguments if isinstance(parse_arguments(arguments), dict) and (
            arguments.strip()) else "{}"
    return json.dumps(arguments, ensure_ascii=False)


def to_openai_messages(system: str, messages: list[Message], environment: str = ""
                       ) -> list[dict[str, Any]]:
    """Our history as Chat Completions messages (the system prompt first, then the
    environment block as a second system message: the prefix servers cache stays the same)."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    if environment:
        out.append({"role": "system", "content": environment})

    def add_text(role: str, text: str) -> None:
        prev = out[-1] if out else None
        if prev is not None and prev["role"] == role and not prev.get("tool_calls") and (
                isinstance(prev.get("content"), str)):
            prev["content"] = f"{prev['content']}\n\n{text}" if prev["content"] else text
        else:
            out.append({"role": role, "content": text})

    for message in messages:
        if message.tool_result is not None:
            r = message.tool_result
            out.append({"role": "tool", "tool_call_id": r.call_id, "content": r.content})
            if message.content.strip():
                add_text("user", message.content)
        elif message.role == "user":
            for text in prompt_texts(message):
                add_text("user", text)
        elif message.tool_calls:
            calls = [{"id": c.id, "type": "function",
                      "function": {"name": c.name, "arguments": _arguments_text(c.arguments)}}
                     for c in message.tool_calls]
            prev = out[-1] if out else None
            if prev is not None and prev["role"] == "assistant":
                prev.setdefault("tool_calls", []).extend(calls)
                if message.content:
                    prev["content"] = "\n\n".join(
                        t for t in (prev.get("content") or "", message.content) if t)
            else:
                out.append({"role": "assistant", "content": message.content or None,
                            "tool_calls": calls})
        elif message.content:
            prev = out[-1] if out else None
            if prev is not None and prev["role"] == "assistant":
                prev["content"] = "\n\n".join(
                    t for t in (prev.get("content") or "", message.content) if t)
            else:
                out.append({"role": "assistant", "content": message.content})
    return out


def to_openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.input_schema}} for t in tools]


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)


@dataclass
class _Turn:
    tools: frozenset[str] = frozenset()
    """The names of the tools the request offered."""
    calls: dict[int, _Call] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    finish_raw: str = ""
    usage: Usage | None = None
    chunks: int = 0


def _usage(raw: Any) -> Usage:
    prompt = getattr(raw, "prompt_tokens", 0) or 0
    details = getattr(raw, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return Usage(input_tokens=max(prompt - cached, 0),
                 output_tokens=getattr(raw, "completion_tokens", 0) or 0, cache_read=cached)


class OpenAIProvider(SdkProvider[_Turn]):
    """:class:`~pseudoclaude.llm.provider.Provider` on ``openai.AsyncOpenAI``."""

    name = "openai"

    def __init__(self, options: ProviderOptions) -> None:
        super().__init__(options)
        key = options.key() or "no-key"  # local servers (Ollama, vLLM) take any key
        self._client = openai.AsyncOpenAI(
            api_key=key,
            base_url=options.base_url,
            max_retries=0,
            timeout=openai.Timeout(options.read_timeout, connect=options.connect_timeout),
            default_headers=options.extra_headers or None,
        )
        base = options.base_url or ""
        self._official = not base or "api.openai.com" in base

    async def aclose(self) -> None:
        await self._client.close()

    def request(self, system: str, messages: list[Message], tools: list[ToolSpec],
                cache: bool = True, environment: str = "") -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` (without ``stream``); OpenAI
        caches prefixes by itself, so ``cache`` changes nothing."""
        params: dict[str, Any] = {
            "model": self.options.model,
            "messages": to_openai_messages(system, messages, environment),
            "stream_options": {"include_usage": True},
        }
        params["max_completion_tokens" if self._official else "max_tokens"] = (
            self.options.max_tokens)
        if tools:
            params["tools"] = to_openai_tools(tools)
        return params

    def map_error(self, exc: BaseException) -> ProviderError | None:
        """A typed error for an SDK or transport exception (``None``: not ours to map)."""
        secrets = [self.options.key()]
        if isinstance(exc, openai.APITimeoutError):
            return ProviderTimeout(f"openai: request timed out after "
                                   f"{self.options.read_timeout:g}s", provider=self.name)
        if isinstance(exc, openai.APIConnectionError):
            return connection_failed(exc, provider=self.name, secrets=secrets)
        if isinstance(exc, openai.APIError):
            body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
            inner = body.get("error")
            error: dict[str, Any] = inner if isinstance(inner, dict) else body
            message = str(error.get("message") or exc.message)
            status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
            response = exc.response if isinstance(exc, openai.APIStatusError) else None
            if refuses_tools(message):  # not retried: the model or its template lacks tools
                return tools_unsupported(self.options.model, provider=self.name,
                                         detail=scrub(message, secrets), status=status)
            return from_status(
                status, scrub(message, secrets), provider=self.name,
                error_type=_str(error.get("type")), error_code=_str(error.get("code")),
                retry_after=_retry_after(response),
            )
        return from_transport(exc, provider=self.name, secrets=secrets)

    async def _open(self, params: dict[str, Any]) -> Any:
        if params.get("tools") and not self._official:
            await self._check_tools()
        return await self._client.chat.completions.create(**params, stream=True)

    async def _check_tools(self) -> None:
        """Before the first request with tools to a local server: a llama.cpp server whose
        chat template takes no tools says so in ``/props`` (asked once per process)."""
        facts = await server_facts(self.options.base_url or "", self.options.model,
                                   self.options.key())
        if facts.supports_tools is False:
            raise tools_unsupported(
                self.options.model, provider=self.name,
                detail="its chat template has no tools (/props chat_template_caps."
                       "supports_tools: false)")

    def _new_turn(self, params: dict[str, Any]) -> _Turn:
        return _Turn(tools=frozenset(
            str(t.get("function", {}).get("name", "")) for t in params.get("tools") or []))

    def _stopped(self, turn: _Turn) -> bool:
        return bool(turn.finish_raw)

    def _on_item(self, turn: _Turn, item: Any) -> list[StreamEvent]:
        return self._on_chunk(turn, item)

    def _on_chunk(self, turn: _Turn, chunk: Any) -> list[StreamEvent]:
        turn.chunks += 1
        out: list[StreamEvent] = []
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            turn.usage = _usage(usage)
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) not in (0, None):
                continue
            delta = getattr(choice, "delta", None)
            if delta is not None:
                out.extend(self._delta(turn, delta))
            if getattr(choice, "finish_reason", None):
                turn.finish_raw = choice.finish_reason
        return out

    def _delta(self, turn: _Turn, delta: Any) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        if isinstance(reasoning, str) and reasoning:
            out.append(ThinkingDelta(reasoning))
        content = getattr(delta, "content", None)
        if isinstance(content, str) and content:
            turn.text.append(content)
            out.append(TextDelta(content))
        for fragment in getattr(delta, "tool_calls", None) or []:
            index = getattr(fragment, "index", None)
            frag_id = getattr(fragment, "id", None) or ""
            if not isinstance(index, int):  # servers that omit the index: match by id
                index = next((i for i, c in turn.calls.items() if frag_id and c.id == frag_id),
                             len(turn.calls))
            call = turn.calls.setdefault(index, _Call())
            if frag_id and not call.id:
                call.id = frag_id
            function = getattr(fragment, "function", None)
            if function is not None:
                if getattr(function, "name", None) and not call.name:
                    call.name = function.name
                if getattr(function, "arguments", None):
                    call.parts.append(function.arguments)
        return out

    def _finish(self, turn: _Turn) -> list[StreamEvent]:
        if not turn.finish_raw and not turn.text and not turn.calls:
            raise NetworkError("openai: the stream ended without any output", provider=self.name)
        calls = self._calls(turn)
        out: list[StreamEvent] = [*calls]
        if turn.usage is not None:
            out.append(UsageEvent(turn.usage))
        if calls and turn.finish_raw in ("", "stop"):
            reason = "tool_use"  # compatible servers often say "stop" after tool calls
        elif turn.finish_raw:
            reason = FINISH_REASONS.get(turn.finish_raw, turn.finish_raw)
        else:
            reason = "end_turn"
        out.append(Stop(reason=reason, raw=turn.finish_raw))
        return out


    def _calls(self, turn: _Turn) -> list[ToolCallComplete]:
        """The turn's calls. The last one of a turn cut by the output limit never runs (the
        runner answers it with a failed result the model reads); those before it are whole.
        A turn without calls whose whole text is calls (:mod:`.text_calls`) is those calls."""
        out: list[ToolCallComplete] = []
        cut = max(turn.calls) if turn.calls and turn.finish_raw == "length" else None
        for index in sorted(turn.calls):
            call = turn.calls[index]
            error = cut_off_call(call.name, self.options.max_tokens) if index == cut else ""
            out.append(ToolCallComplete(ToolCall(
                id=call.id or _call_id(index), name=call.name,
                arguments=parse_arguments("".join(call.parts))), error))
        if out or turn.finish_raw == "length":
            return out
        found = calls_in_text("".join(turn.text), turn.tools)
        if found:
            log.info("openai: %s printed %d tool call(s) as text; taken as calls",
                     self.options.model, len(found))
        return [ToolCallComplete(ToolCall(_call_id(i), c.name, c.arguments), from_text=True)
                for i, c in enumerate(found)]


def _call_id(index: int) -> str:
    return f"call_{index}_{uuid.uuid4().hex[:12]}"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _retry_after(response: Any) -> float | None:
    try:
        value = response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None
