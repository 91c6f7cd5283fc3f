"""The provider adapters' shared harness: one adapter's streamed turns against the fake model.

A test module names its adapter once::

    @pytest.fixture
    def turns(provider_turns: Any) -> Any:
        return provider_turns("anthropic", "claude-test", KEY, TOOLS)

and then calls ``turns.run_turn(fake)``, ``turns.turn_error(fake)``,
``await turns.provider_for(fake)`` or ``turns.cancel_mid_stream(fake)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from pseudoclaude.config import Secret
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.errors import ProviderError
from pseudoclaude.llm.provider import (
    Completion,
    Provider,
    ProviderOptions,
    StreamEvent,
    TextDelta,
    ToolSpec,
    complete,
    create_provider,
)
from pseudoclaude.llm.types import Message

HELLO = [Message(role="user", content="hello")]
FAST = {"retry_base_delay": 0.01, "max_retries": 0, "read_timeout": 5.0,
        "connect_timeout": 2.0}


@dataclass(frozen=True)
class ProviderTurns:
    provider: str
    model: str
    key: str
    tools: list[ToolSpec]
    path: str = ""
    """Appended to the fake model's address for the default base URL (``/v1`` for OpenAI)."""

    async def provider_for(self, fake: FakeModelServer, base_url: str | None = None,
                           **options: Any) -> Provider:
        """A provider on the fake model: fast retries, no retry unless asked, short timeouts."""
        settings: dict[str, Any] = {**FAST, **options}
        return await create_provider(ProviderOptions(
            provider=self.provider, model=self.model, api_key=Secret(self.key),
            base_url=base_url or fake.base_url + self.path, **settings))

    def run_turn(self, fake: FakeModelServer, messages: list[Message] = HELLO,
                 tools: list[ToolSpec] | None = None, system: str = "SYSTEM PROMPT",
                 cache: bool = True, environment: str = "", **options: Any
                 ) -> tuple[list[StreamEvent], Completion]:
        """One streamed turn; returns every event and the folded completion."""
        async def go() -> tuple[list[StreamEvent], Completion]:
            provider = await self.provider_for(fake, **options)
            events: list[StreamEvent] = []
            try:
                return events, await complete(provider, system, messages,
                                              self.tools if tools is None else tools,
                                              events.append, cache=cache,
                                              environment=environment)
            finally:
                await provider.aclose()
        return asyncio.run(go())

    def turn_error(self, fake: FakeModelServer, **options: Any) -> ProviderError:
        """The error a turn raises (it must raise one)."""
        with pytest.raises(ProviderError) as info:
            self.run_turn(fake, **options)
        return info.value

    def cancel_mid_stream(self, fake: FakeModelServer) -> None:
        """Stream a turn, cancel the consuming task at the first text delta (the cancellation
        must reach it), then close the provider."""
        async def go() -> None:
            provider = await self.provider_for(fake)
            first = asyncio.Event()

            async def consume() -> None:
                async for event in provider.stream("s", HELLO, self.tools):
                    if isinstance(event, TextDelta):
                        first.set()

            task = asyncio.create_task(consume())
            await first.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await provider.aclose()
        asyncio.run(go())


@pytest.fixture
def provider_turns() -> Callable[..., ProviderTurns]:
    """``provider_turns(provider, model, key, tools, path="")``: the harness of one adapter."""
    return ProviderTurns
