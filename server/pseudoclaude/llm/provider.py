"""The provider protocol: stream one model turn as typed events (SPEC §7).

A provider turns ``(system prompt, messages, tool specs)`` into an async stream of events:

- :class:`TextDelta` — a piece of the answer's text, as it arrives;
- :class:`ThinkingDelta` — a piece of (Anthropic extended, or a compatible server's reasoning)
  thinking, for display only;
- :class:`ThinkingComplete` — a whole Anthropic thinking block with its signature (or a
  redacted block): keep it on the assistant message, it must be sent back in tool loops;
- :class:`ToolCallComplete` — a whole tool call, never a partial one;
- :class:`Retrying` — a retryable failure happened before any output; the provider waits
  ``delay`` seconds and tries again (for a warning event; not model output);
- :class:`UsageEvent` — the turn's token usage; absent when the server reported none (some
  OpenAI-compatible servers);
- :class:`Stop` — the last event: the normalised stop reason.

Errors are **raised** as :mod:`pseudoclaude.llm.errors` exceptions from the iterator (there
is no error event): ``async for`` ends with the exception, so no caller can miss one. A
``max_tokens`` stop in the middle of a tool call raises :class:`MaxTokensTruncated` (Anthropic);
the OpenAI adapter announces the cut call with :attr:`ToolCallComplete.error` instead.

Retries: the SDKs' own retries are disabled (``max_retries=0``) and :class:`BaseProvider`
retries a retryable error itself, with exponential backoff (honouring ``Retry-After``), at most
``max_retries`` times, and only while nothing has been yielded yet — a turn that already
streamed text is never silently restarted.

Stop reasons are normalised to Anthropic's vocabulary: ``end_turn``, ``tool_use``,
``max_tokens``, ``stop_sequence``, ``refusal`` (OpenAI ``content_filter``), ``pause_turn``,
``model_context_window_exceeded``; anything else is passed through.

SDKs are imported lazily and off the event loop by :func:`create_provider`; importing this
module (or :mod:`pseudoclaude.llm`) imports neither ``anthropic`` nor ``openai``.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import random
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar, runtime_checkable

from pseudoclaude import config
from pseudoclaude.llm.errors import (
    MaxTokensTruncated,
    NetworkError,
    NoProviderConfigured,
    ProviderError,
    ProviderTimeout,
)
from pseudoclaude.llm.types import Message, ThinkingBlock, ToolCall, Usage

if TYPE_CHECKING:
    from pseudoclaude.config import ProviderName, Secret, Settings

log = logging.getLogger("pseudoclaude.llm")
TurnT = TypeVar("TurnT")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call: ``input_schema`` is a JSON Schema object."""

    name: str
    description: str
    input_schema: dict[str, object]


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingComplete:
    block: ThinkingBlock


@dataclass(frozen=True, slots=True)
class ToolCallComplete:
    call: ToolCall
    error: str = ""
    """Why the call cannot run, when it cannot (it was cut off by the output limit): the
    runner answers it with a failed result carrying this text instead of running it."""
    from_text: bool = False
    """The model printed the call as text (:mod:`pseudoclaude.llm.text_calls`): the turn's
    text was this call, and is not kept as text."""


@dataclass(frozen=True, slots=True)
class UsageEvent:
    usage: Usage


@dataclass(frozen=True, slots=True)
class Retrying:
    attempt: int
    delay: float
    error: ProviderError


@dataclass(frozen=True, slots=True)
class Stop:
    reason: str
    """Normalised stop reason (see the module docstring)."""
    raw: str = ""
    """The provider's own value (``stop``, ``length``, ``end_turn``, ...), "" when none came."""


StreamEvent = (
    TextDelta | ThinkingDelta | ThinkingComplete | ToolCallComplete | UsageEvent | Retrying | Stop
)


@dataclass(frozen=True)
class ProviderOptions:
    """What a provider needs; build it from :class:`~pseudoclaude.config.Settings` with
    :meth:`from_settings`. Timeouts are in seconds: ``read_timeout`` is the longest silence
    accepted from the server (between two stream chunks, or before the first). The defaults
    are the settings' (:data:`pseudoclaude.config.KEYS`)."""

    provider: str
    model: str
    api_key: Secret | None = None
    base_url: str | None = None
    max_tokens: int = config.MAX_TOKENS.default
    thinking: bool = config.THINKING.default
    thinking_mode: str = "enabled"
    thinking_budget: int = config.THINKING_BUDGET.default
    max_retries: int = config.MAX_RETRIES.default
    retry_base_delay: float = 1.0
    retry_max_delay: float = 30.0
    read_timeout: float = config.REQUEST_TIMEOUT.default
    connect_timeout: float = config.CONNECT_TIMEOUT.default
    extra_headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: Settings) -> ProviderOptions:
        provider = require_provider(settings)
        return cls(
            provider=provider, model=settings.model, api_key=settings.api_key,
            base_url=settings.base_url, max_tokens=settings.max_tokens,
            thinking=settings.thinking, thinking_mode=settings.thinking_mode,
            thinking_budget=settings.thinking_budget, max_retries=settings.max_retries,
            read_timeout=settings.request_timeout, connect_timeout=settings.connect_timeout,
        )

    def key(self) -> str | None:
        return self.api_key.reveal() if self.api_key else None


def require_provider(settings: Settings) -> ProviderName:
    """The settings' provider, or :class:`NoProviderConfigured` with one line naming what to
    set (:meth:`~pseudoclaude.config.Settings.missing_provider`)."""
    missing = settings.missing_provider()
    if missing is not None or settings.provider is None:
        raise NoProviderConfigured(missing or "no model provider configured")
    return settings.provider


@runtime_checkable
class Provider(Protocol):
    """What the runner and the compaction layer use."""

    name: str
    model: str

    def stream(
        self, system: str, messages: list[Message], tools: list[ToolSpec], *, cache: bool = True,
        environment: str = "",
    ) -> AsyncGenerator[StreamEvent, None]:
        """Stream one model turn. Raises a ``ProviderError`` subclass on failure. ``cache``:
        mark the prompt for the provider's prompt cache (Anthropic's breakpoints; off for a
        request no later one repeats, since a cache write costs more than plain input).
        ``environment``: the environment block, sent after the cached system prompt (a second
        system block or message) so that a change in it leaves the system prompt's cache whole.

        A consumer that may stop early should close the generator
        (``async with contextlib.aclosing(provider.stream(...))``) so the HTTP response is
        closed at once; cancelling the consuming task closes it too."""
        ...

    async def aclose(self) -> None:
        """Release the HTTP connection pool."""
        ...


class BaseProvider:
    """Retry logic shared by the SDK adapters, which implement :meth:`_stream_once`."""

    name = "base"

    def __init__(self, options: ProviderOptions) -> None:
        self.options = options
        self.model = options.model

    def _stream_once(
        self, system: str, messages: list[Message], tools: list[ToolSpec], cache: bool,
        environment: str = "",
    ) -> AsyncGenerator[StreamEvent, None]:
        """One attempt: an async generator of events raising ``ProviderError`` on failure."""
        raise NotImplementedError

    async def aclose(self) -> None:
        return None

    def retry_delay(self, attempt: int, error: ProviderError) -> float:
        """Backoff before retry number ``attempt`` (1-based): exponential with ±20 % jitter,
        or the server's ``Retry-After``; never more than ``retry_max_delay``."""
        opts = self.options
        if error.retry_after is not None and error.retry_after >= 0:
            return float(min(error.retry_after, opts.retry_max_delay))
        delay = opts.retry_base_delay * 2.0 ** (attempt - 1)
        return min(delay * random.uniform(0.8, 1.2), opts.retry_max_delay)

    async def stream(
        self, system: str, messages: list[Message], tools: list[ToolSpec], *, cache: bool = True,
        environment: str = "",
    ) -> AsyncGenerator[StreamEvent, None]:
        attempt = 0
        while True:
            produced = False
            events = self._stream_once(system, messages, tools, cache, environment)
            try:
                async for event in events:
                    produced = True
                    yield event
                return
            except ProviderError as error:
                if produced or not error.retryable or attempt >= self.options.max_retries:
                    raise
                attempt += 1
                delay = self.retry_delay(attempt, error)
                log.info("%s: %s; retry %d of %d in %.1fs", self.name, error, attempt,
                         self.options.max_retries, delay)
                yield Retrying(attempt, delay, error)
                await asyncio.sleep(delay)
            finally:
                await events.aclose()


class SdkProvider(BaseProvider, Generic[TurnT]):
    """One attempt of a streamed turn on an SDK, shared by the adapters.

    An adapter supplies the request (:meth:`request`), the stream (:meth:`_open`), a fresh
    per-turn accumulator (:meth:`_new_turn`), the events of one stream item (:meth:`_on_item`),
    whether the stop reason already arrived (:meth:`_stopped`), the closing events
    (:meth:`_finish`) and the error mapping (:meth:`map_error`). A connection lost after the
    stop reason arrived lost nothing (at most the usage) and is not an error.
    """

    def request(self, system: str, messages: list[Message], tools: list[ToolSpec],
                cache: bool = True, environment: str = "") -> dict[str, Any]:
        raise NotImplementedError

    def map_error(self, exc: BaseException) -> ProviderError | None:
        """A typed error for an SDK or transport exception (``None``: not ours to map)."""
        raise NotImplementedError

    async def _open(self, params: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _new_turn(self, params: dict[str, Any]) -> TurnT:
        raise NotImplementedError

    def _on_item(self, turn: TurnT, item: Any) -> list[StreamEvent]:
        raise NotImplementedError

    def _stopped(self, turn: TurnT) -> bool:
        raise NotImplementedError

    def _finish(self, turn: TurnT) -> list[StreamEvent]:
        raise NotImplementedError

    async def _stream_once(
        self, system: str, messages: list[Message], tools: list[ToolSpec], cache: bool,
        environment: str = "",
    ) -> AsyncGenerator[StreamEvent, None]:
        params = self.request(system, messages, tools, cache, environment)
        try:
            stream = await self._open(params)
        except Exception as exc:
            mapped = self.map_error(exc)
            if mapped is None:
                raise
            raise mapped from None
        turn = self._new_turn(params)
        try:
            try:
                async for item in stream:
                    for out in self._on_item(turn, item):
                        yield out
            except ProviderError:
                raise
            except Exception as exc:
                mapped = self.map_error(exc)
                if mapped is None:
                    raise
                if not (isinstance(mapped, NetworkError | ProviderTimeout)
                        and self._stopped(turn)):
                    raise mapped from None
            for out in self._finish(turn):
                yield out
        finally:
            await stream.close()


class Completion(NamedTuple):
    """A whole model turn. ``usage`` is ``None`` when the server reported none."""

    message: Message
    usage: Usage | None
    stop_reason: str


class TurnBuilder:
    """Folds stream events into the assistant :class:`Message` of the turn (what
    :func:`complete` does; a runner that streams can feed it the same events)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.tool_calls: list[ToolCall] = []
        self.unrunnable: dict[str, str] = {}
        """Calls that cannot run, by id: why (:attr:`ToolCallComplete.error`)."""
        self.thinking: list[ThinkingBlock] = []
        self.usage: Usage | None = None
        self.stop_reason = ""

    def add(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self.text.append(event.text)
        elif isinstance(event, ThinkingComplete):
            self.thinking.append(event.block)
        elif isinstance(event, ToolCallComplete):
            if event.from_text:
                self.text.clear()
            self.tool_calls.append(event.call)
            if event.error:
                self.unrunnable[event.call.id] = event.error
        elif isinstance(event, UsageEvent):
            self.usage = event.usage
        elif isinstance(event, Stop):
            self.stop_reason = event.reason

    def message(self) -> Message:
        return Message(
            role="assistant", content="".join(self.text), tool_calls=list(self.tool_calls),
            thinking=list(self.thinking),
        )

    def completion(self) -> Completion:
        return Completion(self.message(), self.usage, self.stop_reason)


async def complete(
    provider: Provider, system: str, messages: list[Message], tools: list[ToolSpec] | None = None,
    on_event: Callable[[StreamEvent], None] | None = None, *, cache: bool = True,
    environment: str = "",
) -> Completion:
    """Run one turn to the end and return ``(assistant message, usage, stop reason)``;
    ``on_event`` sees every event as it arrives; ``cache`` and ``environment`` as for
    :meth:`Provider.stream`."""
    builder = TurnBuilder()
    async for event in provider.stream(system, messages, list(tools or []), cache=cache,
                                       environment=environment):
        if on_event is not None:
            on_event(event)
        builder.add(event)
    return builder.completion()


_ADAPTERS = {
    "anthropic": ("pseudoclaude.llm.anthropic", "AnthropicProvider"),
    "openai": ("pseudoclaude.llm.openai", "OpenAIProvider"),
}


async def preload(provider: str | None) -> None:
    """Import a provider's adapter (and its SDK) ahead of the first run, in a worker thread.

    The import takes up to ~1.5 s of CPU; done at start-up it does not slow the first run."""
    if provider in _ADAPTERS:
        await asyncio.to_thread(importlib.import_module, _ADAPTERS[provider][0])


async def create_provider(settings: Settings | ProviderOptions) -> Provider:
    """The provider for these settings. The adapter module (and its SDK, ~0.4-1.7 s to import)
    is imported, and the adapter with its SDK client built, in a worker thread so the event
    loop never blocks on it. Raises
    :class:`~pseudoclaude.llm.errors.NoProviderConfigured` when no provider is configured."""
    options = settings if isinstance(settings, ProviderOptions) else (
        ProviderOptions.from_settings(settings))
    try:
        module_name, class_name = _ADAPTERS[options.provider]
    except KeyError:
        raise ProviderError(f"unknown provider {options.provider!r}") from None

    def build() -> Provider:  # the SDK client too: an SSL context and lazy imports, 40-90 ms
        provider: Provider = getattr(importlib.import_module(module_name), class_name)(options)
        return provider

    return await asyncio.to_thread(build)


def cut_off_call(name: str, max_tokens: int) -> str:
    """The failed result of a call the output limit cut before its arguments were whole."""
    return (f"{name or 'the tool call'}: the call was cut off by the output limit (maxTokens "
            f"{max_tokens}) before its arguments were complete, so it did not run; make it "
            "again with shorter arguments (write a large file in several steps)")


def truncated_tool_call(provider: str, max_tokens: int, text: str) -> MaxTokensTruncated:
    """The error for a turn cut by ``max_tokens`` inside a tool call."""
    return MaxTokensTruncated(
        f"{provider}: the model reached max_tokens ({max_tokens}) in the middle of a tool "
        "call; the incomplete call was dropped (raise the maxTokens setting)",
        provider=provider, partial_text=text,
    )
