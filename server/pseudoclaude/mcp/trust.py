"""Approvals of MCP servers: a server from a workspace's ``.mcp.json`` (or its ``config.yaml``)
runs only once the user said so.

The record is :mod:`pseudoclaude.trust`'s, in ``mcp-approvals.json`` of the user-level data
folder, keyed by the workspace's real path, the server's name and its fingerprint (a hash of
the command, arguments and environment as written, or of the URL:
:attr:`~pseudoclaude.mcp.config.ServerConfig.fingerprint`). So a cloned repository cannot ship
its own approval, the same ``.mcp.json`` in another folder asks again, and so does a changed
command.
"""

from __future__ import annotations

from pathlib import Path

from pseudoclaude import trust
from pseudoclaude.trust import workspace_key

__all__ = ["APPROVALS_FILE", "TrustStore", "mcp_trust_store", "workspace_key"]

APPROVALS_FILE = "mcp-approvals.json"


class TrustStore(trust.TrustStore):
    """The approvals of MCP servers, in ``<data_dir>/mcp-approvals.json``."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir, APPROVALS_FILE)


def mcp_trust_store(data_dir: Path) -> trust.TrustStore:
    """The one store of MCP approvals of ``data_dir`` in this process."""
    return trust.trust_store(data_dir, APPROVALS_FILE)
