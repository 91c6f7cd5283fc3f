"""Writing validated operations to the stores, project first, then user (SPEC §5)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pseudoclaude.memory.cache import IndexCache
from pseudoclaude.memory.levels import Levels, in_level_order
from pseudoclaude.memory.operations import Operation
from pseudoclaude.memory.store import Change, HandEditKept, MemoryStoreError

log = logging.getLogger("pseudoclaude.memory")


@dataclass(frozen=True, kw_only=True)
class Applied:
    """What applying a list of operations did."""

    changes: list[Change]
    rejected: list[str]
    hand_edits: list[str]
    """Levels where a hand edit was found (and kept) while writing."""


def apply_one(levels: Levels, op: Operation, source: str) -> Change | None:
    store = levels.store(op.level)
    if op.action == "create":
        return store.create(op.type, op.title, op.content, summary=op.summary, slug=op.slug,
                            source=source)
    if op.action == "update":
        return store.update(op.filename, op.content, note_type=op.type, title=op.title,
                            summary=op.summary, source=source)
    change = store.delete(op.filename)
    if change is None:
        raise MemoryStoreError(f"there is no note {op.filename!r} in {op.level} memory")
    return change


def apply_operations(operations: list[Operation], source: str, *, levels: Levels,
                     cache: IndexCache) -> Applied:
    """Apply validated operations, project first, then user (blocking); the cache is
    refreshed after a write. An operation that fails is reported in ``rejected``; the others
    still apply."""
    changes: list[Change] = []
    rejected: list[str] = []
    hand_edits: list[str] = []
    for op in in_level_order(operations):
        try:
            change = apply_one(levels, op, source)
        except HandEditKept as exc:
            hand_edits.append(exc.level)
            rejected.append(f"{op.describe()}: {exc}")
            continue
        except MemoryStoreError as exc:
            rejected.append(f"{op.describe()}: {exc}")
            continue
        except OSError as exc:
            rejected.append(f"{op.describe()}: could not write ({exc})")
            log.warning("memory write failed: %s", exc, exc_info=True)
            continue
        if change is not None:
            changes.append(change)
            if change.hand_edit:
                hand_edits.append(change.level)
    if changes or hand_edits:
        cache.refresh()
    return Applied(changes=changes, rejected=rejected, hand_edits=hand_edits)
