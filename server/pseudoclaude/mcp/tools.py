"""An MCP tool as the agent sees it: the same ``name``, ``description``, ``spec()``,
``read_only`` and ``approval_class`` a built-in tool of the registry has
(:class:`pseudoclaude.agent.tools.base.Tool`), and :meth:`McpTool.call` to run it.

``name`` is the model's name (:mod:`pseudoclaude.mcp.naming`); ``server`` and ``tool`` are the
real ones. The input schema is the server's ``inputSchema``, passed through, made an object
schema when it is not one (:func:`object_schema`). ``read_only`` is always false and
``approval_class`` is ``runCommand``: a server's ``readOnlyHint`` is only a hint from code we
do not control (kept in :attr:`McpTool.read_only_hint` for display).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pseudoclaude.llm.provider import ToolSpec
from pseudoclaude.mcp.results import McpCallResult

Caller = Callable[[str, str, Any], Awaitable[McpCallResult]]
"""``(server, tool, arguments) -> result``: how a tool reaches its manager."""


def object_schema(schema: Any) -> dict[str, object]:
    """``schema`` when it is a JSON Schema object (``type: object``, or no ``type``: then it
    is added); else ``{"type": "object", "properties": {}}``."""
    if isinstance(schema, dict) and schema.get("type", "object") == "object":
        out: dict[str, object] = dict(schema)
        out["type"] = "object"
        if not isinstance(out.get("properties"), dict):
            out["properties"] = {}
        return out
    return {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class McpTool:
    """One tool of one MCP server, offered to the model (see the module docstring)."""

    name: str
    """The model's name: ``mcp__<server>__<tool>``, valid for every provider."""
    server: str
    tool: str
    """The tool's own name on its server."""
    description: str
    input_schema: dict[str, object]
    title: str | None = None
    read_only_hint: bool = False
    _caller: Caller | None = field(default=None, repr=False, compare=False)

    read_only: ClassVar[bool] = False
    approval_class: ClassVar[str] = "runCommand"

    def spec(self) -> ToolSpec:
        """The tool as the model sees it."""
        return ToolSpec(name=self.name, description=self.description,
                        input_schema=self.input_schema)

    async def call(self, arguments: Any) -> McpCallResult:
        """Run the tool with the model's ``arguments``; always a result (cancelling the
        caller cancels the call)."""
        if self._caller is None:
            return McpCallResult.error("unavailable", f"the MCP tool `{self.tool}` has no "
                                       "server")
        return await self._caller(self.server, self.tool, arguments)


def make_tool(name: str, server: str, tool: Any, caller: Caller | None) -> McpTool:
    """An :class:`McpTool` from an SDK ``Tool`` (read by its attributes)."""
    bare = str(tool.name)
    annotations = getattr(tool, "annotations", None)
    title = getattr(tool, "title", None) or getattr(annotations, "title", None)
    description = getattr(tool, "description", None) or title or \
        f"The tool `{bare}` of the MCP server `{server}`."
    return McpTool(name=name, server=server, tool=bare, description=str(description),
                   input_schema=object_schema(getattr(tool, "input_schema", None)),
                   title=title if isinstance(title, str) else None,
                   read_only_hint=bool(getattr(annotations, "read_only_hint", False)),
                   _caller=caller)
