"""What the user approved of a workspace's own files, remembered outside the workspace.

A repository the user opens may carry files that would run something or send something if they
were obeyed: MCP servers (``.mcp.json``), settings that decide where the prompts and the API
key go, or what runs without asking (``.PseudoClaude/config.yaml``). Such a file is obeyed only
after the user approved it, and the approval lives in the user-level data folder
(``~/.PseudoClaude/``, passed in), never in the workspace, in one JSON file per kind::

    {"version": 1,
     "workspaces": {"/real/path/of/workspace": {"<name>": {"fingerprint": "<sha256>",
                                                           "approvedAt": 1767312000.0}}}}

An approval is keyed by the workspace's real path (symbolic links resolved), a name (an MCP
server's, or a file's path relative to the workspace) and a fingerprint (a hash of what would
run, or of the file's content). So a cloned repository cannot ship its own approval (nothing in
the workspace is read), the same file in another folder asks again, and so does a changed file.
:meth:`TrustStore.remember` writes the record atomically with mode ``0600``;
:meth:`TrustStore.approve_once` lasts as long as this object. :func:`trust_store` gives one
object per file per process, so "allow once" holds for the whole process. A record file that
cannot be read counts as empty (logged) and is rewritten whole by the next
:meth:`~TrustStore.remember`. Blocking (small file reads and writes); thread-safe.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from pseudoclaude.durable import PRIVATE, atomic_write

log = logging.getLogger("pseudoclaude.trust")

VERSION = 1
PERMISSIONS_FILE = "permissions-approvals.json"
"""The approvals of a workspace's settings and permission files (kind ``permissions``)."""
HOOKS_FILE = "hooks-approvals.json"
"""The approvals of a workspace's ``hooks.yaml`` (kind ``hooks``)."""


def workspace_key(workspace: Path | str) -> str:
    """The workspace as approvals know it: its real path."""
    return os.path.realpath(os.fspath(workspace))


def fingerprint(data: bytes) -> str:
    """The fingerprint of a file's content."""
    return hashlib.sha256(data).hexdigest()


class TrustStore:
    """The approvals recorded in ``<data_dir>/<filename>`` (see the module docstring)."""

    def __init__(self, data_dir: Path, filename: str) -> None:
        self.data_dir = data_dir
        self.path = data_dir / filename
        self._once: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()

    def is_approved(self, workspace: Path | str, name: str, fingerprint: str) -> bool:
        """Whether ``name`` with this ``fingerprint`` is approved in ``workspace``: once in
        this process, or remembered."""
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
        of the same name in the same workspace). Raises ``OSError`` when it cannot be written;
        the approval then still holds for this process."""
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
            log.warning("approvals %s cannot be read (%s); nothing counts as approved",
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


_STORES: dict[tuple[Path, str], TrustStore] = {}
_STORES_LOCK = threading.Lock()


def trust_store(data_dir: Path, filename: str) -> TrustStore:
    """The one store of ``<data_dir>/<filename>`` in this process (its "allow once" approvals
    are shared by every workspace and every reload of the settings)."""
    key = (Path(os.path.abspath(data_dir)), filename)
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _STORES[key] = TrustStore(data_dir, filename)
        return store
