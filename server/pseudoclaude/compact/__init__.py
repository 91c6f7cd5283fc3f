"""Compaction: Layer 1 spills large tool results, Layer 2 summarises old context (SPEC §4)."""

from pseudoclaude.compact.estimate import Anchor, estimate_messages, message_bytes
from pseudoclaude.compact.layer1 import Ledger
from pseudoclaude.compact.runtime import (
    CompactConfig,
    CompactError,
    CompactOutcome,
    CompactRuntime,
    ContextState,
)

__all__ = [
    "Anchor",
    "CompactConfig",
    "CompactError",
    "CompactOutcome",
    "CompactRuntime",
    "ContextState",
    "Ledger",
    "estimate_messages",
    "message_bytes",
]
