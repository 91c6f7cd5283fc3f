"""The workspaces of an ACP process: one per folder, and which folder each ACP session is in.

A workspace is made on first use of its folder (the ``cwd`` of ``session/new`` and
``session/load``) with that folder's settings (config files and environment, SPEC §7, plus the
command line's provider flags); any number of folders in one process. ACP session ids are the
core's session ids. Every API key a workspace knows is given to the transport, which redacts it
from every line it writes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pseudoclaude.acp.errors import invalid, unknown_session
from pseudoclaude.acp.transport import StdioTransport
from pseudoclaude.config import Settings
from pseudoclaude.workspace import Workspace, is_session_id

SettingsFor = Callable[[Path], Settings]
MakeWorkspace = Callable[[Path, Settings], Workspace]


class Folders:
    def __init__(self, transport: StdioTransport, settings: SettingsFor,
                 make: MakeWorkspace) -> None:
        self._transport = transport
        self._settings = settings
        self._make = make
        self.workspaces: dict[Path, Workspace] = {}
        self._started: set[Path] = set()
        self.sessions: dict[str, Path] = {}
        """ACP sessions of this process (new or loaded) → their workspace folder."""

    def folder(self, cwd: Any) -> Path:
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            raise invalid("cwd", f"must be an absolute path, got {str(cwd)[:200]!r}")
        if not os.path.isdir(cwd):
            raise invalid("cwd", f"{cwd} is not a folder on this machine")
        return Path(cwd).resolve()

    def workspace(self, cwd: Any, *, start: bool = True) -> Workspace:
        """The workspace of ``cwd`` (made on first use); ``start``: watch its memory and
        clean up expired sessions, as the LSP server does for an open folder."""
        root = self.folder(cwd)
        ws = self.workspaces.get(root)
        if ws is None:
            ws = self.workspaces[root] = self._make(root, self._settings(root))
            self._add_secret(ws.settings)
        if start and root not in self._started:
            self._started.add(root)
            ws.start()
        return ws

    def refresh_settings(self, ws: Workspace) -> None:
        """Before each prompt: config files edited since apply (a bad one fails the prompt
        with its message)."""
        settings = self._settings(ws.root)
        if settings != ws.settings:
            ws.update_settings(settings)
            self._add_secret(settings)

    def _add_secret(self, settings: Settings) -> None:
        if settings.api_key is not None:
            self._transport.add_secret(settings.api_key.reveal())

    def of_session(self, session_id: str) -> Workspace:
        """The workspace of an ACP session of this process (``-32002`` for another id)."""
        root = self.sessions.get(session_id)
        if root is None:
            raise unknown_session(f"unknown session {session_id[:100]!r}: start one with "
                                  "session/new or open it with session/load first", session_id)
        return self.workspaces[root]

    def having(self, session_id: str) -> Workspace:
        """The workspace of a session: an ACP session of this process, else a session on disk
        in a folder this process has opened (one ``session/list`` lists); ``-32002`` else."""
        root = self.sessions.get(session_id)
        if root is not None:
            return self.workspaces[root]
        if is_session_id(session_id):
            for ws in self.workspaces.values():
                if (ws.sessions_dir / session_id).is_dir():
                    return ws
        raise unknown_session(f"unknown session {session_id[:100]!r}: not a session of a folder "
                              "this agent has opened (list the folder's sessions first)",
                              session_id)

    def current(self, session_id: str | None) -> Workspace | None:
        """The workspace whose current session is ``session_id``, if any."""
        root = self.sessions.get(session_id or "")
        ws = self.workspaces.get(root) if root is not None else None
        return ws if ws is not None and session_id and ws.session_id == session_id else None
