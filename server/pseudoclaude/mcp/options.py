"""The MCP settings that are not servers: ``mcp.startTimeout`` (seconds for a server to start
and list its tools, default 10) and ``mcp.toolTimeout`` (seconds for one call, default 60), read
from a settings object (nested ``{mcp: {startTimeout}}``, dotted ``mcp.startTimeout`` or
``snake_case``). A value that is not a positive number is ignored (logged) and the default used.
Pure."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("pseudoclaude.mcp")

DEFAULT_START_TIMEOUT = 10.0
DEFAULT_TOOL_TIMEOUT = 60.0
DEFAULT_CLOSE_TIMEOUT = 5.0


@dataclass(frozen=True, slots=True)
class McpOptions:
    """How long things may take, and the restart policy."""

    start_timeout: float = DEFAULT_START_TIMEOUT
    """Seconds for a server to start: spawn or connect, handshake, list its tools."""
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    """Seconds for one tool call to answer."""
    close_timeout: float = DEFAULT_CLOSE_TIMEOUT
    """Seconds :meth:`~pseudoclaude.mcp.manager.McpManager.close` waits for the sessions."""
    max_restarts: int = 3
    """A server that stopped this many times within :attr:`restart_window` is not restarted
    by itself any more (it stays ``failed`` until restarted by hand or reconfigured)."""
    restart_window: float = 60.0


def _seconds(settings: Mapping[str, Any], *names: str) -> float | None:
    mcp = settings.get("mcp")
    for name in names:
        value = settings.get(f"mcp.{name}")
        if value is None and isinstance(mcp, Mapping):
            value = mcp.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(value) or value <= 0:
            log.warning("the setting mcp.%s must be a positive number of seconds; using the "
                        "default", names[0])
            return None
        return float(value)
    return None


def options_from_settings(settings: Mapping[str, Any] | None) -> McpOptions:
    """The options of a settings object (see the module docstring)."""
    if not settings:
        return McpOptions()
    wrapped = settings.get("pseudoclaude")
    if isinstance(wrapped, Mapping):
        settings = {**settings, **wrapped}
    start = _seconds(settings, "startTimeout", "start_timeout")
    tool = _seconds(settings, "toolTimeout", "tool_timeout")
    return McpOptions(start_timeout=start or DEFAULT_START_TIMEOUT,
                      tool_timeout=tool or DEFAULT_TOOL_TIMEOUT)
