"""Permission modes and the task list over ACP: session modes, a ``mode`` config option, and
``plan`` updates (SPEC §13).

``session/new`` and ``session/load`` answer ``modes`` (the modes this user may pick, the
session's current one) and ``configOptions`` (one select, ``mode``, with the same values);
``session/set_mode`` and ``session/set_config_option`` (``mode``) switch the session's mode
through the workspace, and a change from anywhere (a request, a slash command) is sent as a
``current_mode_update`` and a ``config_option_update``.
"""

from __future__ import annotations

from acp.schema import (
    AgentPlanUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)
from acp.schema import PlanEntry as AcpPlanEntry

from pseudoclaude.events import TasksEvent
from pseudoclaude.words import MODE_MEANINGS
from pseudoclaude.workspace import Workspace

MODE_OPTION = "mode"
"""The id of the config option that holds the permission mode."""
NAMES = {"strict": "Strict", "default": "Default", "acceptEdits": "Accept edits",
         "plan": "Plan", "bypassPermissions": "Bypass permissions"}


def mode_state(ws: Workspace, session_id: str | None) -> SessionModeState:
    """The modes a client may offer, and the session's."""
    return SessionModeState(
        current_mode_id=ws.mode_of(session_id),
        available_modes=[SessionMode(id=mode, name=NAMES.get(mode, mode),
                                     description=MODE_MEANINGS.get(mode))
                         for mode in ws.permissions.modes()])


def config_options(ws: Workspace, session_id: str | None) -> list[SessionConfigOptionSelect]:
    """The session's config options: its permission mode."""
    return [SessionConfigOptionSelect(
        type="select", id=MODE_OPTION, name="Permission mode",
        description="What the agent may do without asking", current_value=ws.mode_of(session_id),
        options=[SessionConfigSelectOption(value=mode, name=NAMES.get(mode, mode),
                                           description=MODE_MEANINGS.get(mode))
                 for mode in ws.permissions.modes()])]


def mode_updates(ws: Workspace, session_id: str, mode: str
                 ) -> tuple[CurrentModeUpdate, ConfigOptionUpdate]:
    """What tells the client that the session's mode is now ``mode``."""
    return (CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode),
            ConfigOptionUpdate(session_update="config_option_update",
                               config_options=list(config_options(ws, session_id))))


def plan_update(event: TasksEvent) -> AgentPlanUpdate:
    """The session's task list as ACP's plan (every entry of priority ``medium``)."""
    return AgentPlanUpdate(session_update="plan", entries=[
        AcpPlanEntry(content=task.content, priority="medium",
                     status=task.status)  # type: ignore[arg-type]  # checked by update_tasks
        for task in event.tasks])
