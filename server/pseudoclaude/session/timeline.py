"""A session's prompts as turns, with what a rewind or a fork needs of each (SPEC §12).

``turn`` is the 1-based index of a prompt among the prompts of the current conversation: every
user prompt the log holds (a ``message`` line of role ``user`` without a tool result; in a
forked session, first the prompts of the conversation it was forked with), in order,
except those a conversation rewind took back (a ``replace`` of reason ``rewind`` names the turn
it went back to: that turn and the ones after it are gone, and the next prompt is that turn
again). A compaction does not renumber: a summarised prompt is still a turn.

For each turn: its prompt and time, the conversation just before it (what a conversation rewind
or a fork to it restores), and the ``checkpoint`` refs recorded during it (the first is the
snapshot of the files before it ran).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from pseudoclaude.conversation import Offload
from pseudoclaude.conversation.summary import is_summary
from pseudoclaude.llm.types import Message, is_notification
from pseudoclaude.session.codec import (
    CheckpointEntry,
    MessageEntry,
    ModeEntry,
    OffloadEntry,
    ReplaceEntry,
    TasksEntry,
)
from pseudoclaude.session.loader import DEFAULT_LINE_LIMIT, iter_entries

REWIND = "rewind"
FORK = "fork"


@dataclass
class Turn:
    turn: int
    prompt: str
    ts: float
    before: list[Message]
    """The conversation just before this prompt (offload previews applied as the log has
    them)."""
    checkpoints: list[str] = field(default_factory=list)
    """The refs recorded during this turn, oldest first (the first: before it ran)."""
    tasks: list[tuple[str, str]] = field(default_factory=list)
    """The session's task list just before this prompt (what a rewind to it restores)."""


@dataclass
class Timeline:
    turns: list[Turn]
    last_checkpoint: str | None
    """The latest ``checkpoint`` ref of the whole log (any turn), None when there is none."""
    tasks: list[tuple[str, str]] = field(default_factory=list)
    """The task list at the end of the log."""
    mode: str | None = None
    """The permission mode of the last ``mode`` line (None: none)."""


def timeline(path: Path | str, limit: int = DEFAULT_LINE_LIMIT) -> Timeline:
    """The turns of the log at ``path`` (blocking: the whole log is read)."""
    turns: list[Turn] = []
    live: list[Message] = []
    results: dict[str, list[int]] = {}
    last: str | None = None
    pending: list[str] = []  # checkpoints recorded before the first prompt of their turn
    tasks: list[tuple[str, str]] = []
    mode: str | None = None
    for entry in iter_entries(path, limit):
        if type(entry) is MessageEntry:
            message = entry.to_message()
            if is_prompt(message):
                turns.append(Turn(turn=len(turns) + 1, prompt=message.content, ts=entry.ts,
                                  before=list(live), tasks=list(tasks)))
                turns[-1].checkpoints.extend(pending)
                pending = []
            if message.tool_result is not None:
                results.setdefault(message.tool_result.call_id, []).append(len(live))
            live.append(message)
        elif type(entry) is OffloadEntry:
            _apply_offload(live, results, Offload(entry.call_id, entry.path, entry.bytes,
                                                  entry.preview))
        elif type(entry) is ReplaceEntry and entry.messages is not None:
            live = list(entry.messages)
            results = {}
            for i, m in enumerate(live):
                if m.tool_result is not None:
                    results.setdefault(m.tool_result.call_id, []).append(i)
                if entry.reason == FORK and is_prompt(m):  # a fork's prompts are its turns
                    turns.append(Turn(turn=len(turns) + 1, prompt=m.content, ts=entry.ts,
                                      before=live[:i], tasks=list(tasks)))
            if entry.reason == REWIND and entry.turn is not None:
                del turns[max(0, entry.turn - 1):]
        elif type(entry) is CheckpointEntry:
            last = entry.ref
            if turns and entry.turn == turns[-1].turn:
                turns[-1].checkpoints.append(entry.ref)
            elif entry.turn == len(turns) + 1:
                pending.append(entry.ref)  # the snapshot before the run, before its prompt line
        elif type(entry) is TasksEntry:
            tasks = [(t.content, t.status) for t in entry.tasks]
        elif type(entry) is ModeEntry:
            mode = entry.mode
    return Timeline(turns=turns, last_checkpoint=last, tasks=tasks, mode=mode)


def is_prompt(message: Message) -> bool:
    """A prompt the user sent: a user message that is neither a tool result, nor the summary a
    compaction wrote, nor the notification of background tasks that ended."""
    return message.role == "user" and message.tool_result is None and \
        not is_summary(message) and not is_notification(message)


def _apply_offload(live: list[Message], results: dict[str, list[int]], offload: Offload) -> None:
    for i in results.get(offload.call_id, ()):
        if i < len(live) and live[i].tool_result is not None:
            result = live[i].tool_result
            assert result is not None
            live[i] = msgspec.structs.replace(
                live[i], tool_result=msgspec.structs.replace(result, content=offload.preview))
