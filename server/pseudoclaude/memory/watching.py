"""Changes made by anything but this manager (SPEC §5): hand edits of the store folders
refresh the cached index and are announced (``on_change(level, "hand-edit")``, **from the
watcher's thread**), and other processes' changes to the proposals folder are announced
(``on_proposals``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pseudoclaude.memory.cache import IndexCache
from pseudoclaude.memory.levels import Levels
from pseudoclaude.memory.proposals import ProposalWatcher
from pseudoclaude.memory.reporting import Reporter
from pseudoclaude.memory.watcher import DEBOUNCE, QUIET, MemoryWatcher

log = logging.getLogger("pseudoclaude.memory")


@dataclass(kw_only=True)
class Watching:
    """The watchers of both store folders and of ``proposals_dir``; ``announce_proposals``
    is called (from a watcher's thread) when a proposal file changed."""

    levels: Levels
    cache: IndexCache
    reporter: Reporter
    proposals_dir: Path
    announce_proposals: Callable[[], object]
    _stores: MemoryWatcher | None = field(default=None, init=False)
    _proposals: ProposalWatcher | None = field(default=None, init=False)

    def _settled(self, level: str, hand_edit: bool) -> None:
        self.cache.refresh()
        if hand_edit:
            log.info("%s memory was edited by hand", level)
            self.reporter.notify(level, "hand-edit")

    def start(self, *, debounce: float = DEBOUNCE, quiet: float = QUIET) -> MemoryWatcher:
        """Watch both store folders and the proposals folder (created if missing);
        idempotent."""
        if self._stores is None:
            self._stores = MemoryWatcher(self.levels.stores, self._settled, debounce=debounce,
                                         quiet=quiet)
        self._stores.start()
        if self._proposals is None:
            self._proposals = ProposalWatcher(self.proposals_dir, self.announce_proposals,
                                              debounce=debounce)
        try:
            self._proposals.start()
        except OSError as exc:
            log.warning("cannot watch the memory proposals folder %s: %s", self.proposals_dir,
                        exc)
        return self._stores

    def stop(self) -> None:
        if self._stores is not None:
            self._stores.stop()
        if self._proposals is not None:
            self._proposals.stop()
