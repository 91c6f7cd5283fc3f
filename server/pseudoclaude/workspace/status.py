"""What ``/status`` and ``pseudoclaude status`` say of a folder and one of its sessions (SPEC §13
"Where users already are"): the session, its permission mode, the provider and model the next
request goes to, the context meter's numbers and what the session's model requests were billed,
the sandbox, the MCP servers, the hooks and the skills, and the folder's own settings that are
not applied.

:func:`folder_status` gathers it (through :meth:`Workspace.status
<pseudoclaude.workspace.folder.Workspace.status>`); the words are the front ends' (one
renderer, :func:`pseudoclaude.api.views.render_status`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pseudoclaude.compact import ContextState
from pseudoclaude.llm.types import Usage
from pseudoclaude.mcp import ServerInfo
from pseudoclaude.sandbox import SandboxStatus
from pseudoclaude.session.usage import logged_usage

if TYPE_CHECKING:
    from pseudoclaude.workspace.folder import IgnoredSetting, Workspace
    from pseudoclaude.workspace.session import Session


@dataclass(frozen=True)
class HookState:
    """One hook as the status lists it."""

    name: str
    event: str
    source: str
    status: str


@dataclass(frozen=True)
class SkillState:
    """One skill as the status lists it."""

    name: str
    source: str
    loaded: bool


@dataclass(frozen=True)
class FolderStatus:
    session_id: str | None
    """The session it is about (``None``: the folder has none open yet)."""
    mode: str
    """The session's permission mode (with no session, the mode the next one starts in)."""
    provider: str | None
    """The provider the next request goes to (``None``: none configured)."""
    model: str
    context: ContextState
    usage: Usage | None
    """The session's model requests so far, summed from its log (``None``: none reported)."""
    sandbox: SandboxStatus
    mcp: list[ServerInfo]
    ignored_settings: list[IgnoredSetting]
    hooks: list[HookState] = field(default_factory=list)
    skills: list[SkillState] = field(default_factory=list)


async def folder_status(ws: Workspace, session: Session | None) -> FolderStatus:
    """The status of ``session`` (``None``: the folder without one). The sandbox is probed
    first when it has not been yet (off the loop), a local server asked for its window as for
    ``context``, and the log is read off the loop."""
    sandbox = await asyncio.to_thread(ws.permissions.sandbox_status)
    await ws.discover_window()
    sid = session.id if session is not None else None
    usage = None if sid is None else await asyncio.to_thread(logged_usage,
                                                             ws.store.log_path(sid))
    catalog, _, loaded = await ws.skill_list(sid) if sid is not None else \
        (await asyncio.to_thread(ws.skills.scan), None, [])
    settings = ws.settings
    return FolderStatus(
        session_id=sid,
        mode=session.mode if session is not None else ws.mode_of(None),
        provider=settings.provider, model=settings.model, context=ws.context(sid),
        usage=usage, sandbox=sandbox, mcp=await ws.mcp_servers(),
        ignored_settings=ws.ignored_settings(),
        hooks=[HookState(h.name, h.event, h.source, h.status) for h in await ws.hook_list()],
        skills=[SkillState(skill.name, skill.source, skill.name in loaded)
                for skill in catalog.skills])
