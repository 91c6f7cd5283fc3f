"""Long-term memory: project and user notes with a ``MEMORY.md`` index (SPEC §5).

Modules: :mod:`.notes` (file names, slugs, front matter), :mod:`.index` (index lines and the
injected text), :mod:`.atomic` (atomic, race-aware writes), :mod:`.store` (one level's folder),
:mod:`.operations` (a model's reply → validated operations), :mod:`.sensitive` (secrets are
refused), :mod:`.prompt` (the update request), :mod:`.proposals` (``memory.mode: confirm``:
changes queued for review) and :mod:`.watcher` (hand edits).

One workspace's memory is :class:`MemoryManager` (:mod:`.manager`), a facade over
:mod:`.levels` (both stores by level), :mod:`.cache` (the injected index, cached),
:mod:`.reporting` (change callbacks, health warnings, update events), :mod:`.applying`
(operations written), :mod:`.updates` (one background update), :mod:`.jobs` (the queue of
updates: one at a time, drained at shutdown), :mod:`.consent` (proposing, announcing,
reviewing), :mod:`.edits` (``remember`` / ``forget``) and :mod:`.watching` (hand edits and
other processes' proposals noticed).
"""

from pseudoclaude.memory.index import IndexText, build_index_text
from pseudoclaude.memory.manager import (
    MemoryManager,
    MemoryView,
    OnChange,
    ProviderSource,
    StoreView,
)
from pseudoclaude.memory.notes import LEVELS, NOTE_TYPES, slugify
from pseudoclaude.memory.operations import Operation, extract_json_array, parse_operations
from pseudoclaude.memory.store import Change, MemoryStoreError, NoteInfo, NoteStore
from pseudoclaude.memory.watcher import MemoryWatcher

__all__ = [
    "LEVELS",
    "NOTE_TYPES",
    "Change",
    "IndexText",
    "MemoryManager",
    "MemoryStoreError",
    "MemoryView",
    "MemoryWatcher",
    "NoteInfo",
    "NoteStore",
    "OnChange",
    "Operation",
    "ProviderSource",
    "StoreView",
    "build_index_text",
    "extract_json_array",
    "parse_operations",
    "slugify",
]
