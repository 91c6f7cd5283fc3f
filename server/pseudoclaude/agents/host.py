"""What a session gives its sub-agents (:class:`AgentHost`): the core never imports the
workspace."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pseudoclaude.agent.approvals import Gate
    from pseudoclaude.agent.prompt import SystemPrompt
    from pseudoclaude.agent.tools import ToolRegistry
    from pseudoclaude.compact.types import CompactConfig
    from pseudoclaude.config import Settings
    from pseudoclaude.events import Event
    from pseudoclaude.hooks import SessionHooks
    from pseudoclaude.llm.provider import Provider
    from pseudoclaude.llm.types import ToolCall
    from pseudoclaude.session import SessionStore

ChangeHook = Callable[["ToolCall"], Awaitable[None]]


class AgentHost(Protocol):
    """The session a sub-agent belongs to."""

    @property
    def id(self) -> str: ...

    @property
    def root(self) -> Path: ...

    @property
    def gate(self) -> Gate: ...

    @property
    def tools(self) -> ToolRegistry: ...

    @property
    def mode(self) -> str: ...

    @property
    def hooks(self) -> SessionHooks:
        """Its hooks (``SubagentStop`` fires when a sub-agent ends)."""
        ...

    @property
    def store(self) -> SessionStore: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def session_model(self) -> str:
        """The model the session's own requests use (``""``: the ``model`` setting)."""
        ...

    def emit(self, event: Event) -> None: ...

    def build_prompt(self, agents: bool = True) -> SystemPrompt: ...

    async def provider_for(self, model: str) -> Provider: ...

    def compact_config(self) -> CompactConfig: ...

    def spill_dir(self) -> Path: ...

    def secrets(self) -> list[str]: ...
