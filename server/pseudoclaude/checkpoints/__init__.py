"""Checkpoints: snapshots of the workspace's files, so what the agent (and its commands)
changed can be taken back — in a shadow Git repository, or, without ``git``, as before-images
of the agent's own writes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pseudoclaude.checkpoints.base import (
    BEFORE,
    MAX_FILE_BYTES,
    Change,
    CheckpointError,
    Checkpoints,
    Snapshot,
    Step,
)
from pseudoclaude.checkpoints.images import BeforeImages
from pseudoclaude.checkpoints.shadow import ShadowRepo, git_available
from pseudoclaude.checkpoints.status import CheckpointStatus, Coverage

NO_GIT = ("only the agent's own file writes can be taken back: the git command is not on "
          "PATH, so what commands change is not checkpointed")


def open_checkpoints(workspace: Path, folder: Path, *, excluded: Sequence[Path] = (),
                     git: str = "git") -> Checkpoints:
    """The checkpoints of ``workspace`` in ``folder`` (``<dataDir>/checkpoints``): a shadow Git
    repository when ``git`` is on PATH, else before-images."""
    if git_available(git):
        return ShadowRepo(workspace, folder, excluded=excluded, git=git)
    return BeforeImages(workspace, folder)


__all__ = ["BEFORE", "MAX_FILE_BYTES", "NO_GIT", "BeforeImages", "Change", "CheckpointError",
           "CheckpointStatus", "Checkpoints", "Coverage", "ShadowRepo", "Snapshot", "Step",
           "git_available", "open_checkpoints"]
