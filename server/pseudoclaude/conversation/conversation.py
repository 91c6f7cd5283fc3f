"""Thread-safe, hook-bearing list of messages (SPEC §2).

Two locks:
- ``_state`` guards the list; readers (``messages()``, ``len()``) take only this one, so they
  never wait for a slow hook (an fsync).
- ``_order`` serialises mutations together with their hooks, so hooks see changes in exactly
  the order they were applied (the session log replays to the same list). It is re-entrant so
  a hook may read the conversation, and it is released before the caller continues.

Hooks are called after ``_state`` is released, always with private copies. Text that is not
valid Unicode (lone surrogates) becomes U+FFFD on the way in, so what the model is sent, what
the log holds and what the conversation holds are always the same.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import msgspec

from pseudoclaude.llm.types import (
    Message,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    clean_message,
    copy_message,
    copy_messages,
)

REPLACE_REASONS = frozenset({"compact", "repair", "clear", "import", "undo", "rewind", "fork"})


@dataclass(frozen=True, slots=True)
class Offload:
    """Layer 1 spilled the result of ``call_id`` to ``path``; its content is now ``preview``."""

    call_id: str
    path: str
    bytes: int
    preview: str


@dataclass(slots=True)
class Hooks:
    on_append: Callable[[Message], None] | None = None
    on_replace: Callable[[str, list[Message], int | None], None] | None = None
    """``(reason, messages, turn)``: ``turn`` is a rewind's target turn, else None."""
    # (offloads, call ids newly kept verbatim)
    on_offload: Callable[[list[Offload], list[str]], None] | None = None


class Conversation:
    def __init__(
        self, messages: Iterable[Message] = (), hooks: Hooks | None = None
    ) -> None:
        self._messages: list[Message] = copy_messages(list(messages))
        self._hooks = hooks or Hooks()
        self._state = threading.Lock()
        self._order = threading.RLock()
        self._generation = 0  # bumped by every replace: indexes from before it are stale

    # -- reading ---------------------------------------------------------------------------
    def messages(self) -> list[Message]:
        with self._state:
            snapshot = list(self._messages)
        return copy_messages(snapshot)

    def __len__(self) -> int:
        with self._state:
            return len(self._messages)

    def tail(self, start: int) -> tuple[int, int, list[Message]]:
        """``(generation, length, copies of messages[start:])``, read atomically.

        Lets a caller that remembers how far it got look only at what is new (O(new messages)),
        and notice from ``generation`` that a replace made its index meaningless.
        """
        with self._state:
            generation, length = self._generation, len(self._messages)
            snapshot = self._messages[start:]
        return generation, length, copy_messages(snapshot)

    @property
    def generation(self) -> int:
        with self._state:
            return self._generation

    # -- hooks -----------------------------------------------------------------------------
    def set_hooks(self, hooks: Hooks | None) -> None:
        with self._order:
            self._hooks = hooks or Hooks()

    # -- appends ---------------------------------------------------------------------------
    def add_user(self, text: str) -> Message:
        return self.append(Message(role="user", content=text))

    def add_assistant(
        self,
        text: str = "",
        tool_calls: Sequence[ToolCall] = (),
        thinking: Sequence[ThinkingBlock] = (),
    ) -> Message:
        return self.append(
            Message(
                role="assistant", content=text, tool_calls=list(tool_calls),
                thinking=list(thinking),
            )
        )

    def add_tool_result(self, result: ToolResult) -> Message:
        return self.append(Message(role="user", tool_result=result))

    def append(self, message: Message) -> Message:
        """Append a copy of ``message``; returns when every hook (the log's fsync) returned.

        The message's ``usage`` goes to the hook (the log stamps it) and is not kept.
        """
        stored = clean_message(copy_message(message))
        stored.usage = None
        with self._order:
            with self._state:
                self._messages.append(stored)
            hook = self._hooks.on_append
            if hook is not None:
                logged = copy_message(stored)
                logged.usage = message.usage
                hook(logged)
        return copy_message(stored)

    # -- whole-history changes -------------------------------------------------------------
    def replace(self, reason: str, messages: Iterable[Message], *,
                turn: int | None = None) -> None:
        """The history becomes ``messages`` (one ``replace`` line of ``reason``; ``turn``: a
        rewind's target turn, logged with it)."""
        if reason not in REPLACE_REASONS:
            raise ValueError(
                f"unknown replace reason {reason!r}; expected one of {sorted(REPLACE_REASONS)}"
            )
        stored = [clean_message(m) for m in copy_messages(list(messages))]
        with self._order:
            with self._state:
                self._messages = stored
                self._generation += 1
            hook = self._hooks.on_replace
            if hook is not None:
                hook(reason, copy_messages(stored), turn)

    def apply_offloads(self, offloads: Sequence[Offload], keep: Sequence[str] = ()) -> int:
        """Record Layer-1 decisions: rewrite spilled results to their previews.

        Returns the number of messages whose content changed. The hook receives every
        decision, including ones that changed nothing, so they are persisted.
        """
        if not offloads and not keep:
            return 0
        by_id = {o.call_id: o for o in offloads}
        changed = 0
        with self._order:
            with self._state:
                for i, message in enumerate(self._messages):
                    result = message.tool_result
                    if result is None or result.call_id not in by_id:
                        continue
                    preview = by_id[result.call_id].preview
                    if result.content != preview:
                        self._messages[i] = msgspec.structs.replace(
                            message, tool_result=msgspec.structs.replace(result, content=preview)
                        )
                        changed += 1
            hook = self._hooks.on_offload
            if hook is not None:
                hook(list(offloads), list(keep))
        return changed
