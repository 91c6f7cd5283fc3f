"""Protocol repair of a replayed history (SPEC §3).

After repair, every assistant tool call is followed by exactly one result and every tool result
follows its call, so any provider accepts the history:
- a tool-call message dangling at the tail (crash mid-tool) is dropped with its partial results;
  its text, if any, stays as a plain assistant message;
- a call in the middle that has no result gets a synthetic error result ``interrupted``;
- orphan results (no matching call right before them) and duplicate results are dropped;
- a message whose role contradicts its fields (a ``user`` message with tool calls, an
  ``assistant`` message with a tool result) is dropped: no provider accepts it.
Each fix counts as one repair.
"""

from __future__ import annotations

from pseudoclaude.llm.types import Message, synthetic_error_result

INTERRUPTED = "interrupted"
INTERRUPTED_TEXT = "the tool call was interrupted before it produced a result"


def repair(messages: list[Message]) -> tuple[list[Message], int]:
    out: list[Message] = []
    repairs = 0
    i, n = 0, len(messages)
    while i < n:
        message = messages[i]
        i += 1
        if not _well_formed(message):
            repairs += 1  # e.g. a "user" line carrying tool calls: no provider accepts it
            continue
        if message.tool_result is not None:
            repairs += 1  # an orphan: no tool-call message right before it
            continue
        if not message.tool_calls:
            out.append(message)
            continue
        # A round: this tool-call message and the tool results right after it.
        pending = {call.id: call for call in message.tool_calls}
        results: list[Message] = []
        while i < n and messages[i].tool_result is not None:
            result = messages[i].tool_result
            assert result is not None
            if result.call_id in pending and _well_formed(messages[i]):
                del pending[result.call_id]
                results.append(messages[i])
            else:
                repairs += 1  # a result for another call, or a duplicate
            i += 1
        if not pending:
            out.append(message)
            out.extend(results)
        elif i >= n:
            # Dangling at the tail: the run stopped mid-tool. Keep only the text.
            repairs += 1
            if message.content:
                out.append(Message(role="assistant", content=message.content))
        else:
            repairs += 1
            out.append(message)
            out.extend(results)
            out.extend(
                synthetic_error_result(call, INTERRUPTED, INTERRUPTED_TEXT)
                for call in message.tool_calls if call.id in pending
            )
    return out, repairs


def _well_formed(message: Message) -> bool:
    """Tool calls only on assistant messages, results only on user messages, never both."""
    if message.tool_result is not None:
        return message.role == "user" and not message.tool_calls
    return not message.tool_calls or message.role == "assistant"


def is_valid(messages: list[Message]) -> bool:
    """True when every message is well formed, every call is answered right after it and
    every result follows its call."""
    i, n = 0, len(messages)
    while i < n:
        message = messages[i]
        i += 1
        if not _well_formed(message):
            return False
        if message.tool_result is not None:
            return False
        if not message.tool_calls:
            continue
        wanted = {call.id for call in message.tool_calls}
        answered: set[str] = set()
        while i < n and (result := messages[i].tool_result) is not None:
            if (result.call_id not in wanted or result.call_id in answered
                    or not _well_formed(messages[i])):
                return False
            answered.add(result.call_id)
            i += 1
        if answered != wanted:
            return False
    return True
