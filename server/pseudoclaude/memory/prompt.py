"""The memory update request: instructions, both raw indexes and the run's messages (SPEC §5).

The model sees the raw ``MEMORY.md`` of each level (not the injected text: it must reuse
file names exactly) and a transcript of the messages the run appended. Tool results are
shortened (they are rarely worth remembering and can be huge), and the whole transcript is
bounded so the request fits any context window.
"""

from __future__ import annotations

import json
from typing import Final

from pseudoclaude.llm.types import Message
from pseudoclaude.memory.notes import NOTE_TYPES

INDEX_PROMPT_MAX_CHARS: Final = 32_000
TOOL_RESULT_CHARS: Final = 600
TOOL_ARGUMENT_CHARS: Final = 300
TEXT_CHARS: Final = 8_000
TRANSCRIPT_MAX_CHARS: Final = 120_000

UPDATE_SYSTEM: Final = (
    "You maintain the long-term memory of a coding assistant. Do not call tools. Answer with "
    "a JSON array of memory operations and nothing else: no prose, no code fence."
)

_SCHEMA: Final = json.dumps({
    "action": "create|update|delete|noop",
    "level": "project|user",
    "type": "|".join(NOTE_TYPES),
    "title": "short title",
    "summary": "one sentence for the index line",
    "slug": "stable lower-case slug (create only)",
    "filename": "existing note file name exactly as in the index (update/delete)",
    "content": "the whole note body in Markdown (create/update)",
}, ensure_ascii=False)

_POLICY: Final = """\
Memory policy:
- Memory holds durable facts that will still matter in later sessions. Do not save the task \
in progress, what was just done, file contents the assistant can read again, or anything \
temporary.
- Treat explicit user self-disclosure as durable user-level memory unless it is obviously \
temporary: profession, expertise, education, graduation year, learning goals, preferred \
languages, workflow and style preferences, and corrections of the assistant's behaviour.
- Concrete triggers: when the user says they are a Go engineer, have deep expertise in a \
language, are a computer-science student, or want to learn about AI Agent development, create \
or update a user_preference note right away, without waiting to be asked.
- Extend an existing profile rather than adding a twin: keep one user_preference note titled \
"User Profile" (slug "user-profile") and update it.
- To update or delete a note, give its filename exactly as it appears in parentheses at the end \
of its index line, e.g. (user_preference_user-profile.md). Otherwise create a note with a \
stable slug. An update replaces the whole body: include what should be kept.
- Level: facts about this project (build steps, conventions, architecture, decisions, useful \
references) go to "project"; identity, expertise, goals and style that hold across projects go \
to "user".
- Types: user_preference (who the user is, how they like to work), correction_feedback (the \
user corrected the assistant: what to do instead), project_knowledge (facts about this \
project), reference_material (where to find things: docs, dashboards, tickets).
- Never store secrets: no API keys, tokens, passwords or private keys, not even in part.
- Return [] when nothing stable is worth saving."""


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters omitted]"


def render_message(message: Message) -> str:
    """One message of the transcript: a ``role=`` line, then its text, tool calls (arguments
    shortened) or tool result (shortened)."""
    lines = [f"role={message.role}"]
    if message.tool_result is not None:
        result = message.tool_result
        status = " (error)" if result.is_error else ""
        lines[0] = f"role=tool_result name={result.name}{status}"
        if result.content:
            lines.append(_shorten(result.content, TOOL_RESULT_CHARS))
        return "\n".join(lines)
    if message.content:
        lines.append(_shorten(message.content, TEXT_CHARS))
    for call in message.tool_calls:
        arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(
            call.arguments, ensure_ascii=False)
        lines.append(f"[tool call] {call.name} {_shorten(arguments, TOOL_ARGUMENT_CHARS)}")
    return "\n".join(lines)


def render_transcript(messages: list[Message]) -> str:
    """The run's messages, at most :data:`TRANSCRIPT_MAX_CHARS`: when longer, the first
    message (the user's request) and the latest messages that fit are kept."""
    parts = [render_message(m) for m in messages]
    total = sum(len(p) + 2 for p in parts)
    if total <= TRANSCRIPT_MAX_CHARS or len(parts) <= 1:
        return "\n\n".join(parts)
    head = parts[0]
    budget = TRANSCRIPT_MAX_CHARS - len(head) - 80
    tail: list[str] = []
    for part in reversed(parts[1:]):
        if budget - len(part) - 2 < 0:
            break
        tail.append(part)
        budget -= len(part) + 2
    omitted = len(parts) - 1 - len(tail)
    return "\n\n".join([head, f"[... {omitted} messages omitted ...]", *reversed(tail)])


def _index_block(text: str) -> str:
    text = text.strip()
    if not text:
        return "(empty)"
    return _shorten(text, INDEX_PROMPT_MAX_CHARS)


def build_update_prompt(project_index: str, user_index: str, messages: list[Message]
                        ) -> tuple[str, str]:
    """``(system prompt, user message)`` of a memory update request."""
    body = "\n\n".join([
        "Decide what, if anything, from the conversation below belongs in long-term memory.",
        "Actions: create, update, delete, noop. Levels: project, user. Types: "
        + ", ".join(NOTE_TYPES) + ".",
        "Each operation: " + _SCHEMA,
        _POLICY,
        "[project index]\n" + _index_block(project_index),
        "[user index]\n" + _index_block(user_index),
        "[recent turn]\n" + render_transcript(messages),
        "Answer with the JSON array only.",
    ])
    return UPDATE_SYSTEM, body
