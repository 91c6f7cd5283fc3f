"""The client's buffers as the agent's tools see them, over ACP (SPEC §12 "ACP").

A client that offers ``fs.readTextFile`` (Zed, codecompanion.nvim) answers every read:
``fs/read_text_file`` gives its buffer's text, unsaved edits included (a result that differs
from the disk says ``unsaved: true``). With ``fs.writeTextFile`` too, every write goes through
``fs/write_text_file`` (the client puts it in its buffer; a file it did not know is created),
after checking that the client's text is still the one the change was made on. Approvals and
checkpoints are the same as for a write to disk. A search reads the disk (one request per file
would be too many). ``fs`` is never asked outside the workspace.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from acp.interfaces import Client

from pseudoclaude.errors import one_line
from pseudoclaude.workspace import Diagnostic, OpenText, ToolError

log = logging.getLogger("pseudoclaude.acp")

FS_TIMEOUT = 30.0
"""A ``fs/*`` request the client has not answered by then fails (a read falls back to disk)."""


def offers_fs(capabilities: Any) -> tuple[bool, bool]:
    """``(readTextFile, writeTextFile)`` of the client's ``initialize`` capabilities."""
    fs = getattr(capabilities, "fs", None)
    return bool(getattr(fs, "read_text_file", False)), bool(getattr(fs, "write_text_file",
                                                                     False))


class AcpEditor:
    """The client's ``fs`` for one workspace; ``session`` gives its current session."""

    def __init__(self, client: Callable[[], Client | None], session: Callable[[], str | None],
                 *, writes: bool) -> None:
        self._client = client
        self._session = session
        self._writes = writes
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()

    @property
    def can_apply_edit(self) -> bool:
        return self._writes

    @property
    def can_diagnose(self) -> bool:
        return False

    @property
    def every_file(self) -> bool:
        return True

    def open_text(self, path: Path) -> OpenText | None:
        """The client's text of ``path`` (``None``: it has none, or did not answer); called
        from a worker thread, which waits while the loop asks."""
        if threading.get_ident() == self._loop_thread:
            return None  # never block the loop
        future = asyncio.run_coroutine_threadsafe(self._read(path), self._loop)
        try:
            text = future.result(FS_TIMEOUT + 1)
        except Exception as exc:
            log.info("fs/read_text_file %s: %s", path, one_line(exc))
            return None
        return None if text is None else OpenText(text, None)

    async def _read(self, path: Path) -> str | None:
        client, session = self._client(), self._session()
        if client is None or session is None:
            return None
        try:
            answer = await asyncio.wait_for(
                client.read_text_file(session_id=session, path=str(path)), FS_TIMEOUT)
        except Exception as exc:  # the client has no such file (or failed): the disk
            log.info("fs/read_text_file %s: %s", path, one_line(exc))
            return None
        return str(answer.content)

    async def apply_edit(self, path: Path, label: str, before: OpenText, after: str) -> None:
        client, session = self._client(), self._session()
        if client is None or session is None or not self._writes:
            raise ToolError("unsaved", f"{label}: the editor cannot take the agent's edits; "
                            "nothing was changed")
        now = await self._read(path)
        if (now or "") != before.text:
            raise ToolError("changed", f"{label} changed in the editor since it was read; "
                            "nothing was written (read it again)")
        try:
            await asyncio.wait_for(client.write_text_file(session_id=session, path=str(path),
                                                          content=after), FS_TIMEOUT)
        except TimeoutError:
            raise ToolError("editor_error", f"the editor did not answer the write of {label} "
                            f"within {FS_TIMEOUT:g} s") from None
        except Exception as exc:
            raise ToolError("editor_error", f"the editor refused the write of {label}: "
                            f"{one_line(exc)}") from None

    async def diagnostics(self, paths: Sequence[str] | None) -> list[Diagnostic]:
        return []
