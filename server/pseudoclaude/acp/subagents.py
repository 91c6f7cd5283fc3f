"""Sub-agents over ACP: a sub-agent is a tool call whose content streams its progress.

The parent's ``agent`` call is a ``tool_call`` like any other. The sub-agent's own events (they
carry its ``agentId``) never become the session's tool calls or messages: each one updates that
call's card with a ``tool_call_update`` whose ``content`` is the sub-agent's progress so far,
one block per step (its tool calls, ``✓``/``✗``/``…`` in front, and its text), the last
:data:`KEEP` steps. When the parent's call gets its result the card ends ``completed`` or
``failed``: its steps, then the answer.

Which call a sub-agent belongs to is in the first line of its log (``callId``), written before
it starts. A background sub-agent (``run_in_background``) outlives the call that started it: its
``task`` event opens a card of its own (``task-<taskId>``) that ends with the task.

A sub-agent's approval is asked on its card (:meth:`SubAgentCards.card_of`): the request shows
the call, and the card's progress comes back once it is answered.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
)

from pseudoclaude.acp.outbox import Outbox
from pseudoclaude.acp.updates import agent_title, text_block, title
from pseudoclaude.events import (
    Event,
    TaskEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageUpdate,
)
from pseudoclaude.workspace import Workspace

KEEP = 40
"""Steps a card shows (the latest)."""
TEXT_CHARS = 4000
"""Characters of one text step a card shows (the end of it)."""
FLUSH_SECONDS = 0.1
"""Streamed text is sent at most this often."""
AGENT_ID = re.compile(r"^agent-[0-9a-f]{1,64}$")
MARKS = {"running": "…", "done": "✓", "failed": "✗"}


@dataclass
class Step:
    kind: str  # "tool" | "text"
    text: str
    call_id: str = ""
    state: str = "running"


@dataclass
class Card:
    """The card of one sub-agent: the tool call it updates, and its steps."""

    session_id: str
    call_id: str
    label: str = ""
    steps: list[Step] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    flush: asyncio.TimerHandle | None = None

    def content(self, answer: str | None = None) -> list[
            ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent]:
        blocks: list[ContentToolCallContent | FileEditToolCallContent
                     | TerminalToolCallContent] = []
        for step in self.steps[-KEEP:]:
            if step.kind == "tool":
                text = f"{MARKS.get(step.state, '…')} {step.text}"
            else:
                text = step.text if len(step.text) <= TEXT_CHARS else \
                    "…" + step.text[-TEXT_CHARS:]
            if answer is not None and step.kind == "text":
                continue  # at the end its answer says it
            blocks.append(ContentToolCallContent(type="content", content=text_block(text)))
        if answer is not None:
            blocks.append(ContentToolCallContent(type="content", content=text_block(answer)))
        return blocks


class SubAgentCards:
    """The cards of the sub-agents of every session of this connection."""

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox
        self.cards: dict[tuple[str, str], Card] = {}
        """(session id, agent id) → its card."""
        self.by_call: dict[tuple[str, str], Card] = {}
        """(session id, the card's call id) → its card."""

    # -- which card --------------------------------------------------------------------------
    def card_of(self, session_id: str, agent_id: str, ws: Workspace | None = None
                ) -> Card | None:
        card = self.cards.get((session_id, agent_id))
        if card is None and ws is not None:
            call_id, label = _header(ws, session_id, agent_id)
            if call_id:
                card = self._open(session_id, agent_id, call_id, label)
        return card

    def _open(self, session_id: str, agent_id: str, call_id: str, label: str = "") -> Card:
        card = Card(session_id, call_id, label)
        self.cards[(session_id, agent_id)] = card
        self.by_call[(session_id, call_id)] = card
        return card

    # -- events ------------------------------------------------------------------------------
    def forward(self, ws: Workspace, session_id: str, event: Event) -> None:
        """An event of a sub-agent (``agentId`` set) on its card; nothing as the session's."""
        if isinstance(event, TaskEvent):
            self._task(session_id, event)
            return
        assert isinstance(event.agent_id, str)
        card = self.card_of(session_id, event.agent_id, ws)
        if card is None:
            return
        if isinstance(event, TextEvent):
            if card.steps and card.steps[-1].kind == "text":
                card.steps[-1].text += event.delta
            else:
                card.steps.append(Step("text", event.delta))
            self._later(card)
            return
        if isinstance(event, ToolCallEvent):
            card.steps.append(Step("tool", title(event.id, event.name, event.arguments),
                                   event.id))
        elif isinstance(event, ToolResultEvent):
            for step in card.steps:
                if step.kind == "tool" and step.call_id == event.id:
                    step.state = "failed" if event.is_error or event.status != "done" \
                        else "done"
        elif isinstance(event, UsageUpdate):
            card.input_tokens += event.input_tokens
            card.output_tokens += event.output_tokens
            return
        else:
            return
        self.show(card)

    def show(self, card: Card, status: ToolCallStatus = "in_progress") -> None:
        """Its progress now (also after an approval asked on its card replaced it)."""
        if card.flush is not None:
            card.flush.cancel()
            card.flush = None
        self.outbox.post(card.session_id, ToolCallProgress(
            session_update="tool_call_update", tool_call_id=card.call_id, status=status,
            content=card.content(), title=card.label or None))

    def _later(self, card: Card) -> None:
        if card.flush is None:
            card.flush = asyncio.get_running_loop().call_later(FLUSH_SECONDS, self.show, card)

    def finish(self, session_id: str, call_id: str, *, failed: bool, answer: str,
               raw_output: dict[str, Any]) -> ToolCallProgress | None:
        """The end of a sub-agent's call (its result), when it has a card: its steps, then
        the answer."""
        card = self.by_call.pop((session_id, call_id), None)
        if card is None:
            return None
        self._forget(card)
        if card.input_tokens or card.output_tokens:
            raw_output = {**raw_output, "usage": {"inputTokens": card.input_tokens,
                                                  "outputTokens": card.output_tokens}}
        return ToolCallProgress(
            session_update="tool_call_update", tool_call_id=call_id,
            status="failed" if failed else "completed", content=card.content(answer),
            raw_output=raw_output)

    def _forget(self, card: Card) -> None:
        if card.flush is not None:
            card.flush.cancel()
            card.flush = None
        for key, value in list(self.cards.items()):
            if value is card:
                del self.cards[key]

    def _task(self, session_id: str, event: TaskEvent) -> None:
        """A background sub-agent: a card of its own from start to end."""
        call_id = f"task-{event.task_id}"
        if event.status == "running":
            label = agent_title({"subagent_type": event.subagent_type,
                                 "name": event.name if isinstance(event.name, str) else "",
                                 "description": event.description}, background=True)
            self._open(session_id, event.task_id, call_id, label)
            self.outbox.post(session_id, ToolCallStart(
                session_update="tool_call", tool_call_id=call_id, title=label, kind="other",
                status="in_progress", raw_input={"taskId": event.task_id}))
            return
        result = event.result if isinstance(event.result, str) else event.status
        done = self.finish(session_id, call_id, failed=event.status not in (
            "completed", "max_turns"), answer=result, raw_output={"status": event.status})
        if done is not None:
            self.outbox.post(session_id, done)

    def close_session(self, session_id: str) -> None:
        for key in [k for k in self.by_call if k[0] == session_id]:
            self._forget(self.by_call.pop(key))


def _header(ws: Workspace, session_id: str, agent_id: str) -> tuple[str, str]:
    """The parent's call that started ``agent_id`` and the card's title: the first line of
    its log says."""
    if not AGENT_ID.match(agent_id):
        return "", ""
    path: Path = ws.store.log_path(session_id).parent / "agents" / f"{agent_id}.jsonl"
    try:
        with open(path, "rb") as f:
            first = json.loads(f.readline() or b"{}")
    except (OSError, ValueError):
        return "", ""
    if not isinstance(first, dict) or not isinstance(first.get("callId"), str):
        return "", ""
    return first["callId"], agent_title({"subagent_type": first.get("subagentType"),
                                         "name": first.get("name"),
                                         "description": first.get("description")})

