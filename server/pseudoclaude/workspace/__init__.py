"""A workspace folder as every front end sees it (SPEC §13 "Sessions: many at once").

:class:`Workspace` (``folder``) holds what a folder shares and one
:class:`~pseudoclaude.workspace.session.Session` per open session; :mod:`.mcp` wires its MCP
servers. Front ends (the LSP server, the ACP agent, the CLI) import this package, ``api``,
``config``, ``errors`` and ``events`` only.
"""

from pseudoclaude.session import SessionNotFound
from pseudoclaude.session.lock import SessionBusy
from pseudoclaude.workspace.folder import (
    NEW,
    RUNNING,
    Hooks,
    IgnoredSetting,
    ResumeInfo,
    TranscriptPage,
    Workspace,
    WorkspaceBusy,
    WorkspaceError,
)
from pseudoclaude.workspace.session import Session

__all__ = [
    "NEW",
    "RUNNING",
    "Hooks",
    "IgnoredSetting",
    "ResumeInfo",
    "Session",
    "SessionBusy",
    "SessionNotFound",
    "TranscriptPage",
    "Workspace",
    "WorkspaceBusy",
    "WorkspaceError",
]
