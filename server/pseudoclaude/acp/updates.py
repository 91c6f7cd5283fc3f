"""What the core says, as ACP: session updates, stop reasons, prompt text.

Pure functions over the core's types (events, context state) and the schema types of
the ``agent-client-protocol`` package. :func:`wire` turns an update into the ``params`` of a
``session/update`` notification. The compaction updates (``compaction_update``) are newer than
the package's schema: they are plain dicts in the shape of the ACP schema (``compactionId``,
``status``, ``summary``, ``error``), sent only to clients that advertise
``session.compaction``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AudioContentBlock,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    ContentToolCallContent,
    CurrentModeUpdate,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    SessionNotification,
    TextContentBlock,
    TextResourceContents,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
    UsageUpdate,
    UserMessageChunk,
)

from pseudoclaude.events import StopReason
from pseudoclaude.workspace import ContextState, ToolCall, summarize

Update = (UserMessageChunk | AgentMessageChunk | AgentThoughtChunk | ToolCallStart
          | ToolCallProgress | AvailableCommandsUpdate | UsageUpdate | CurrentModeUpdate
          | ConfigOptionUpdate | AgentPlanUpdate)
"""The session updates this agent sends through the package's types."""
ContentBlock = (TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock
                | EmbeddedResourceContentBlock)
AcpStopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]

STOP_REASONS: dict[StopReason, AcpStopReason] = {
    StopReason.COMPLETED: "end_turn",
    StopReason.MAX_ITERATIONS: "max_turn_requests",
    StopReason.UNKNOWN_TOOL_LIMIT: "max_turn_requests",
    StopReason.CANCELED: "cancelled",
    StopReason.BLOCKED: "refusal",
}
"""Ours → ACP's. ``error`` has none: the prompt is answered with a JSON-RPC error instead.
``blocked`` (a ``UserPromptSubmit`` hook refused the prompt, which was neither sent nor
logged) is ACP's ``refusal``."""

TITLE_CHARS = 300
TOOL_KINDS: dict[str, ToolKind] = {
    "read_file": "read", "write_file": "edit", "edit_file": "edit",
    "find_files": "search", "search_code": "search", "run_command": "execute",
}

def wire(session_id: str, update: Update) -> dict[str, Any]:
    """The ``params`` of a ``session/update`` notification."""
    return SessionNotification(session_id=session_id, update=update).model_dump(
        mode="json", by_alias=True, exclude_none=True)


def text_block(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def agent_text(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(session_update="agent_message_chunk", content=text_block(text))


def user_text(text: str) -> UserMessageChunk:
    return UserMessageChunk(session_update="user_message_chunk", content=text_block(text))


def thought_text(text: str) -> AgentThoughtChunk:
    return AgentThoughtChunk(session_update="agent_thought_chunk", content=text_block(text))


# -- tool calls -----------------------------------------------------------------------------------
def tool_kind(name: str) -> ToolKind:
    return TOOL_KINDS.get(name, "other")


def locations(arguments: Any, root: Path) -> list[ToolCallLocation] | None:
    """The file a call reads or changes (its ``path`` argument), as an absolute path."""
    path = arguments.get("path") if isinstance(arguments, dict) else None
    if not isinstance(path, str) or not path or "\0" in path:
        return None
    return [ToolCallLocation(path=os.path.normpath(os.path.join(root, path)))]


def agent_title(arguments: Any, background: bool = False) -> str:
    """``explore agent: find the words`` (``background`` says so)."""
    args = arguments if isinstance(arguments, dict) else {}
    kind = args.get("subagent_type") if isinstance(args.get("subagent_type"), str) else ""
    what = next((args[k] for k in ("name", "description", "prompt")
                 if isinstance(args.get(k), str) and args[k].strip()), "")
    line = " ".join(f"{kind or 'general-purpose'} agent"
                    f"{' (background)' if background else ''}: {what}".split())
    return line if len(line) <= 120 else line[:119] + "…"


def title(call_id: str, name: str, arguments: Any) -> str:
    """One line for a tool call card: ``read_file: notes.txt``, ``search_code: TODO in src``,
    else the approval prompt's summary (``run_command: git status``)."""
    args = arguments if isinstance(arguments, dict) else {}
    if name == "agent":
        return agent_title(args)
    detail = None
    if name == "read_file" and isinstance(args.get("path"), str):
        detail = args["path"]
    elif name in ("find_files", "search_code") and isinstance(args.get("pattern"), str):
        detail = args["pattern"]
        if isinstance(args.get("path"), str) and args["path"]:
            detail += f" in {args['path']}"
    if detail is None:
        return summarize(ToolCall(call_id, name, arguments))
    line = " ".join(f"{name}: {detail}".split())
    return line if len(line) <= TITLE_CHARS else line[:TITLE_CHARS - 1] + "…"


def tool_call(call_id: str, name: str, arguments: Any, root: Path, status: ToolCallStatus, *,
              text: str | None = None, raw_output: Any = None) -> ToolCallStart:
    """A call's card; a replayed call comes finished, with its result's ``text``."""
    return ToolCallStart(
        session_update="tool_call", tool_call_id=call_id,
        title=title(call_id, name, arguments), kind=tool_kind(name),
        status=status, raw_input=arguments, locations=locations(arguments, root),
        content=None if text is None else [text_content(text)], raw_output=raw_output)


def tool_status(call_id: str, status: ToolCallStatus) -> ToolCallProgress:
    return ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id,
                            status=status)


def tool_result(call_id: str, *, is_error: bool, text: str,
                raw_output: Any = None) -> ToolCallProgress:
    """A finished call: ``completed`` or ``failed``, its preview (or error) as content."""
    return ToolCallProgress(
        session_update="tool_call_update", tool_call_id=call_id,
        status="failed" if is_error else "completed",
        content=[text_content(text)], raw_output=raw_output)


def text_content(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=text_block(text))


# -- usage, compaction -------------------------------------------------------------------------
def usage(state: ContextState) -> UsageUpdate:
    """Context tokens (the estimate of the next request) against the window."""
    return UsageUpdate(session_update="usage_update", used=max(0, state.estimated_tokens),
                       size=max(0, state.context_window))


def compaction(compaction_id: str, status: str, *, summary: str | None = None,
               error: str | None = None) -> dict[str, Any]:
    """A ``compaction_update`` (status ``in_progress``, ``completed``, ``failed`` or
    ``cancelled``)."""
    update: dict[str, Any] = {"sessionUpdate": "compaction_update",
                              "compactionId": compaction_id, "status": status}
    if summary is not None:
        update["summary"] = [{"type": "text", "text": summary}]
    if error is not None:
        update["error"] = error
    return update


# -- prompts --------------------------------------------------------------------------------------
class UnsupportedContent(ValueError):
    """A prompt block this agent does not take (it advertises text and resources only)."""


def prompt_text(blocks: Sequence[ContentBlock]) -> str:
    """The prompt as text: text blocks as they are, a resource link as a Markdown link, an
    embedded text resource as a fenced block under its URI."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[{block.title or block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if not isinstance(resource, TextResourceContents):
                raise UnsupportedContent(
                    f"prompt: binary resource {resource.uri} is not supported (text only)")
            parts.append(f"{resource.uri}:\n```\n{resource.text}\n```")
        else:
            raise UnsupportedContent(f"prompt: {block.type} content is not supported "
                                     "(text and resources only)")
    return "\n".join(parts)
