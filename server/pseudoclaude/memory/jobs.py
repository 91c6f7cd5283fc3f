"""Background memory updates: a queue worked through one at a time on the event loop, drained
(bounded) at shutdown (SPEC §5).

What one update does is given to :class:`UpdateQueue` as ``run``; ``fail`` reports a job that
crashed, was cancelled or never ran. No failure leaves the queue.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pseudoclaude.events import MemoryEvent
from pseudoclaude.llm.types import Message

log = logging.getLogger("pseudoclaude.memory")

DRAIN_TIMEOUT = 10.0


@dataclass(frozen=True, kw_only=True)
class UpdateJob:
    """One update: the messages a completed run appended, whose run it was, and the mode."""

    messages: list[Message]
    session_id: str
    turn: int
    mode: str = "auto"


RunJob = Callable[[UpdateJob], Awaitable[MemoryEvent]]
FailJob = Callable[[UpdateJob, str], MemoryEvent]


class UpdateQueue:
    """Jobs queued by :meth:`schedule`, run one at a time by a worker task on the running
    loop (started when needed)."""

    def __init__(self, *, run: RunJob, fail: FailJob) -> None:
        self._run = run
        self._fail = fail
        self._pending: deque[UpdateJob] = deque()
        self._running: UpdateJob | None = None
        self._worker: asyncio.Task[None] | None = None

    def schedule(self, job: UpdateJob) -> None:
        """Queue ``job`` (call it from the event loop); returns at once."""
        self._pending.append(job)
        self._ensure_worker()

    @property
    def pending(self) -> int:
        """Updates queued or running."""
        return len(self._pending) + (self._running is not None)

    def _ensure_worker(self) -> asyncio.Task[None] | None:
        """The task working through the queue on the running loop (started when needed; a
        worker left behind on a loop that is gone is replaced)."""
        loop = asyncio.get_running_loop()
        worker = self._worker
        if worker is not None and not worker.done() and worker.get_loop() is loop:
            return worker
        if not self._pending:
            return None
        self._worker = loop.create_task(self._work(), name="memory-update")
        return self._worker

    async def _work(self) -> None:
        while self._pending:
            job = self._running = self._pending.popleft()
            try:
                await self._run(job)
            except asyncio.CancelledError:
                self._fail(job, "the memory update was cancelled before it finished")
                raise
            except Exception as exc:  # a bug: still reported, and the queue goes on
                log.exception("memory update crashed")
                self._fail(job, f"internal error: {type(exc).__name__}: {exc}")
            finally:
                self._running = None

    async def drain(self, timeout: float = DRAIN_TIMEOUT) -> bool:
        """Wait at most ``timeout`` seconds for queued and running updates; True when none is
        left. Does not cancel anything (see :meth:`close`)."""
        worker = self._ensure_worker()
        if worker is None:
            return True
        await asyncio.wait({worker}, timeout=timeout)
        if worker.done() and not self._pending:
            return True
        log.warning("%d memory update(s) still pending after %.1f s", self.pending, timeout)
        return False

    async def close(self, timeout: float = DRAIN_TIMEOUT) -> None:
        """Drain (bounded), then cancel what is left (each reported as failed)."""
        if await self.drain(timeout):
            return
        worker = self._worker
        abandoned = list(self._pending)
        self._pending.clear()
        if worker is not None and worker.get_loop() is asyncio.get_running_loop():
            worker.cancel()
            await asyncio.wait({worker})
        for job in abandoned:
            self._fail(job, "the memory update did not run: shutting down first")
