"""A local server's stderr, into the Python log (never onto our stdout, where the language
server speaks LSP).

:class:`StderrLog` is an ``os.pipe()``: the server's stderr is its write end, and a daemon
thread logs each line it reads (on ``pseudoclaude.mcp.server``, at ``INFO``, prefixed with the
server's name, with the server's secrets and anything credential-shaped redacted). Close the
parent's copy of the write end (:meth:`StderrLog.close_writer`) once the process runs; the
thread ends when the last write end closes (the server and its children are gone). The last
lines are kept (:attr:`StderrLog.tail`) to say why a server exited.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections import deque
from collections.abc import Iterable
from typing import TextIO

from pseudoclaude.mcp.secrets import scrub_text

log = logging.getLogger("pseudoclaude.mcp.server")
MAX_LINE = 8 * 1024
"""A longer line is logged in pieces of this many bytes."""


class StderrLog:
    """The pipe a server's stderr goes to, and its reading thread (see the module docstring)."""

    def __init__(self, server: str, secrets: Iterable[str] = ()) -> None:
        self.server = server
        self._secrets = tuple(secrets)
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        """The server's stderr (pass it as ``errlog``)."""
        self._reader = os.fdopen(read_fd, "rb", buffering=0)
        self.tail: deque[str] = deque(maxlen=3)
        """The last lines logged (redacted), for a message about a server that exited."""
        self._thread = threading.Thread(target=self._pump, name=f"mcp-stderr-{server}"[:60],
                                        daemon=True)
        self._thread.start()

    def close_writer(self) -> None:
        """Close this process's copy of the write end (idempotent)."""
        with contextlib.suppress(OSError):
            self.writer.close()

    def join(self, timeout: float) -> None:
        """Wait for the thread to log what is left (at most ``timeout`` seconds)."""
        self._thread.join(timeout)

    def _pump(self) -> None:
        buffer = b""
        try:
            while True:
                chunk = self._reader.read(MAX_LINE)
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self._log(line)
                while len(buffer) >= MAX_LINE:
                    self._log(buffer[:MAX_LINE])
                    buffer = buffer[MAX_LINE:]
            if buffer:
                self._log(buffer)
        except (OSError, ValueError):  # pragma: no cover - the pipe closed under us
            pass
        finally:
            with contextlib.suppress(OSError):
                self._reader.close()

    def _log(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace").rstrip("\r")
        if text.strip():
            text = scrub_text(text, self._secrets)
            self.tail.append(text)
            log.info("[%s] %s", self.server, text)
