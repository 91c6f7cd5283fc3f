"""The end of a session, and the models a session may talk to.

:func:`delete_session_folder` removes a session's folder (its log, tool results and lock) the
safe way: under the session's own lock, so it refuses while any process writes the session (a
run, a compaction, an undo, a rewind) with :class:`~pseudoclaude.session.lock.SessionBusy`
naming the writer. :func:`model_choices` lists the models a session may switch to. The
:class:`~pseudoclaude.workspace.folder.Workspace` wraps both (``delete_session``,
``close_session``, ``models``, ``set_model``) for every front end.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Any

from pseudoclaude.config import Settings
from pseudoclaude.errors import PseudoClaudeError
from pseudoclaude.session import SessionNotFound, SessionStore, is_session_id
from pseudoclaude.session.lock import SessionLock


def delete_session_folder(store: SessionStore, session_id: str) -> None:
    """Remove the folder of ``session_id`` with everything in it. :class:`SessionNotFound`
    for an id that is not a session of ``store``; :class:`SessionBusy` while a process (this
    one included) writes it. Blocking."""
    if not is_session_id(session_id):
        raise SessionNotFound(f"not a session id: {session_id[:100]!r}")
    folder = store.session_dir(session_id)
    if not folder.is_dir() or folder.is_symlink():
        raise SessionNotFound(f"no session {session_id} in {store.sessions_dir}")
    lock = SessionLock(folder, session_id)
    lock.acquire()  # nobody writes it from now on: a writer would have to take this lock
    try:
        shutil.rmtree(folder)
    finally:
        lock.release()


class UnknownModel(PseudoClaudeError, ValueError):
    """A model a session may not switch to (none of :func:`model_choices`)."""


@dataclass(frozen=True)
class ModelChoice:
    """A model a session may use, and the setting that names it."""

    model: str
    setting: str


def model_choices(settings: Settings) -> list[ModelChoice]:
    """The models a session may switch to: the ``model`` setting, then ``compact.model`` and
    ``agents.exploreModel`` when they are set (each model once). All of one provider: these
    settings name models of the session's provider. None without a provider (no ``model``)."""
    if not settings.model:
        return []
    agents: Any = getattr(settings, "agents", None)  # agents.*: the sub-agents' settings
    named = [("model", settings.model), ("compact.model", settings.compact.model),
             ("agents.exploreModel", getattr(agents, "explore_model", "") or "")]
    choices: list[ModelChoice] = []
    for setting, model in named:
        if model and all(c.model != model for c in choices):
            choices.append(ModelChoice(model, setting))
    return choices


def check_model(settings: Settings, model: str) -> None:
    """:class:`UnknownModel`, naming the choices, unless ``model`` is one of them."""
    known = [choice.model for choice in model_choices(settings)]
    if model not in known:
        raise UnknownModel(f"unknown model {model[:80]!r}: choose one of "
                           f"{', '.join(known) or 'none (no provider is configured)'}")
