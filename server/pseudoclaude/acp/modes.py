"""Permission modes and the task list over ACP: session modes, the ``mode`` config option, and
``plan`` updates (SPEC §13).

``session/new``, ``session/load`` and ``session/resume`` answer ``modes`` (the modes this user
may pick, the session's current one); ``session/set_mode`` and ``session/set_config_option``
(``mode``, :mod:`.options`) switch the session's mode through the workspace, and a change from
anywhere (a request, a slash command, an approved plan) is sent as a ``current_mode_update``
and a ``config_option_update``.
"""

from __future__ import annotations

from acp.schema import (
    AgentPlanUpdate,
    CurrentModeUpdate,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)
from acp.schema import PlanEntry as AcpPlanEntry

from pseudoclaude.events import Task, TasksEvent
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


def mode_option(ws: Workspace, session_id: str | None) -> SessionConfigOptionSelect:
    """The ``mode`` config option: the session's permission mode, and the modes to pick."""
    return SessionConfigOptionSelect(
        type="select", id=MODE_OPTION, name="Permission mode", category="mode",
        description="What the agent may do without asking", current_value=ws.mode_of(session_id),
        options=[SessionConfigSelectOption(value=mode, name=NAMES.get(mode, mode),
                                           description=MODE_MEANINGS.get(mode))
                 for mode in ws.permissions.modes()])


def current_mode(mode: str) -> CurrentModeUpdate:
    return CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode)


def plan_update(event: TasksEvent) -> AgentPlanUpdate:
    """The session's task list as ACP's plan (every entry of priority ``medium``)."""
    return AgentPlanUpdate(session_update="plan", entries=[
        AcpPlanEntry(content=task.content, priority="medium",
                     status=task.status)  # type: ignore[arg-type]  # checked by update_tasks
        for task in event.tasks])


def current_plan(ws: Workspace, session_id: str) -> AgentPlanUpdate | None:
    """The task list an open session has now as a ``plan`` update (``None``: it has none)."""
    session = ws.open_sessions.get(session_id)
    if session is None or not session.tasks:
        return None
    return plan_update(TasksEvent([Task(content, status) for content, status in session.tasks]))
