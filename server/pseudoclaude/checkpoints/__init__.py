"""Checkpoints: snapshots of the workspace's files in a shadow Git repository, so what the
agent (and its commands) changed can be taken back."""

from pseudoclaude.checkpoints.shadow import (
    MAX_FILE_BYTES,
    Change,
    CheckpointError,
    ShadowRepo,
    Snapshot,
    git_available,
)

__all__ = ["MAX_FILE_BYTES", "Change", "CheckpointError", "ShadowRepo", "Snapshot",
           "git_available"]
