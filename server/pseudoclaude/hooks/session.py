"""The hooks of one session: each event's payload, and what its outcome means (docs/hooks.md).

Every payload has Claude Code's common fields (``hook_event_name``, ``session_id``,
``transcript_path``: the absolute path of the session's ``conversation.jsonl``, ``cwd``,
``permission_mode``) and the same again under the PseudoClaude names (``event``, ``mode``),
then the event's own fields (snake_case):

* ``SessionStart`` / ``SessionResume``: ``source`` (``startup`` | ``resume``);
* ``SessionEnd``: ``reason`` (``close`` | ``delete`` | ``exit``);
* ``UserPromptSubmit``, ``PreUserMessage``: ``prompt``;
* ``PreToolUse``: ``tool_name`` (as the model calls it: ``run_command``, ``mcp__…``),
  ``tool_input`` (the arguments object), ``tool_use_id``;
* ``PostToolUse``: the same, and ``tool_result`` (its first :data:`RESULT_CHARS` characters),
  ``is_error``;
* ``PreCompact``: ``trigger`` (``auto`` | ``manual``), ``before_tokens``,
  ``custom_instructions``; ``PostCompact``: ``trigger``, ``before_tokens``, ``after_tokens``;
* ``Stop``: ``stop_reason``, ``iter`` (model requests), ``last_assistant_message``;
* ``SubagentStop``: ``agent_id``, ``agent_type``, ``stop_reason``, ``iter``,
  ``last_assistant_message`` (when a sub-agent ends: :mod:`pseudoclaude.agents.run`);
* ``Notification``: ``kind`` (``approval`` | ``stream_error``), ``detail``, ``message``.

A sub-agent's tool calls fire the session's ``PreToolUse`` and ``PostToolUse`` hooks too, and
its failed model requests ``Notification`` (:class:`AgentHooks`): the same payload (the
session's ``session_id`` and ``transcript_path``) plus ``agent_id``, ``agent_type`` and
``agent_transcript_path`` (its own log); ``cwd`` is its worktree for an isolated one. A
sub-agent fires no ``Stop`` and no ``PreUserMessage`` (``SubagentStop`` fires when it ends).

What the hooks add for the model (``additionalContext``, the plain output of
``UserPromptSubmit`` and ``SessionStart`` hooks, ``prompt`` actions, PostToolUse feedback) waits
in the session (:meth:`SessionHooks.take_context`) and goes with its next model request, after
the conversation (never in the cached system prompt, never in the log).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pseudoclaude.hooks.dispatch import Decided, Dispatcher, Outcome
from pseudoclaude.hooks.model import Hook, HookEvent
from pseudoclaude.llm.types import ToolCall, ToolResult

RESULT_CHARS = 500
"""Characters of a tool's result a PostToolUse payload carries."""
MESSAGE_CHARS = 2000
"""Characters of the last answer a Stop payload carries."""


@dataclass(frozen=True, slots=True)
class ToolHooks:
    """What the PreToolUse hooks decided about one call."""

    decided: Decided | None = None
    updated_input: dict[str, Any] | None = None
    updated_by: str = ""


class SessionHooks:
    """Fires a session's events (see the module docstring). ``hooks`` gives the hooks in force
    now (they change when a file is edited or approved)."""

    def __init__(self, dispatcher: Dispatcher, hooks: Callable[[], Sequence[Hook]], *,
                 session_id: str, transcript_path: Path, cwd: Callable[[], Path],
                 mode: Callable[[], str], warn: Callable[[str], None] | None = None) -> None:
        self.dispatcher = dispatcher
        self.hooks = hooks
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.cwd = cwd
        self.mode = mode
        self.warn = warn
        """Who hears of its hooks' failures (default: the dispatcher's listener)."""
        self.spent: set[str] = set()
        """The ``only_once`` hooks that ran in this session (since it was resumed)."""
        self._context: list[str] = []

    # -- the generic part --------------------------------------------------------------------
    def payload(self, event: HookEvent, **fields: Any) -> dict[str, Any]:
        mode = self.mode()
        return {"event": event, "hook_event_name": event, "session_id": self.session_id,
                "transcript_path": str(self.transcript_path.absolute()),
                "cwd": str(self.cwd()), "mode": mode, "permission_mode": mode, **fields}

    def wanted(self, event: HookEvent) -> list[Hook]:
        return [hook for hook in self.hooks() if hook.event == event]

    async def fire(self, event: HookEvent, **fields: Any) -> Outcome:
        """Run the event's hooks; what they add for the model waits for the next request."""
        hooks = self.wanted(event)
        if not hooks:
            return Outcome()
        outcome = await self.dispatcher.fire(hooks, event, self.payload(event, **fields),
                                             cwd=self.cwd(), spent=self.spent, warn=self.warn)
        self._context.extend(f"[hook {hook.name}] {text}" for hook, text in outcome.contexts)
        return outcome

    def fire_later(self, event: HookEvent, **fields: Any) -> None:
        """Fire without waiting (a notification, a run that was cancelled)."""
        if self.wanted(event):
            self.dispatcher.spawn(self.fire(event, **fields))

    def take_context(self) -> str | None:
        """What the hooks said for the model since its last request (then forgotten)."""
        if not self._context:
            return None
        text, self._context = "\n\n".join(self._context), []
        return text

    def resumed(self) -> None:
        """The session was resumed: its ``only_once`` hooks may run again."""
        self.spent.clear()

    # -- the events --------------------------------------------------------------------------
    async def session_start(self, source: str) -> None:
        await self.fire("SessionStart" if source == "startup" else "SessionResume",
                        source=source)

    async def session_end(self, reason: str) -> None:
        await self.fire("SessionEnd", reason=reason)

    async def user_prompt_submit(self, prompt: str) -> Decided | None:
        """The refusal of a prompt (nothing of it is sent or logged), else ``None``."""
        return (await self.fire("UserPromptSubmit", prompt=prompt)).blocked

    async def pre_user_message(self, prompt: str) -> None:
        await self.fire("PreUserMessage", prompt=prompt)

    async def pre_tool_use(self, call: ToolCall) -> ToolHooks:
        outcome = await self.fire("PreToolUse", **_tool_fields(call))
        return ToolHooks(outcome.decided, outcome.updated_input, outcome.updated_by)

    async def post_tool_use(self, call: ToolCall, result: ToolResult) -> None:
        await self.fire("PostToolUse", **_tool_fields(call),
                        tool_result=result.content[:RESULT_CHARS], is_error=result.is_error)

    async def stop(self, stop_reason: str, iterations: int, text: str) -> None:
        await self.fire("Stop", stop_reason=stop_reason, iter=iterations,
                        last_assistant_message=text[:MESSAGE_CHARS])

    async def subagent_stop(self, agent_id: str, agent_type: str, stop_reason: str,
                            iterations: int, text: str) -> None:
        await self.fire("SubagentStop", agent_id=agent_id, agent_type=agent_type,
                        stop_reason=stop_reason, iter=iterations,
                        last_assistant_message=text[:MESSAGE_CHARS])

    async def compacting(self, trigger: str, before_tokens: int, instructions: str) -> None:
        await self.fire("PreCompact", trigger=trigger, before_tokens=before_tokens,
                        custom_instructions=instructions)

    async def compacted(self, trigger: str, before_tokens: int, after_tokens: int) -> None:
        await self.fire("PostCompact", trigger=trigger, before_tokens=before_tokens,
                        after_tokens=after_tokens)

    def for_agent(self, agent_id: str, agent_type: str, transcript_path: Path,
                  cwd: Path | None = None) -> AgentHooks:
        """The hooks a sub-agent's runner fires (:class:`AgentHooks`)."""
        return AgentHooks(self, agent_id, agent_type, transcript_path, cwd)

    def notify(self, kind: str, detail: str) -> None:
        """A ``Notification`` (the user is asked to approve something, a model request
        failed): its hooks run in the background."""
        message = {"approval": f"PseudoClaude needs your approval: {detail}",
                   "stream_error": f"the model request failed: {detail}"}.get(kind, detail)
        self.fire_later("Notification", kind=kind, detail=detail, message=message)


class AgentHooks(SessionHooks):
    """A sub-agent's view of its session's hooks: its tool calls fire the session's
    ``PreToolUse`` and ``PostToolUse`` hooks (a blocking hook blocks a sub-agent's call as it
    blocks the session's), its failed requests ``Notification``; each payload names it. It
    fires nothing else: no ``Stop`` (its session's ``SubagentStop`` fires when it ends), no
    ``PreUserMessage``. ``only_once`` hooks count with the session's; what its hooks add for
    the model goes with the sub-agent's own next request."""

    FIRES: frozenset[str] = frozenset({"PreToolUse", "PostToolUse", "Notification"})

    def __init__(self, parent: SessionHooks, agent_id: str, agent_type: str,
                 transcript_path: Path, cwd: Path | None = None) -> None:
        super().__init__(parent.dispatcher, parent.hooks, session_id=parent.session_id,
                         transcript_path=parent.transcript_path,
                         cwd=(lambda: cwd) if cwd is not None else parent.cwd,
                         mode=parent.mode, warn=parent.warn)
        self.spent = parent.spent
        self.agent_fields = {"agent_id": agent_id, "agent_type": agent_type,
                             "agent_transcript_path": str(transcript_path.absolute())}

    def payload(self, event: HookEvent, **fields: Any) -> dict[str, Any]:
        return super().payload(event, **self.agent_fields, **fields)

    def wanted(self, event: HookEvent) -> list[Hook]:
        return super().wanted(event) if event in self.FIRES else []


def _tool_fields(call: ToolCall) -> dict[str, Any]:
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    return {"tool_name": call.name, "tool_input": arguments, "tool_use_id": call.id}
