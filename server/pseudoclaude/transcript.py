"""A session as the user lived it: the transcript items of ``pseudoclaude/sessions/messages``.

One server function (:func:`build_transcript`) replays the whole log and keeps everything that
happened — every prompt, answer and tool call, also those later summarised or undone — with a
``compaction``, ``undo`` or ``notice`` item where the conversation was replaced. Each item says
whether the model still sees it (``inContext``). The editors and ACP's ``session/load`` render
these items; none of them reads the log or a tool's JSON envelope itself.

Matching across a ``replace``: a message of the new conversation is the item of an earlier
message with the same key — a tool result by its call id, an assistant turn with tool calls by
its first call id, any other message by role and text — taken in order, each earlier item at
most once. Unmatched messages are new: the summary a compaction wrote, the acknowledgement
after it (shown with the summary, not as an item), the result a repair gave a call that was
interrupted, an imported conversation.

The items are msgspec structs tagged on ``kind`` (camelCase on the wire): they are the wire
shape, as the run's events are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET, Struct, UnsetType

from pseudoclaude import words
from pseudoclaude.agent.results import tool_view
from pseudoclaude.conversation.summary import ACKNOWLEDGEMENT, is_summary, summary_text
from pseudoclaude.events import ToolStatus
from pseudoclaude.llm.editor import EditorContext
from pseudoclaude.llm.types import Message, utf8_len
from pseudoclaude.session.codec import (
    MessageEntry,
    ReplaceEntry,
)
from pseudoclaude.session.loader import DEFAULT_LINE_LIMIT, iter_entries
from pseudoclaude.session.timeline import is_prompt

# -- the items ------------------------------------------------------------------------------------


class Item(Struct, tag_field="kind", rename="camel", kw_only=True):
    """Base of every transcript item; ``kind`` is the tag."""

    in_context: bool = True
    """Whether the model still sees it (false once summarised away, or undone)."""
    ts: float | UnsetType = UNSET
    """When it happened (Unix seconds), when the log says."""


class UserItem(Item, tag="user"):
    text: str
    turn: int | UnsetType = UNSET
    """The prompt's number, as rewind and fork name it (``pseudoclaude/sessions/turns``);
    absent for a prompt a rewind took back."""
    context: EditorContext | UnsetType = UNSET
    """What the user had open when they sent it (the active file, the selection...)."""


class AssistantItem(Item, tag="assistant"):
    text: str
    thinking: str | UnsetType = UNSET
    """The model's visible reasoning before this answer, when it gave some."""


class ToolCallItem(Item, tag="toolCall"):
    id: str
    name: str
    arguments: Any
    status: ToolStatus = "pending"
    preview: str = ""
    """The first lines of the result (or its error), readable; ``""`` until it has one."""
    error: str | UnsetType = UNSET
    """A failed, denied or canceled call's own message."""
    bytes: int | UnsetType = UNSET
    """The size of the result the tool returned."""


class SummaryItem(Item, tag="summary"):
    text: str
    """The summary a compaction wrote (without the server's boundary reminder)."""


class CompactionItem(Item, tag="compaction"):
    summarized: int
    """Messages the summary replaced."""
    kept: int
    """Recent messages kept as they were."""
    message: str


class UndoItem(Item, tag="undo"):
    restored: int
    """Messages that came back."""
    message: str


class RewindItem(Item, tag="rewind"):
    message: str


class NoticeItem(Item, tag="notice"):
    text: str


TranscriptItem = (UserItem | AssistantItem | ToolCallItem | SummaryItem | CompactionItem
                  | UndoItem | RewindItem | NoticeItem)
"""Every item kind (a tagged union)."""

INTERRUPTED = "the tool call did not finish (the run ended first)"


# -- the builder ----------------------------------------------------------------------------------

Key = tuple[str, str]


def _key(message: Message) -> Key:
    if message.tool_result is not None:
        return ("result", message.tool_result.call_id)
    if message.tool_calls:
        return ("calls", message.tool_calls[0].id)
    return (message.role, message.content)


@dataclass
class _Builder:
    items: list[Item] = field(default_factory=list)
    live: list[list[int]] = field(default_factory=list)
    """For each message of the current conversation, the items that show it."""
    history: list[tuple[Key, list[int]]] = field(default_factory=list)
    """Every message ever lived, in order: its key and the items that show it."""
    calls: dict[str, int] = field(default_factory=dict)
    """Call id -> its toolCall item."""
    turns: list[UserItem | None] = field(default_factory=list)
    """The prompts that are turns, in order (None: a prompt with no text shown)."""

    def add(self, item: Item) -> int:
        self.items.append(item)
        return len(self.items) - 1

    def message(self, m: Message, ts: float) -> list[int]:
        """A newly lived message: its items (updating a call's item for a result)."""
        stamp: float | UnsetType = ts if ts > 0 else UNSET
        shown: list[int] = []
        if m.tool_result is not None:
            r = m.tool_result
            view = tool_view(r.content, r.is_error)
            index = self.calls.get(r.call_id)
            if index is None:
                index = self.calls[r.call_id] = self.add(
                    ToolCallItem(id=r.call_id, name=r.name, arguments=None, ts=stamp))
            call = self.items[index]
            assert isinstance(call, ToolCallItem)
            call.status, call.preview = view.status, view.preview
            call.error = view.error if view.error is not None else UNSET
            call.bytes = utf8_len(r.content)
            shown.append(index)
        elif m.role == "user":
            if is_summary(m):
                shown.append(self.add(SummaryItem(text=summary_text(m), ts=stamp)))
            elif m.content.strip():
                shown.append(self.add(UserItem(
                    text=m.content, ts=stamp,
                    context=UNSET if m.context is None else m.context)))
        else:
            thinking = "\n\n".join(b.thinking for b in m.thinking if b.thinking)
            if m.content.strip() and not (m.content == ACKNOWLEDGEMENT and not m.tool_calls):
                shown.append(self.add(AssistantItem(
                    text=m.content, thinking=thinking or UNSET, ts=stamp)))
            for tool_call in m.tool_calls:
                index = self.calls[tool_call.id] = self.add(ToolCallItem(
                    id=tool_call.id, name=tool_call.name, arguments=tool_call.arguments,
                    ts=stamp))
                shown.append(index)
        self.history.append((_key(m), shown))
        return shown

    def append(self, m: Message, ts: float) -> None:
        shown = self.message(m, ts)
        self.live.append(shown)
        if is_prompt(m):  # the timeline's next turn
            self.turn(shown)

    def turn(self, shown: list[int]) -> None:
        """The next turn is the prompt shown by the items ``shown``."""
        item = self.items[shown[0]] if shown else None
        prompt = item if isinstance(item, UserItem) else None
        self.turns.append(prompt)
        if prompt is not None:
            prompt.turn = len(self.turns)

    def replace(self, entry: ReplaceEntry) -> None:
        """The conversation is now ``entry.messages``: a marker item where it happened, the
        messages matched to the items that already show them, the rest added."""
        messages = entry.messages or []
        stamp: float | UnsetType = entry.ts if entry.ts > 0 else UNSET
        before = len(self.live)
        was_live = {i for group in self.live for i in group}
        if entry.reason == "compact":
            kept = max(0, len(messages) - 2)  # [summary, acknowledgement, *recent]
            self.add(CompactionItem(summarized=max(0, before - kept), kept=kept,
                                    message=words.summarized_away(max(0, before - kept), kept),
                                    ts=stamp, in_context=False))
        matched = self.match(messages)
        live = [group if group is not None else self.message(m, entry.ts)
                for m, group in zip(messages, matched, strict=True)]
        if entry.reason == "fork":  # a forked session's prompts are its first turns
            for m, group in zip(messages, live, strict=True):
                if is_prompt(m):
                    self.turn(group)
        shown = {i for group in live for i in group}
        for index, item in enumerate(self.items):
            item.in_context = index in shown
        if entry.reason == "undo":
            restored = sum(1 for group in live if group and not set(group) & was_live)
            self.add(UndoItem(restored=restored, message=words.undo_item(restored), ts=stamp,
                              in_context=False))
        elif entry.reason == "rewind":
            if entry.turn is not None:  # the prompts from that turn on are turns no more
                for prompt in self.turns[max(0, entry.turn - 1):]:
                    if prompt is not None:
                        prompt.turn = UNSET
                del self.turns[max(0, entry.turn - 1):]
            self.add(RewindItem(message=words.REWOUND, ts=stamp, in_context=False))
        elif entry.reason != "compact":
            text = words.REPLACE_NOTICES.get(entry.reason, words.REPLACED)
            self.add(NoticeItem(text=text, ts=stamp, in_context=False))
        self.live = live

    def match(self, messages: list[Message]) -> list[list[int] | None]:
        """The lived message each of ``messages`` is, or None for a new one. A replace keeps
        the order of what it keeps (the recent window, the messages an undo brings back), so
        the match runs from the end, each lived message before the one matched after it."""
        out: list[list[int] | None] = [None] * len(messages)
        pos = len(self.history)
        for n in range(len(messages) - 1, -1, -1):
            key = _key(messages[n])
            for j in range(pos - 1, -1, -1):
                if self.history[j][0] == key:
                    out[n], pos = self.history[j][1], j
                    break
        return out

    def legacy_marker(self) -> None:
        """The Go original's replace marker: separate message lines follow."""
        for item in self.items:
            item.in_context = False
        self.live = []
        self.add(NoticeItem(text=words.REPLACED, in_context=False))

    def finish(self, running: bool) -> list[Item]:
        if not running:  # a call without a result did not finish (a cancelled or crashed run)
            for index in self.calls.values():
                call = self.items[index]
                if isinstance(call, ToolCallItem) and call.status == "pending":
                    call.status, call.error = "canceled", INTERRUPTED
                    call.preview = call.preview or INTERRUPTED
        return self.items


def build_transcript(path: Path | str, *, running: bool = False,
                     limit: int = DEFAULT_LINE_LIMIT) -> list[Item]:
    """The transcript of the log at ``path`` (blocking: the whole log is read). ``running``:
    the session has a run in progress, so its calls without results are still ``pending``."""
    builder = _Builder()
    legacy = False
    for entry in iter_entries(path, limit):
        if type(entry) is MessageEntry:
            message = entry.to_message()
            if legacy:  # the lines after a Go marker: the snapshot, matched like a replace
                lived = builder.match([message])[0]
                if lived is not None:
                    builder.live.append(lived)
                    for i in lived:
                        builder.items[i].in_context = True
                    continue
                legacy = False
            builder.append(message, entry.ts)
        elif type(entry) is ReplaceEntry:
            if entry.messages is None:
                builder.legacy_marker()
                legacy = True
            else:
                legacy = False
                builder.replace(entry)
    return builder.finish(running)


def to_wire(items: list[Item]) -> list[Any]:
    return msgspec.to_builtins(items)  # type: ignore[no-any-return]
