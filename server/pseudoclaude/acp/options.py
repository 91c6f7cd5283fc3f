"""A session's config options over ACP: ``mode`` (the permission mode, :mod:`.modes`) and
``model`` (SPEC §13).

``session/new``, ``session/load`` and ``session/resume`` answer both in ``configOptions``.
``model`` lists the ``model`` setting, then ``compact.model`` and ``agents.exploreModel``
when they are set (the workspace's ``models``); choosing one with
``session/set_config_option`` makes the session's next requests use it — this session, in
this process; no settings file is written. A change of either is sent as a
``config_option_update`` too.
"""

from __future__ import annotations

from acp.schema import (
    ConfigOptionUpdate,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
)

from pseudoclaude.acp.modes import MODE_OPTION, mode_option
from pseudoclaude.workspace import Workspace

MODEL_OPTION = "model"
"""The id of the config option that holds the session's model."""
OPTIONS = (MODE_OPTION, MODEL_OPTION)


def model_option(ws: Workspace, session_id: str | None) -> SessionConfigOptionSelect | None:
    """The ``model`` config option (``None`` when no model is configured: no provider)."""
    choices = ws.models()
    if not choices:
        return None
    current = ws.model_of(session_id)
    return SessionConfigOptionSelect(
        type="select", id=MODEL_OPTION, name="Model", category="model",
        description="The model this session's next requests use", current_value=current,
        options=[SessionConfigSelectOption(value=c.model, name=c.model,
                                           description=f"the {c.setting} setting")
                 for c in choices])


def config_options(ws: Workspace, session_id: str | None) -> list[SessionConfigOptionSelect]:
    """The session's config options: its permission mode, then its model."""
    model = model_option(ws, session_id)
    return [mode_option(ws, session_id), *([model] if model is not None else [])]


def options_update(ws: Workspace, session_id: str) -> ConfigOptionUpdate:
    """What tells the client the session's config options now."""
    return ConfigOptionUpdate(session_update="config_option_update",
                              config_options=list(config_options(ws, session_id)))
