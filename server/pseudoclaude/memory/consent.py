"""``memory.mode: confirm`` for one workspace: updates queue proposals instead of writing, the
pending set is announced, and a review accepts or rejects one (SPEC §11; the queue's files, the
drafts and the journalled accept are :mod:`.proposals`)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import msgspec

from pseudoclaude.memory.cache import IndexCache
from pseudoclaude.memory.levels import Levels, in_level_order
from pseudoclaude.memory.notes import LEVELS
from pseudoclaude.memory.operations import Operation
from pseudoclaude.memory.proposals import (
    ProposalQueue,
    ProposalRecord,
    ProposalStale,
    UnknownProposal,
    accept_state,
    accepted_bytes,
    draft,
    finish_interrupted,
    new_id,
)
from pseudoclaude.memory.reporting import Reporter
from pseudoclaude.memory.store import Change, MemoryStoreError, StaleNote

log = logging.getLogger("pseudoclaude.memory")

OnProposals = Callable[[int], None]
"""``(count)``: the pending proposals changed."""


class Proposed(NamedTuple):
    """What queueing operations did (a pair, for the callers that unpack it)."""

    proposals: list[ProposalRecord]
    """The proposals queued (one per note: the last operation on it)."""
    refused: list[str]
    """The operations that could not be proposed, each with its reason."""


@dataclass(frozen=True, kw_only=True)
class Reviewed:
    """The outcome of a review: ``applied`` (accepted and written) and the note's name."""

    applied: bool
    filename: str
    level: str = ""
    decision: str = ""


@dataclass(frozen=True, kw_only=True)
class _Decided:
    reviewed: Reviewed
    change: Change | None
    """What an accept wrote (None for a reject)."""


@dataclass(kw_only=True)
class Consent:
    """The proposals of one workspace, in ``queue``; ``on_proposals(count)`` is called when
    the set of pending ones changed (from the loop, or from the watcher's thread for another
    process's change)."""

    queue: ProposalQueue
    levels: Levels
    cache: IndexCache
    reporter: Reporter
    on_proposals: OnProposals | None = None
    _announced: frozenset[str] | None = field(default=None, init=False)
    """The proposal ids last announced."""
    _announce_lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _queue_lock: threading.RLock = field(default_factory=threading.RLock, init=False)
    """Proposing and reviewing in this process, one at a time (an update proposing for a
    note while its proposal is being accepted would race)."""

    def propose(self, operations: list[Operation], source: str, session_id: str) -> Proposed:
        """Queue validated operations as proposals, project first, then user (blocking);
        nothing is written to the stores."""
        with self._queue_lock:
            pending = self.pending()
            proposed: list[ProposalRecord] = []
            refused: list[str] = []
            for op in in_level_order(operations):
                try:
                    planned = draft(self.levels.store(op.level), op, source, pending)
                    if planned is None:
                        continue
                    proposal = planned.proposal(new_id(), session_id)
                    self.queue.add(proposal)
                except MemoryStoreError as exc:
                    refused.append(f"{op.describe()}: {exc}")
                    continue
                except OSError as exc:
                    refused.append(f"{op.describe()}: could not queue the proposal ({exc})")
                    log.warning("memory proposal failed: %s", exc, exc_info=True)
                    continue
                pending = [p for p in pending if p.target != proposal.target] + [proposal]
                proposed = [p for p in proposed if p.target != proposal.target] + [proposal]
            return Proposed(proposals=proposed, refused=refused)

    def pending(self) -> list[ProposalRecord]:
        """The queue, oldest first, after finishing any accept a crash interrupted
        (blocking)."""
        with self._queue_lock:
            proposals = self.queue.load()
            finished: list[str] = []
            for proposal in proposals:
                if not proposal.accepting:
                    continue
                try:
                    if finish_interrupted(self.levels.store(proposal.level), self.queue,
                                          proposal):
                        finished.append(proposal.level)
                except (MemoryStoreError, OSError) as exc:
                    log.warning("memory proposal %s: cannot finish its accept: %s",
                                proposal.id, exc)
            if not finished:
                return proposals
            self.cache.refresh()
            for level in LEVELS:
                if level in finished:
                    self.reporter.notify(level, "review")
            return self.queue.load()

    def announce(self, *, initial: bool = False) -> int:
        """Call ``on_proposals(count)`` when the pending proposals differ from those last
        announced (``initial``: only when some are pending, after finishing any accept a
        crash interrupted). Blocking; returns the count."""
        with self._announce_lock:  # read and announced in order (the watcher's thread too)
            pending = self.pending() if initial else self.queue.load()
            ids = frozenset(p.id for p in pending)
            changed = ids != self._announced and not (initial and not ids)
            self._announced = ids
            if changed and self.on_proposals is not None:
                try:
                    self.on_proposals(len(ids))
                except Exception:
                    log.exception("memory proposals callback failed")
        return len(ids)

    async def review(self, proposal_id: str, decision: str, content: str | None = None
                     ) -> Reviewed:
        """Accept (write ``after``, or the edited ``content``) or reject a proposal. Raises
        :class:`~pseudoclaude.memory.proposals.UnknownProposal` (field ``id``),
        :class:`MemoryStoreError` (field ``content``) for an unusable edited text and
        :class:`~pseudoclaude.memory.proposals.ProposalStale` when the note changed since."""
        if decision not in ("accept", "reject"):
            raise MemoryStoreError(f"unknown decision {decision!r} (accept or reject)",
                                   "decision")
        before = self.cache.index()
        try:
            decided = await asyncio.to_thread(self._decide, proposal_id, decision, content)
        finally:
            await asyncio.to_thread(self.announce)
        if decided.change is not None:
            self.reporter.announce_change(decided.change, "review")
            self.reporter.check_health(before)
        return decided.reviewed

    def _decide(self, proposal_id: str, decision: str, content: str | None) -> _Decided:
        with self._queue_lock:
            proposal = next((p for p in self.pending() if p.id == proposal_id), None)
            if proposal is None:
                raise UnknownProposal(proposal_id)
            if decision == "reject":
                self.queue.remove(proposal.id)
                log.info("memory proposal %s rejected (%s/%s)", proposal.id, proposal.level,
                         proposal.filename)
                return _Decided(reviewed=_reviewed(proposal, decision, applied=False),
                                change=None)
            change = self._accept(proposal, content)
            return _Decided(reviewed=_reviewed(proposal, decision, applied=True), change=change)

    def _accept(self, proposal: ProposalRecord, content: str | None) -> Change:
        """The journalled accept: marked ``accepting``, the note written, the proposal
        removed (a stale note: unmarked, :class:`ProposalStale`)."""
        store = self.levels.store(proposal.level)
        data = accepted_bytes(proposal, content)
        self.queue.save(msgspec.structs.replace(proposal, accepting=accept_state(data)))
        try:
            change = store.replace_note(proposal.filename, proposal.before_digest, data,
                                        summary=proposal.summary)
        except StaleNote:
            if self.queue.get(proposal.id) is not None:
                self.queue.save(proposal)  # not accepting any more
            log.info("memory proposal %s refused: %s/%s changed since it was proposed",
                     proposal.id, proposal.level, proposal.filename)
            raise ProposalStale(proposal) from None
        self.queue.remove(proposal.id)
        self.cache.refresh()
        log.info("memory proposal %s accepted%s (%s/%s)", proposal.id,
                 " with an edited text" if content is not None else "", proposal.level,
                 proposal.filename)
        return change


def _reviewed(proposal: ProposalRecord, decision: str, *, applied: bool) -> Reviewed:
    return Reviewed(applied=applied, filename=proposal.filename, level=proposal.level,
                    decision=decision)
