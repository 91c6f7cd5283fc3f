"""Layer 2: summarise old context, keep a recent window verbatim (SPEC §4).

Pure functions: choosing the recent window, grouping the old part into whole rounds, rendering
it as a transcript sized to the window, the nine-section prompt, extracting the summary and
assembling the new history. The runtime does the model call and the replace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import msgspec

from pseudoclaude.compact.estimate import message_bytes, tokens_for_bytes
from pseudoclaude.conversation.summary import ACKNOWLEDGEMENT, summary_message
from pseudoclaude.llm.editor import context_block
from pseudoclaude.llm.types import Message

SUMMARY_SYSTEM = (
    "You write the working summary of a coding session between a user and a coding agent. "
    "You only write text: no tool calls, no questions to the user."
)

SUMMARY_PROMPT_INTRO = """\
Below is the older part of a coding session between a user and a coding agent (an AI \
assistant with file and command tools). The newest messages are not included: they stay in \
the context verbatim. Write a summary that lets the agent continue the work without the \
transcript.
"""

CACHED_SUMMARY_MARKER = "[Context compaction]"
"""How the instruction of a cache-friendly summary request begins."""

CACHED_SUMMARY_PROMPT_INTRO = CACHED_SUMMARY_MARKER + """ Pause the task: do not call any \
tool and do not answer the user. The conversation above is about to be replaced by a summary \
you write now, followed by its most recent messages verbatim. Write a summary of the whole \
conversation above that lets you continue the work without it.
"""

SUMMARY_SECTIONS = """\
First think in an <analysis> block: go through the conversation in order and note every user \
request, decision, file, error and open question. Then write the summary in a <summary> block \
with these nine sections:

1. Primary request and intent: what the user asked for, in detail, and why.
2. Key technical concepts: technologies, frameworks, conventions that matter.
3. Files and code: every file read, created or changed, with why it matters and the important \
snippets or signatures.
4. Errors and fixes: every error met and how it was fixed, including user feedback on it.
5. Problem solving: problems solved and troubleshooting still going on.
6. All user messages: every user message, verbatim (not tool results).
7. Pending tasks: what the user asked for that is not done yet.
8. Current work: precisely what was being worked on right before this summary, with file \
names and code.
9. Next step: the next step that follows directly from the most recent work, quoting the \
latest user request it serves. If the last task was finished, say so instead.
"""

SUMMARY_PROMPT = SUMMARY_PROMPT_INTRO + "\n" + SUMMARY_SECTIONS
"""The instruction of a summary request that carries the old part as a transcript."""
CACHED_SUMMARY_PROMPT = CACHED_SUMMARY_PROMPT_INTRO + "\n" + SUMMARY_SECTIONS
"""The instruction appended to the conversation itself (a cache-friendly summary request)."""

RECENT_TOKENS = 10_000
RECENT_MESSAGES = 5

_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)
_ANALYSIS = re.compile(r"<analysis>.*?(</analysis>|$)", re.DOTALL)


class SummaryError(Exception):
    """The model's reply held no usable summary."""


def recent_start(messages: Sequence[Message], keep_tokens: int = RECENT_TOKENS,
                 keep_messages: int = RECENT_MESSAGES) -> int:
    """Index where the verbatim recent window begins (0: everything is recent).

    Walks back until the window holds at least ``keep_tokens`` and ``keep_messages``, then moves
    back further so the window never starts between a tool call and its results.
    """
    total = 0
    start = len(messages)
    while start > 0 and (tokens_for_bytes(total) < keep_tokens or
                         len(messages) - start < keep_messages):
        start -= 1
        total += message_bytes(messages[start])
    while start > 0 and messages[start].tool_result is not None:
        start -= 1
    return start


def units(messages: Sequence[Message]) -> list[list[Message]]:
    """Whole rounds: a tool-call message with its results, or one other message."""
    out: list[list[Message]] = []
    for message in messages:
        if message.tool_result is not None and out and (
                out[-1][0].tool_calls or out[-1][0].tool_result is not None):
            out[-1].append(message)
        else:
            out.append([message])
    return out


def _render_message(message: Message) -> str:
    result = message.tool_result
    if result is not None:
        flag = " (error)" if result.is_error else ""
        return f"[tool result for {result.name} {result.call_id}{flag}]\n{result.content}"
    parts = []
    if message.context is not None:
        parts.append(f"[{message.role}: {context_block(message.context)}]")
    if message.content:
        parts.append(f"[{message.role}]\n{message.content}")
    for call in message.tool_calls:
        args = call.arguments if isinstance(call.arguments, str) else json.dumps(
            call.arguments, ensure_ascii=False)
        parts.append(f"[{message.role} calls {call.name} {call.id}] {args}")
    return "\n".join(parts) or f"[{message.role}] (empty)"


PREVIOUS_SUMMARY_NOTE = (
    "The <previous-summary> block summarises the part of this same session that comes before "
    "the transcript. Merge it into your summary: keep every fact, file, error and user "
    "message it lists, then add what the transcript brings.")

SHORTENED_RESULT_BYTES = 2_048


def render(groups: Sequence[Sequence[Message]], dropped: int = 0, instructions: str = "",
           previous: str = "") -> str:
    """The whole summary request: the previous chunk's summary (when summarising in chunks),
    the transcript, the prompt, and the user's extra instructions."""
    lines = []
    if previous:
        lines += ["<previous-summary>", previous, "</previous-summary>", ""]
    lines.append("<transcript>")
    if dropped:
        lines.append(f"[{dropped} earlier messages did not fit and are left out]")
    for group in groups:
        for message in group:
            lines.append(_render_message(message))
            lines.append("")
    lines.append("</transcript>")
    lines.append("")
    lines.append(SUMMARY_PROMPT)
    if previous:
        lines.append(PREVIOUS_SUMMARY_NOTE)
    if instructions.strip():
        lines.append(f"Additional instructions from the user: {instructions.strip()}")
    return "\n".join(lines)


EARLIER_SUMMARY_NOTE = (
    "The conversation above starts with the summary of its earlier part. Merge it into your "
    "summary: keep every fact, file, error and user message it lists, then add what the "
    "messages after it bring.")


def cached_prompt(instructions: str = "", earlier_summary: bool = False) -> str:
    """The last user message of a cache-friendly summary request: the conversation as the
    last turn sent it comes before it."""
    lines = [CACHED_SUMMARY_PROMPT]
    if earlier_summary:
        lines.append(EARLIER_SUMMARY_NOTE)
    if instructions.strip():
        lines.append(f"Additional instructions from the user: {instructions.strip()}")
    return "\n".join(lines)


def _rendered_tokens(message: Message) -> int:
    return tokens_for_bytes(len(_render_message(message).encode("utf-8", "surrogatepass")) + 1)


def shorten(group: Sequence[Message]) -> list[Message]:
    """A round too large for any summary request: its tool results cut to their head."""
    out = []
    for message in group:
        result = message.tool_result
        data = result.content.encode("utf-8", "surrogatepass") if result else b""
        if result is not None and len(data) > SHORTENED_RESULT_BYTES:
            head = data[:SHORTENED_RESULT_BYTES].decode("utf-8", "ignore")
            cut = (f"{head}\n[... {len(data) - len(head.encode()):,} more bytes of this result "
                   "left out of the summary request]")
            message = msgspec.structs.replace(
                message, tool_result=msgspec.structs.replace(result, content=cut))
        out.append(message)
    return out


CARRIED_SUMMARY_ALLOWANCE = 4_000
"""Tokens of a chunk's budget left free for the summary carried from the previous chunk."""


def chunk(groups: Sequence[Sequence[Message]], budget_tokens: int, instructions: str = "",
          ) -> list[list[list[Message]]]:
    """Whole rounds split into chunks, oldest first, each small enough for one summary request
    of ``budget_tokens`` (with room for the summary carried from the chunk before). A round
    that is too large on its own goes in with its tool results cut to their head."""
    fixed = tokens_for_bytes(len((SUMMARY_SYSTEM + render([], 1, instructions, " ")
                                  + PREVIOUS_SUMMARY_NOTE).encode()))
    # The first chunk carries no earlier summary; the others leave room for one.
    first_room = max(1, budget_tokens - fixed)
    room = max(1, first_room - min(CARRIED_SUMMARY_ALLOWANCE, budget_tokens // 4))
    chunks: list[list[list[Message]]] = []
    current: list[list[Message]] = []
    used = 0
    for group in groups:
        limit = first_room if not chunks else room
        size = sum(_rendered_tokens(m) for m in group)
        if size > room:
            group = shorten(group)
            size = sum(_rendered_tokens(m) for m in group)
        if current and used + size > limit:
            chunks.append(current)
            current, used = [], 0
        current.append(list(group))
        used += size
    if current:
        chunks.append(current)
    return chunks


_STATED = (re.compile(r"(\d[\d,]*)\s*tokens?\s*>\s*(\d[\d,]*)\s*maximum"),
           re.compile(r"maximum context length is (\d[\d,]*)"))


def stated_maximum(error: str) -> int | None:
    """The context maximum a prompt-too-long error names, if it names one
    (``prompt is too long: 215000 tokens > 200000 maximum``, ``maximum context length is
    128000 tokens``)."""
    for pattern in _STATED:
        match = pattern.search(error)
        if match:
            return int(match.groups()[-1].replace(",", ""))
    return None


def extract_summary(reply: str) -> str:
    """The last ``<summary>`` block; with no tags the reply without its analysis."""
    blocks = _SUMMARY.findall(reply)
    text = blocks[-1] if blocks else _ANALYSIS.sub("", reply)
    text = text.strip()
    if not text:
        raise SummaryError("the model returned an empty summary")
    return text


def assemble(summary: str, recent: Sequence[Message]) -> list[Message]:
    return [
        summary_message(summary),
        Message(role="assistant", content=ACKNOWLEDGEMENT),
        *recent,
    ]
