"""What the checkpoints of a workspace cover now, as ``pseudoclaude/context`` reports it."""

from __future__ import annotations

from typing import Literal

import msgspec

Coverage = Literal["all", "writes"]
"""``all``: every file of the workspace, what commands change included (a shadow Git
repository); ``writes``: only the files the agent's ``write_file`` and ``edit_file`` change
(before-images: there is no ``git`` command)."""


class CheckpointStatus(msgspec.Struct, kw_only=True, rename="camel"):
    """What a rewind of code can restore in this workspace."""

    covers: Coverage
    problem: str | msgspec.UnsetType = msgspec.UNSET
    """What cannot be restored and why (the checkpoints failed, or cover only the agent's own
    writes); absent when every file is covered."""
    skipped: list[str] = msgspec.field(default_factory=list)
    """Files over 1 MiB left out of the latest checkpoint (never restored), relative, ``/``."""
