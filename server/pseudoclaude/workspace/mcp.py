"""A workspace's MCP servers: configured from every source, project servers approved before
they start, their tools offered to each run (SPEC §12 "MCP servers").

:class:`WorkspaceMcp` wires :class:`pseudoclaude.mcp.McpManager` into a workspace. Configuring
reads two small files and starts nothing (a one-shot command's servers start when a run first
needs their tools); an open folder (:meth:`WorkspaceMcp.start`) also starts its servers in the
background, so their listing settles to ``ready`` or ``failed`` within ``mcp.startTimeout``
without a run. The approvals of project servers (``.mcp.json``, the workspace's
``config.yaml``) are asked in the background, never in a run's way: a server waiting for one
is ``needsApproval``, does not start, and its tools are not offered. The approvals are kept
outside the workspace (the user's data folder), so a repository cannot ship its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pseudoclaude.agent.approvals import (
    ApprovalRequest,
    ApprovalUnavailable,
    Approver,
    simple_decision,
)
from pseudoclaude.config import Settings
from pseudoclaude.mcp import (
    REPOSITORY_SOURCES,
    McpManager,
    McpOptions,
    McpTool,
    ServerConfig,
    ServerInfo,
    collect,
    mcp_trust_store,
)
from pseudoclaude.mcp import (
    ApprovalRequest as McpApprovalRequest,
)

log = logging.getLogger("pseudoclaude.workspace")

class WorkspaceMcp:
    """The MCP servers of one workspace (see the module docstring). ``on_change`` is called on
    the event loop when their status or tools change."""

    def __init__(self, root: Path, settings: Settings, user_dir: Path, approver: Approver,
                 on_change: Callable[[], None] | None = None) -> None:
        self.root = root
        self.settings = settings
        self.approver = approver
        self.acp_servers: list[Any] | None = None
        """The servers an ACP client passed in ``session/new`` (source ``acp``)."""
        self._on_change = on_change
        self._loop: asyncio.AbstractEventLoop | None = None
        self.manager = McpManager(root, mcp_trust_store(user_dir), options=self._options(),
                                  on_change=self._changed)
        self.configs: list[ServerConfig] = []
        self._configured: asyncio.Task[None] | None = None
        self._asking: asyncio.Task[None] | None = None
        self._used = False
        self._warm = False
        """Whether the servers start once configured (an open folder's), not at the first
        run."""
        self._asked: set[tuple[str, str]] = set()
        """The servers (and what they run) already asked about in this process."""
        self.unasked: dict[str, str] = {}
        """The servers left waiting because the approver could not ask (a CLI without a
        terminal), by name: why."""

    def _options(self) -> McpOptions:
        return McpOptions(start_timeout=self.settings.mcp.start_timeout,
                          tool_timeout=self.settings.mcp.tool_timeout)

    def _changed(self, listing: list[ServerInfo]) -> None:  # on the MCP thread
        loop, hook = self._loop, self._on_change
        if loop is not None and hook is not None and not loop.is_closed():
            loop.call_soon_threadsafe(hook)

    # -- configuring -------------------------------------------------------------------------
    def start(self) -> None:
        """For an open folder: :meth:`configure`, then start the servers that may start in the
        background (now and after every later :meth:`configure`); those waiting for the
        user's approval start only once approved. Returns at once."""
        self._warm = True
        self.configure()

    def configure(self, settings: Settings | None = None,
                  acp_servers: Iterable[Any] | None = None) -> None:
        """Read the servers again (now: new settings, or ACP's servers) in the background;
        then ask about the project servers that wait for an approval."""
        if settings is not None:
            self.settings = settings
            self.manager.options = self._options()
        if acp_servers is not None:
            self.acp_servers = list(acp_servers)
        self._loop = asyncio.get_running_loop()
        previous = self._configured

        async def configure() -> None:
            if previous is not None:
                await asyncio.gather(previous, return_exceptions=True)
            self.configs = await asyncio.to_thread(
                collect, self.root, settings={"mcp.servers": dict(self.settings.mcp.servers)},
                acp=self.acp_servers)
            if self.configs or self._used:  # no server ever: no MCP thread either
                self._used = True
                await self.manager.configure(self.configs)
                if self._warm:
                    self.manager.warm()
            if self.manager.pending_approvals() and (self._asking is None
                                                     or self._asking.done()):
                self._asking = asyncio.ensure_future(self.ask_approvals())

        self._configured = asyncio.ensure_future(configure())

    async def ready(self) -> None:
        """Configured (the first time: now)."""
        if self._configured is None:
            self.configure()
        assert self._configured is not None
        try:
            await asyncio.shield(self._configured)
        except Exception as exc:  # a broken configuration never stops a run
            log.warning("MCP servers of %s: %s", self.root, exc)

    async def ask_approvals(self) -> None:
        """Ask the user about each project server waiting for an approval: allowed once (this
        process), for the session (remembered outside the workspace) or denied (this process).
        An approver that cannot ask (a CLI without a terminal), or a dismissed request, leaves
        the server waiting."""
        for request in self.manager.pending_approvals():
            if (request.name, request.summary) in self._asked:
                continue  # once per process for the same command (settings reread, ...)
            self._asked.add((request.name, request.summary))
            asked = ApprovalRequest.mcp_server(request.name, request.summary,
                                               url=request.transport != "stdio")
            try:
                decision = await self.approver.ask(asked)
            except ApprovalUnavailable as exc:
                log.info("MCP server %s of %s waits for an approval: %s", request.name,
                         self.root, exc)
                self.unasked[request.name] = str(exc)
                continue
            except Exception as exc:  # CancelledError propagates
                log.warning("asking to approve the MCP server %s failed: %s", request.name,
                            exc)
                continue
            simple = simple_decision(decision)
            if simple is not None:
                await self.manager.approve(request.name, simple)

    async def settle_approvals(self) -> list[McpApprovalRequest]:
        """Configured, and every project server waiting for an approval asked about, the
        answers in (what a one-shot run does before it starts, so that a question never lands
        in its output and a server allowed now starts for it). Returns the servers still
        waiting: not asked (:attr:`unasked` says why), or the question dismissed."""
        await self.ready()
        asking = self._asking
        if asking is not None:
            try:
                await asyncio.shield(asking)
            except Exception as exc:  # a failed question leaves its server waiting
                log.warning("asking to approve MCP servers of %s failed: %s", self.root, exc)
        if self.manager.pending_approvals():  # configured again meanwhile: the rest
            await self.ask_approvals()
        return self.manager.pending_approvals()

    # -- using -------------------------------------------------------------------------------
    def approvals(self) -> dict[str, str]:
        """The servers' own approval entries (``ask``, ``allow``, ``deny``) by name. A
        repository's own ``allow`` (``.mcp.json``, the workspace's ``config.yaml``) is not
        taken: it cannot let its tools run unasked."""
        return {c.name: c.approval for c in self.configs if c.approval
                and not (c.approval == "allow" and c.source in REPOSITORY_SOURCES)}

    async def tools(self) -> list[McpTool]:
        """The tools of every server that can start, for a run (each server within
        ``mcp.startTimeout``; a broken one is left out and listed ``failed``)."""
        await self.ready()
        if not self.configs:
            return []
        return await self.manager.tools()

    async def listing(self) -> list[ServerInfo]:
        await self.ready()
        return self.manager.listing() if self._used else []

    async def knows(self, name: str) -> bool:
        """Whether a server of that name is configured."""
        await self.ready()
        return self._used and any(s.name == name for s in self.manager.listing())

    async def close(self) -> None:
        for task in (self._asking, self._configured):
            if task is not None and not task.done():
                task.cancel()
        await self.manager.close()
