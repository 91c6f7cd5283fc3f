"""Logging to the editor (``window/logMessage``) and a quiet stderr (SPEC §8).

pygls logs a traceback for every JSON-RPC error it sends, which Neovim shows as an error:
its logger is silenced. Our own records go to the client; stderr stays quiet unless
``PSEUDOCLAUDE_LOG`` names a level (``debug``, ``info``...).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from pseudoclaude.lsp.server import PseudoClaudeServer

_LEVELS = {logging.ERROR: types.MessageType.Error, logging.WARNING: types.MessageType.Warning,
           logging.INFO: types.MessageType.Info}


def configure_stderr() -> None:
    """Before the server starts: nothing on stderr but what the user asked for."""
    logging.getLogger("pygls").setLevel(logging.CRITICAL)
    root = logging.getLogger()
    wanted = os.environ.get("PSEUDOCLAUDE_LOG", "").upper()
    if wanted:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        root.addHandler(handler)
        root.setLevel(getattr(logging, wanted, logging.INFO))
    else:
        root.addHandler(logging.NullHandler())  # no "last resort" printing to stderr


class LspLogHandler(logging.Handler):
    def __init__(self, server: PseudoClaudeServer) -> None:
        super().__init__(logging.INFO)
        self.server = server

    @classmethod
    def install(cls, server: PseudoClaudeServer) -> None:
        logger = logging.getLogger("pseudoclaude")
        for handler in list(logger.handlers):
            if isinstance(handler, LspLogHandler):
                logger.removeHandler(handler)
        logger.addHandler(cls(server))
        if logger.level == logging.NOTSET or logger.level > logging.INFO:
            logger.setLevel(logging.INFO)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = self.format(record)
            kind = _LEVELS.get(record.levelno, types.MessageType.Log)
            if record.levelno >= logging.ERROR:
                kind = types.MessageType.Error
            self.server.on_loop(self._send, kind, message)
        except Exception:  # logging must never break the server
            self.handleError(record)

    def _send(self, kind: types.MessageType, message: str) -> None:
        self.server.window_log_message(types.LogMessageParams(type=kind, message=message))
