"""The injected index, cached: what the system prompt gets, and the ``show`` view (SPEC §5).

Refreshed by :meth:`IndexCache.refresh`, after every write of this process and by the watcher
(thread-safe).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from pathlib import Path

from pseudoclaude.memory.index import IndexText, build_index_text
from pseudoclaude.memory.levels import Levels
from pseudoclaude.memory.store import NoteInfo


@dataclass(frozen=True, kw_only=True)
class StoreView:
    level: str
    dir: Path
    index_path: Path
    notes: list[NoteInfo]


@dataclass(frozen=True, kw_only=True)
class MemoryView:
    """The data of ``pseudoclaude/memory/show``: ``index`` is exactly what the prompt gets."""

    index: str
    truncated: bool
    stores: list[StoreView]
    lines: int = 0
    """Lines and bytes of the injected index before any cut (its health)."""
    bytes: int = 0


class IndexCache:
    """The index text built from both stores' ``MEMORY.md``, read from disk on first use."""

    def __init__(self, levels: Levels) -> None:
        self.levels = levels
        self._text: IndexText | None = None
        self._lock = threading.Lock()

    def refresh(self) -> IndexText:
        """Re-read both indexes and rebuild the cached text (blocking; thread-safe)."""
        with self._lock:
            text = build_index_text(self.levels.project.read_index(),
                                    self.levels.user.read_index())
            self._text = text
            return text

    async def arefresh(self) -> IndexText:
        return await asyncio.to_thread(self.refresh)

    def index(self) -> IndexText:
        """The cached index (read from disk on first use)."""
        cached = self._text
        return cached if cached is not None else self.refresh()

    def view(self) -> MemoryView:
        """Fresh index and note listing of both stores (blocking)."""
        text = self.refresh()
        stores = [StoreView(level=s.level, dir=s.dir, index_path=s.index_path,
                            notes=s.list_notes()) for s in self.levels.stores]
        return MemoryView(index=text.text, truncated=text.truncated, stores=stores,
                          lines=text.lines, bytes=text.bytes)
