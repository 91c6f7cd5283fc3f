"""The agent's ``session/update`` notifications, and what the client said it can show.

One :class:`Outbox` per process: it writes updates through the transport (which redacts API
keys from every line) and remembers the client's ``session.compaction`` capability, so the
``compaction_update``s go only to clients that advertise it.
"""

from __future__ import annotations

from typing import Any

from pseudoclaude.acp.transport import StdioTransport
from pseudoclaude.acp.updates import Update, compaction, wire


class Outbox:
    def __init__(self, transport: StdioTransport) -> None:
        self.transport = transport
        self.compaction = False
        """The client advertised ``session.compaction``: compactions are sent as
        ``compaction_update``s (and a loaded summary as a completed compaction)."""

    def peek(self, message: dict[str, Any]) -> None:
        """The client's ``session.compaction`` capability (newer than the package's schema,
        which drops it): read from the raw ``initialize`` params."""
        if message.get("method") != "initialize":
            return
        params = message.get("params")
        capabilities = params.get("clientCapabilities") if isinstance(params, dict) else None
        session = capabilities.get("session") if isinstance(capabilities, dict) else None
        self.compaction = isinstance(session, dict) and isinstance(session.get("compaction"),
                                                                   dict)

    def post(self, session_id: str, update: Update | dict[str, Any]) -> None:
        """An update: one of the package's types, or a plain dict in the ACP schema's shape
        for what the package's schema does not have (``compaction_update``)."""
        params = ({"sessionId": session_id, "update": update} if isinstance(update, dict)
                  else wire(session_id, update))
        self.transport.post({"jsonrpc": "2.0", "method": "session/update", "params": params})

    def compaction_update(self, session_id: str, compaction_id: str, status: str, *,
                          summary: str | None = None, error: str | None = None) -> None:
        """A ``compaction_update``, for a client that can show it (else nothing)."""
        if self.compaction:
            self.post(session_id, compaction(compaction_id, status, summary=summary,
                                             error=error))
