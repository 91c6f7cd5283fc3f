"""Prompt turns: a prompt run in its session, and what the run says as it happens.

A run's events (:mod:`pseudoclaude.events`) become ``session/update``s of the session they
belong to: streamed text, tool calls and their results (status and the readable display of
:func:`pseudoclaude.agent.results.tool_view`, which the event carries), usage, and for a
capable client the compaction of a Layer 2 summary.

Stop reasons: ``completed`` → ``end_turn``; ``max_iterations`` and ``unknown_tool_limit`` →
``max_turn_requests``; ``canceled`` (``session/cancel``) → ``cancelled``; ``error`` → a
``-32603`` error (not ``refusal``: ACP's refusal means the prompt is dropped from the history,
and ours stays in the log).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from acp import RequestError
from acp.schema import ToolCallStatus

from pseudoclaude.acp.errors import FAILED
from pseudoclaude.acp.outbox import Outbox
from pseudoclaude.acp.subagents import SubAgentCards
from pseudoclaude.acp.updates import STOP_REASONS, AcpStopReason, agent_text, tool_call, tool_result
from pseudoclaude.events import (
    CompactEvent,
    ErrorEvent,
    Event,
    MemoryEvent,
    StopReason,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageUpdate,
    WarningEvent,
)
from pseudoclaude.workspace import ToolCall, Workspace

log = logging.getLogger("pseudoclaude.acp")

CANCELED = "canceled: the run was canceled"


@dataclass
class Turn:
    """A prompt in progress in one session."""

    session_id: str
    task: asyncio.Task[AcpStopReason] | None = None
    cancelled: bool = False
    open_calls: dict[str, str] = field(default_factory=dict)
    """Tool calls announced and not finished (id → tool name)."""
    compaction_id: str | None = None
    """The compaction of ``/compact``, announced ``in_progress``."""
    compaction_done: bool = False


async def run_prompt(ws: Workspace, turn: Turn, text: str) -> AcpStopReason:
    """The model's turn on ``text`` in the turn's session (made current first)."""
    ws.keep_current(turn.session_id)
    _, result = await ws.run(text, turn.session_id)
    if result.stop_reason == StopReason.ERROR:
        raise RequestError(FAILED, f"the run failed: {result.error or 'unknown error'}",
                           {"stopReason": "error", "sessionId": turn.session_id})
    return STOP_REASONS[result.stop_reason]


def close_calls(outbox: Outbox, turn: Turn) -> None:
    """Calls left without a result (a cancelled run) end ``failed``, as the log has them
    (``canceled`` results)."""
    for call_id in list(turn.open_calls):
        outbox.post(turn.session_id, tool_result(
            call_id, is_error=True, text=CANCELED, raw_output={"error_type": "canceled"}))
    turn.open_calls.clear()


def forward(outbox: Outbox, ws: Workspace, root: Path, session_id: str, turn: Turn | None,
            event: Event, send_usage: Callable[[str], None],
            cards: SubAgentCards | None = None) -> None:
    """One event of ``session_id`` (its prompt ``turn``, when one runs) as updates; a
    sub-agent's (``agentId`` set) on its card (:mod:`.subagents`), never as the session's."""
    if isinstance(event.agent_id, str) and event.agent_id:
        if cards is not None:
            cards.forward(ws, session_id, event)
        return
    if isinstance(event, TextEvent):
        outbox.post(session_id, agent_text(event.delta))
    elif isinstance(event, ToolCallEvent):
        if turn is not None:
            turn.open_calls[event.id] = event.name
        outbox.post(session_id, tool_call(event.id, event.name, event.arguments, root,
                                          first_status(ws, event, session_id)))
    elif isinstance(event, ToolResultEvent):
        if turn is not None:
            turn.open_calls.pop(event.id, None)
        failed = event.is_error or event.status != "done"
        error = event.error if isinstance(event.error, str) and event.error else None
        done = cards.finish(session_id, event.id, failed=failed,
                            answer=error if failed and error else event.display or event.preview,
                            raw_output={"bytes": event.bytes,
                                        **({"error": error} if error else {})}) \
            if cards is not None and event.name == "agent" else None
        if done is not None:  # a sub-agent's card: its steps, then its answer
            outbox.post(session_id, done)
            return
        outbox.post(session_id, tool_result(
            event.id, is_error=failed,
            text=error if failed and error else event.display or event.preview,
            raw_output={"bytes": event.bytes, **({"error": error} if error else {})}))
    elif isinstance(event, UsageUpdate):
        send_usage(session_id)
    elif isinstance(event, CompactEvent):
        if event.layer == 2:
            cid = turn.compaction_id if turn and turn.compaction_id else uuid.uuid4().hex
            outbox.compaction_update(session_id, cid, "completed",
                                     summary=ws.current_summary())
            if turn is not None:
                turn.compaction_done = True
        send_usage(session_id)
    elif isinstance(event, ErrorEvent | WarningEvent):
        log.info("%s: %s", session_id, event.message)
    elif isinstance(event, MemoryEvent) and event.status == "failed":
        log.warning("memory update failed: %s", event.error)


def first_status(ws: Workspace, event: ToolCallEvent, session_id: str | None = None
                 ) -> ToolCallStatus:
    """``pending`` when the call will wait for approval, else ``in_progress``."""
    call = ToolCall(event.id, event.name, event.arguments)
    return "pending" if ws.would_ask(call, session_id) else "in_progress"
