"""Approvals of MCP servers: a server from a workspace's ``.mcp.json`` runs only once the user
said so.

The record lives in the user-level data folder (``~/.PseudoClaude/``, passed in), never in the
workspace, in ``mcp-approvals.json``::

    {"version": 1,
     "workspaces": {"/real/path/of/workspace": {"github": {"fingerprint": "<sha256>",
                                                           "approvedAt": 1767312000.0}}}}

An approval is keyed by the workspace's real path (symbolic links resolved), the server's name
and its fingerprint (a hash of the command, arguments and environment as written, or of the URL:
:attr:`~pseudoclaude.mcp.config.ServerConfig.fingerprint`). So a cloned repository cannot ship
its own approval (nothing in the workspace is read), the same ``.mcp.json`` in another folder
asks again, and so does a changed command. :meth:`TrustStore.remember` ("allow for this
session" in the approval vocabulary, kept across restarts) writes the record atomically with
mode ``0600``; :meth:`TrustStore.approve_once` lasts as long as this object (make one per
process). A record file that cannot be read counts as empty (logged) and is rewritten whole by
the next :meth:`~TrustStore.remember`. Blocking (small file reads and writes); thread-safe.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from pseudoclaude.durable import PRIVATE, atomic_write

log = logging.getLogger("pseudoclaude.mcp")

APPROVALS_FILE = "mcp-approvals.json"
VERSION = 1


def workspace_key(workspace: Path | str) -> str:
    """The workspace as approvals know it: its real path."""
    return os.path.realpath(os.fspath(workspace))


class TrustStore:
    """The approvals of MCP servers, in ``<data_dir>/mcp-approvals.json`` (see the module
    docstring)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.path = data_dir / APPROVALS_FILE
        self._once: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()

    def is_approved(self, workspace: Path | str, name: str, fingerprint: str) -> bool:
        """Whether ``name`` with this ``fingerprint`` may start in ``workspace``: approved
        once in this process, or remembered."""
        key = (workspace_key(workspace), name, fingerprint)
        with self._lock:
            if key in self._once:
                return True
            entry = self._read().get(key[0], {}).get(name)
        return isinstance(entry, dict) and entry.get("fingerprint") == fingerprint

    def approve_once(self, workspace: Path | str, name: str, fingerprint: str) -> None:
        """Approve for the life of this process (nothing written)."""
        with self._lock:
            self._once.add((workspace_key(workspace), name, fingerprint))

    def remember(self, workspace: Path | str, name: str, fingerprint: str) -> None:
        """Approve now and in later processes: writes the record (replacing an older approval
        of the same server in the same workspace). Raises ``OSError`` when it cannot be
        written; the approval then still holds for this process."""
        root = workspace_key(workspace)
        with self._lock:
            self._once.add((root, name, fingerprint))
            table = self._read()
            table.setdefault(root, {})[name] = {"fingerprint": fingerprint,
                                                "approvedAt": round(time.time(), 3)}
            self._write(table)

    def forget(self, workspace: Path | str, name: str) -> None:
        """Withdraw an approval of ``name`` in ``workspace`` (the one of this process too)."""
        root = workspace_key(workspace)
        with self._lock:
            self._once = {k for k in self._once if k[:2] != (root, name)}
            table = self._read()
            if table.get(root, {}).pop(name, None) is not None:
                if not table[root]:
                    del table[root]
                self._write(table)

    # -- the file ----------------------------------------------------------------------------
    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("MCP approvals %s cannot be read (%s); no server counts as approved",
                        self.path, type(exc).__name__)
            return {}
        workspaces = data.get("workspaces") if isinstance(data, dict) else None
        if not isinstance(workspaces, dict):
            return {}
        return {k: dict(v) for k, v in workspaces.items() if isinstance(v, dict)}

    def _write(self, table: dict[str, dict[str, Any]]) -> None:
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        body = {"version": VERSION, "workspaces": table}
        data = json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False).encode() + b"\n"
        atomic_write(self.path, data, mode=PRIVATE, folder_sync_optional=True)
