"""``pseudoclaude acp``: the ACP agent over stdio until the client closes stdin."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import cast

from acp import RequestError
from acp.agent.connection import AgentSideConnection
from acp.interfaces import Agent, Client
from pydantic import ValidationError

from pseudoclaude.acp.agent import PseudoClaudeAgent, SettingsFor
from pseudoclaude.acp.transport import open_stdio


class _OneLine(logging.Filter):
    """A bad notification from the client (invalid params, an unknown method) is one line,
    not the package's traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, ValidationError | RequestError):
            detail = " ".join(str(error).split())[:300]
            record.msg, record.args = f"{record.getMessage()}: {detail}", None
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def configure_logging() -> None:
    """Warnings and errors on stderr (editors keep it as the agent's log);
    ``PSEUDOCLAUDE_LOG`` names another level (``debug``, ``info``...)."""
    wanted = os.environ.get("PSEUDOCLAUDE_LOG", "").upper() or "WARNING"
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_OneLine())
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(getattr(logging, wanted, logging.WARNING))


async def serve(settings: SettingsFor) -> int:
    transport = await open_stdio()
    agent = PseudoClaudeAgent(transport, settings)

    def to_agent(client: Client) -> Agent:
        return cast(Agent, agent)

    # the package (0.12) routes session/resume and session/close with its unstable protocol on
    connection = AgentSideConnection(to_agent, transport, listening=False,
                                     use_unstable_protocol=True)
    try:
        await connection.listen()
    finally:
        await agent.close()
        await connection.close()
    return 0


def run(settings: SettingsFor) -> int:
    configure_logging()
    return asyncio.run(serve(settings))
