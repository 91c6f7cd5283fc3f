"""Automatic compaction's circuit breaker (SPEC §4): after :data:`BREAKER_LIMIT` failures in a
row automatic compaction stops, says so once, and waits for a manual compaction to succeed."""

from __future__ import annotations

from dataclasses import dataclass

from pseudoclaude.compact.types import BREAKER_LIMIT
from pseudoclaude.events import Emit, ErrorEvent, WarningEvent


@dataclass(slots=True)
class Breaker:
    """Consecutive automatic-compaction failures, and whether the trip was announced."""

    failures: int = 0
    announced: bool = False

    @property
    def tripped(self) -> bool:
        return self.failures >= BREAKER_LIMIT

    def failed(self, error: Exception, emit: Emit) -> None:
        """An automatic compaction failed: count it, report it, announce a trip once."""
        self.failures += 1
        emit(ErrorEvent(
            f"automatic compaction failed ({self.failures}/{BREAKER_LIMIT}): {error}"))
        if self.tripped and not self.announced:
            self.announced = True
            emit(WarningEvent(
                f"automatic compaction is off after {BREAKER_LIMIT} failures in a row; "
                "compact manually (PseudoClaude: Compact Context) to turn it back on"))

    def succeeded(self) -> None:
        """An automatic compaction summarised: the count starts again."""
        self.failures = 0

    def rearm(self) -> None:
        """A manual compaction summarised: the count starts again and a new trip is
        announced again."""
        self.failures = 0
        self.announced = False
