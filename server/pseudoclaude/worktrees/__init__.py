"""Worktree sessions: a session that works in a git worktree of its own
(``<dataDir>/worktrees/<session id>``, branch ``pseudoclaude/<session id>`` from ``HEAD``), so
its changes reach the main tree only when applied.

:func:`create` makes and sets up the worktree, :func:`load` reads its record, :func:`status`
tells the session's changes since ``base``, :func:`apply` writes them into the main tree's
files (all or nothing: a file the main tree changed too is a conflict), :func:`remove` deletes
the worktree and its branch (refused with changes not applied unless ``force``). The user's
branch, index, ``HEAD`` and stash are never touched. Every call is blocking (it runs ``git``):
run them off the event loop, one at a time for a session.
"""

from __future__ import annotations

from pseudoclaude.worktrees.base import (
    Action,
    ApplyResult,
    FileChange,
    Worktree,
    WorktreeError,
    WorktreeStatus,
)
from pseudoclaude.worktrees.core import (
    BRANCH_PREFIX,
    apply,
    create,
    load,
    remove,
    status,
    unapplied,
)
from pseudoclaude.worktrees.git import git_available
from pseudoclaude.worktrees.setup import COPIED, LINKED

__all__ = [
    "BRANCH_PREFIX",
    "COPIED",
    "LINKED",
    "Action",
    "ApplyResult",
    "FileChange",
    "Worktree",
    "WorktreeError",
    "WorktreeStatus",
    "apply",
    "create",
    "git_available",
    "load",
    "remove",
    "status",
    "unapplied",
]
