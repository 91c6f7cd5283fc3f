"""The sandbox of ``run_command``: each command runs inside ``bwrap`` (bubblewrap) with the
file system read-only but for the workspace (or the session's worktree) and a private ``/tmp``,
the project's data folder read-only, secrets and service sockets hidden, no network unless
``sandbox.network``, and every process it starts ended with it (docs/sandbox.md).

:class:`Sandbox` holds the ``sandbox.*`` settings; :attr:`Sandbox.status` says whether commands
run sandboxed (``{enabled, reason?}``), :meth:`Sandbox.command` turns a command into the vector
to start. :func:`probe` checks once per process that ``bwrap`` works here; :func:`wrap` builds a
``bwrap`` command line. Standard library only (with :mod:`pseudoclaude.errors`).
"""

from __future__ import annotations

from pseudoclaude.sandbox.bwrap import (
    CONFIG_DIR,
    HIDDEN_IN_HOME,
    SERVICE_SOCKETS,
    Enabled,
    Sandbox,
    SandboxUnavailable,
    find_program,
    git_dirs,
    parse_enabled,
    plan_mounts,
    wrap,
)
from pseudoclaude.sandbox.probe import SandboxStatus, base_options, clear_cache, probe

__all__ = [
    "CONFIG_DIR",
    "HIDDEN_IN_HOME",
    "SERVICE_SOCKETS",
    "Enabled",
    "Sandbox",
    "SandboxStatus",
    "SandboxUnavailable",
    "base_options",
    "clear_cache",
    "find_program",
    "git_dirs",
    "parse_enabled",
    "plan_mounts",
    "probe",
    "wrap",
]
