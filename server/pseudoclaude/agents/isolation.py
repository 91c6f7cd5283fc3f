"""``isolation: "worktree"`` (SPEC §13): a sub-agent that works in a git worktree of its own.

The worktree is made as a worktree session's (:mod:`pseudoclaude.worktrees`):
``<dataDir>/worktrees/<agentId>`` on a new branch ``pseudoclaude/<agentId>`` from ``HEAD``,
settings copied and dependency folders linked. The sub-agent's tools, commands and environment
block work there. When it ends, a worktree without changes is removed with its branch; one
with changes is kept, and its result names the branch and the files:
``pseudoclaude/worktree/apply {agentId}`` writes them into the folder (``worktree/status`` and
``worktree/remove`` take the ``agentId`` too).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path

from pseudoclaude.agent.tools import ToolError
from pseudoclaude.worktrees import Worktree, WorktreeError, create, git_available, remove, status

log = logging.getLogger("pseudoclaude.agents")

UNAVAILABLE = "worktree_unavailable"
_making = asyncio.Lock()
"""One ``git worktree add`` at a time (parallel sub-agents of one turn)."""


@dataclass(frozen=True)
class Kept:
    """What a sub-agent's worktree holds when it ended."""

    files: list[str]
    """Its changes (relative to the worktree's root); empty: the worktree was removed."""
    note: str
    """What its result says of it."""


def notice(worktree: Worktree) -> str:
    """Told to the sub-agent before its task."""
    return (f"You work in a git worktree of your own ({worktree.workspace}, branch "
            f"{worktree.branch}), a copy of the workspace at its last commit: every path is "
            "relative to it, and your changes stay there until the user applies them.\n\n")


async def make(repo: Path, data_dir: Path, agent_id: str) -> Worktree:
    """The sub-agent's worktree (:class:`ToolError` ``worktree_unavailable`` when the folder is
    not in a git repository, has no commit, or git is missing)."""
    if not git_available():
        raise ToolError(UNAVAILABLE, "agent: isolation \"worktree\" needs the git command, "
                        "which is not on PATH: call the agent without it")
    try:
        async with _making:
            return await asyncio.to_thread(create, repo, data_dir, agent_id)
    except WorktreeError as exc:
        raise ToolError(UNAVAILABLE, f"agent: isolation \"worktree\" is not available: {exc}; "
                        "call the agent without it") from None


def finish(repo: Path, worktree: Worktree, agent_id: str) -> Kept:
    """Remove the worktree when the sub-agent changed nothing, else keep it. Blocking."""
    try:
        files = [f.path for f in status(worktree).files]
    except WorktreeError as exc:
        log.warning("%s", exc)
        return Kept([], f"Its worktree could not be read ({exc}): {worktree.path}")
    if not files:
        try:
            remove(repo, worktree, force=True)
        except WorktreeError as exc:
            log.warning("the worktree of %s could not be removed: %s", agent_id, exc)
        return Kept([], "Its worktree had no changes: it was removed.")
    shown = ", ".join(files[:20]) + (f" and {len(files) - 20} more" if len(files) > 20 else "")
    return Kept(files, (
        f"Worktree kept: {worktree.path}\nBranch: {worktree.branch}\nChanged: {shown}\n"
        f"The user applies it to the folder with pseudoclaude/worktree/apply "
        f"{{\"agentId\": \"{agent_id}\"}}."))
