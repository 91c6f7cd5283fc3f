"""``session/load``: a session's transcript items as ``session/update``s, in order.

The items are the server's (:func:`pseudoclaude.transcript.build_transcript`, through
``Workspace.transcript``): the session as the user lived it, also what was later summarised or
undone (``inContext`` false), so a loaded session shows what the user saw, not what the model
sees now. Nothing here reads the log or a tool's JSON envelope.

- ``user`` → ``user_message_chunk``; ``assistant`` → ``agent_thought_chunk`` (its thinking),
  then ``agent_message_chunk``.
- ``toolCall`` → one ``tool_call``, finished: ``completed``, or ``failed`` (an error, a denied
  or a canceled call) with its error as content, else its preview; ``pending`` while the run
  that made it still runs.
- ``compaction`` then its ``summary`` → for a client with ``session.compaction``, one completed
  ``compaction_update`` with the summary (the compaction's own line would repeat it); for other
  clients one agent text: the compaction's line, then the summary under it.
- ``undo``, ``rewind``, ``notice`` (and a compaction without a summary) → their line as agent
  text.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from acp.schema import AgentMessageChunk, TextContentBlock, ToolCallStatus
from msgspec import UNSET

from pseudoclaude.acp.updates import (
    Update,
    agent_text,
    compaction,
    thought_text,
    tool_call,
    user_text,
)
from pseudoclaude.workspace import (
    AssistantItem,
    CompactionItem,
    Item,
    NoticeItem,
    RewindItem,
    SummaryItem,
    ToolCallItem,
    UndoItem,
    UserItem,
)

STATUSES: dict[str, ToolCallStatus] = {"done": "completed", "error": "failed",
                                       "denied": "failed", "canceled": "failed",
                                       "pending": "pending"}
"""A transcript call's status → ACP's."""
SUMMARY_HEADING = "**Summary of the earlier conversation:**"


def replay(items: Sequence[Item], root: Path, *,
           compaction_updates: bool) -> Iterator[Update | dict[str, Any]]:
    """The updates of ``items``; ``compaction_updates``: the client shows compactions."""
    after_text = False  # the last update was agent text: a new paragraph starts the next one
    index = 0
    while index < len(items):
        item = items[index]
        index += 1
        follows = items[index] if index < len(items) else None
        updates: list[Update | dict[str, Any]]
        if isinstance(item, CompactionItem) and isinstance(follows, SummaryItem):
            index += 1  # the summary goes with its compaction
            updates = [summary(item.message, follows.text, compaction_updates)]
        elif isinstance(item, SummaryItem):
            updates = [summary(None, item.text, compaction_updates)]
        else:
            updates = list(item_updates(item, root))
        for update in updates:
            if isinstance(update, AgentMessageChunk):
                if after_text and isinstance(update.content, TextContentBlock):
                    update = agent_text("\n\n" + update.content.text)
                after_text = True
            else:
                after_text = False
            yield update


def item_updates(item: Item, root: Path) -> Iterator[Update]:
    if isinstance(item, UserItem):
        yield user_text(item.text)
    elif isinstance(item, AssistantItem):
        if item.thinking is not UNSET and item.thinking:
            yield thought_text(item.thinking)
        if item.text:
            yield agent_text(item.text)
    elif isinstance(item, ToolCallItem):
        yield finished_call(item, root)
    elif isinstance(item, CompactionItem | UndoItem | RewindItem):
        yield agent_text(item.message)
    elif isinstance(item, NoticeItem):
        yield agent_text(item.text)


def finished_call(item: ToolCallItem, root: Path) -> Update:
    status = STATUSES.get(item.status, "failed")
    error = item.error if isinstance(item.error, str) and item.error else None
    text = error if status == "failed" and error else item.preview
    raw_output: dict[str, Any] | None = None
    if item.bytes is not UNSET:
        raw_output = {"bytes": item.bytes, **({"error": error} if error else {})}
    return tool_call(item.id, item.name, item.arguments, root, status,
                     text=text or None, raw_output=raw_output)


def summary(line: str | None, text: str, compaction_updates: bool) -> Update | dict[str, Any]:
    """A compaction's summary: a completed compaction, or agent text under ``line``."""
    if compaction_updates:
        return compaction(uuid.uuid4().hex, "completed", summary=text)
    head = f"{line}\n\n" if line else ""
    return agent_text(f"{head}{SUMMARY_HEADING}\n\n{text}")
