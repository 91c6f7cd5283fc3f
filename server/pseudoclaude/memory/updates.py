"""One background memory update (SPEC §5): one model call without tools, bounded by
``update_timeout``, then the validated operations applied project first, then user (``mode``
``auto``) or queued as proposals for review (``confirm``). Every outcome is reported
(:mod:`.reporting`); none raises.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pseudoclaude.events import MemoryEvent
from pseudoclaude.llm.errors import ProviderError
from pseudoclaude.llm.provider import Provider, complete
from pseudoclaude.llm.types import Message
from pseudoclaude.memory.applying import apply_operations
from pseudoclaude.memory.cache import IndexCache
from pseudoclaude.memory.consent import Consent
from pseudoclaude.memory.edits import provenance
from pseudoclaude.memory.jobs import UpdateJob
from pseudoclaude.memory.levels import Levels
from pseudoclaude.memory.operations import Operation, OperationsError, parse_operations
from pseudoclaude.memory.prompt import build_update_prompt
from pseudoclaude.memory.reporting import Reporter

log = logging.getLogger("pseudoclaude.memory")

UPDATE_TIMEOUT = 60.0

ProviderSource = Callable[[], Awaitable[Provider]]


@dataclass(kw_only=True)
class Updater:
    """``provider`` gives the model (called once per update; None: updates are reported as
    failed); ``mode`` is the default of a job that names none."""

    levels: Levels
    cache: IndexCache
    reporter: Reporter
    consent: Consent
    provider: ProviderSource | None = None
    update_timeout: float = UPDATE_TIMEOUT
    mode: str = "auto"

    async def _ask_model(self, system: str, prompt: str) -> str:
        if self.provider is None:
            raise ProviderError("no model is configured for memory updates")
        provider = await self.provider()
        # Its prompt is its own (no later request repeats it): a cache write would cost more.
        completion = await complete(provider, system, [Message(role="user", content=prompt)],
                                    cache=False)
        return completion.message.content

    async def run(self, job: UpdateJob) -> MemoryEvent:
        """One update, now. Returns the event it emitted."""
        if not job.messages:
            return self.reporter.unchanged(job)
        project_raw, user_raw = await asyncio.to_thread(
            lambda: (self.levels.project.read_index(), self.levels.user.read_index()))
        system, prompt = build_update_prompt(project_raw, user_raw, job.messages)
        try:
            async with asyncio.timeout(self.update_timeout):
                reply = await self._ask_model(system, prompt)
        except TimeoutError:
            return self.reporter.failed(
                job, f"the memory update timed out after {self.update_timeout:g} s")
        except ProviderError as exc:
            return self.reporter.failed(job, str(exc))
        try:
            operations, rejected = parse_operations(reply)
        except OperationsError as exc:
            return self.reporter.failed(job, str(exc))
        reasons = [str(r) for r in rejected]
        for r in rejected:
            log.warning("memory operation rejected: %s", r)
        source = provenance(job.session_id, job.turn)
        if job.mode == "confirm":
            return await self._propose(job, operations, source, reasons)
        return await self._apply(job, operations, source, reasons)

    async def _propose(self, job: UpdateJob, operations: list[Operation], source: str,
                       reasons: list[str]) -> MemoryEvent:
        proposed = await asyncio.to_thread(self.consent.propose, operations, source,
                                           job.session_id)
        for reason in proposed.refused:
            log.warning("memory operation not proposed: %s", reason)
        await asyncio.to_thread(self.consent.announce)
        return self.reporter.proposed(job, proposed.proposals, reasons + proposed.refused)

    async def _apply(self, job: UpdateJob, operations: list[Operation], source: str,
                     reasons: list[str]) -> MemoryEvent:
        before = self.cache.index()
        applied = await asyncio.to_thread(
            lambda: apply_operations(operations, source, levels=self.levels, cache=self.cache))
        for reason in applied.rejected:
            log.warning("memory operation not applied: %s", reason)
        self.reporter.announce(applied.changes, applied.hand_edits, "update")
        if applied.changes:
            self.reporter.check_health(before)
        return self.reporter.applied(job, applied.changes, reasons + applied.rejected)
