"""The ReAct loop (SPEC §6).

``run(prompt)``: append the user message; build the system prompt once; then up to
``max_iterations`` times: manage the context (Layer 1, then Layer 2 if over the threshold) →
stream a model turn → append it → anchor the estimate → no tool calls: completed (the memory
update is scheduled) → else run the tools and append one result per call, in call order.

Read-only tool calls that follow each other run concurrently, and so do ``agent`` calls (each
sub-agent asks for its own calls); any other call with side effects runs alone, after its
approval. When the user is asked, what they see (a write's diff, a command
line) is computed first; a change that cannot apply fails without asking, and an approved
write applies exactly what was shown (or fails with ``changed``). A tool result that contains
one of the API keys in use has it replaced by ``[redacted]`` before anything sees it.
Cancellation ends the run at once: calls without a result get a ``canceled`` error result, so
the history is valid for the next request and on resume, and ``CancelledError`` propagates to
the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from msgspec import UNSET

from pseudoclaude.agent.approvals import Gate
from pseudoclaude.agent.results import tool_view
from pseudoclaude.agent.tools import Preview, ToolError, ToolRegistry
from pseudoclaude.compact import CompactRuntime
from pseudoclaude.config import MAX_ITERATIONS
from pseudoclaude.conversation import Conversation
from pseudoclaude.events import (
    Emit,
    ErrorEvent,
    StopEvent,
    StopReason,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageUpdate,
    WarningEvent,
)
from pseudoclaude.hooks import Decided, SessionHooks
from pseudoclaude.llm.editor import EditorContext
from pseudoclaude.llm.errors import MaxTokensTruncated, ProviderError, scrub
from pseudoclaude.llm.provider import (
    Provider,
    Retrying,
    TextDelta,
    ToolCallComplete,
    ToolSpec,
    TurnBuilder,
)
from pseudoclaude.llm.types import Message, ToolCall, ToolResult, Usage, error_envelope

UNKNOWN_TOOL_LIMIT = 2
PREVIEW_CHARS = 200
YIELD_EVERY = 0.002  # seconds of streaming between two turns given to the event loop



@dataclass
class RunOutcome:
    stop_reason: StopReason
    text: str = ""
    iterations: int = 0
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    appended: list[Message] = field(default_factory=list)


class Runner:
    def __init__(
        self,
        conversation: Conversation,
        *,
        compact: CompactRuntime,
        provider: Callable[[], Awaitable[Provider]],
        tools: ToolRegistry,
        gate: Gate,
        system_prompt: Callable[[], Awaitable[str]],
        emit: Emit,
        max_iterations: int = MAX_ITERATIONS.default,
        on_completed: Callable[[list[Message]], None] | None = None,
        before_change: Callable[[ToolCall], Awaitable[None]] | None = None,
        after_change: Callable[[ToolCall], Awaitable[None]] | None = None,
        secrets: Sequence[str] = (),
        reminder: Callable[[int], str | None] | None = None,
        environment: Callable[[Provider], Awaitable[str]] | None = None,
        hooks: SessionHooks | None = None,
        inbox: Callable[[], str | None] | None = None,
    ) -> None:
        self.conversation = conversation
        self.compact = compact
        self._provider = provider
        self.tools = tools
        self.gate = gate
        self._system_prompt = system_prompt
        self.emit = emit
        self.max_iterations = max_iterations
        self.on_completed = on_completed
        self.before_change = before_change
        """Called before a tool call that may change files runs (before-images)."""
        self.after_change = after_change
        """Awaited after each tool call that may change files (the checkpoint after it)."""
        self.secrets = [s for s in secrets if s and len(s) >= 8]
        self.reminder = reminder
        """What request number N (from 1) of the run carries after the conversation, never
        logged (the plan reminder, the task list)."""
        self.environment = environment
        """The environment block of the next request (rebuilt for each, never logged)."""
        self.hooks = hooks
        """The session's hooks: PreUserMessage, PreToolUse (before the gate), PostToolUse,
        Stop (every end), Notification (a failed model request)."""
        self.inbox = inbox
        """What came for the model since its last request and belongs to the conversation
        (the notifications of background tasks that ended): appended, as a user message,
        before each request (after the prompt, or after the tool results)."""
        self.result = RunOutcome(stop_reason=StopReason.ERROR)
        self._unrunnable: dict[str, str] = {}
        """The calls of the last turn that cannot run, by id: why (cut off by the output
        limit); each gets a failed result the model reads."""

    def _append(self, message: Message, appended: list[Message]) -> None:
        """Append and remember it for this run.

        Synchronous on purpose: an append (one fsynced line) cannot be interrupted by a
        cancellation half-way, so a tool-call message is never left without its results.
        """
        appended.append(self.conversation.append(message))

    async def run(self, prompt: str, context: EditorContext | None = None) -> RunOutcome:
        """Run to a stop reason. A cancelled run raises ``CancelledError``; what it had done
        by then (text, iterations, usage, stop reason ``canceled``) stays in :attr:`result`."""
        result = self.result = RunOutcome(stop_reason=StopReason.ERROR)
        try:
            await self._run(prompt, context, result)
        except asyncio.CancelledError:
            result.stop_reason = StopReason.CANCELED
            self.emit(StopEvent(StopReason.CANCELED))
            self._stopped_later(result)
            raise
        except Exception as exc:  # e.g. the session log cannot be written: say so, then fail
            self.emit(ErrorEvent(f"the run stopped: {exc}"))
            self.emit(StopEvent(StopReason.ERROR))
            self._stopped_later(result)
            raise
        self.emit(StopEvent(result.stop_reason))
        if self.hooks is not None:
            await self.hooks.stop(result.stop_reason, result.iterations, result.text)
        if result.stop_reason == StopReason.COMPLETED and self.on_completed is not None:
            self.on_completed(list(result.appended))
        return result

    def _stopped_later(self, result: RunOutcome) -> None:
        """The Stop hooks of a run that ended by an exception: nothing waits for them."""
        if self.hooks is not None:
            self.hooks.fire_later("Stop", stop_reason=str(result.stop_reason),
                                  iter=result.iterations, last_assistant_message=result.text)

    async def _run(self, prompt: str, context: EditorContext | None, result: RunOutcome
                   ) -> None:
        appended = result.appended
        if self.hooks is not None:
            await self.hooks.pre_user_message(prompt)
        self._append(Message(role="user", content=prompt, context=context), appended)
        try:
            system = await self._system_prompt()
            provider = await self._provider()
        except ProviderError as exc:  # no provider configured, unknown provider
            self._fail(result, str(exc))
            return
        unknown_in_a_row = 0
        while result.iterations < self.max_iterations:
            result.iterations += 1
            came = self.inbox() if self.inbox is not None else None
            if came:  # joins the request's last user message (the providers merge them)
                self._append(Message(role="user", content=came), appended)
            await self.compact.manage_context()
            if result.iterations > 1:  # an instructions file edited or joined since: now
                system = await self._system_prompt()
            turn = TurnBuilder()
            specs = self.tools.specs()  # (an approved plan changes the mode, and the offer)
            try:
                await self._stream(provider, system, specs, turn, result.iterations)
            except MaxTokensTruncated as exc:
                if turn.text:
                    self._append(Message(role="assistant", content="".join(turn.text)),
                                 appended)
                self._fail(result, str(exc))
                return
            except ProviderError as exc:
                self._fail(result, str(exc))
                return
            message = turn.message()
            self._unrunnable = turn.unrunnable
            if message.content or message.tool_calls:  # an empty answer adds nothing
                message.usage = turn.usage  # stamped on the log line, restores the anchor
                self._append(message, appended)
                self.compact.record_usage(turn.usage)
            if turn.usage is not None:  # after the anchor moved: listeners read the estimate
                u = turn.usage
                result.usage = result.usage.plus(u)
                self.emit(UsageUpdate(u.input_tokens, u.output_tokens, u.cache_read,
                                      u.cache_write))
            if not message.tool_calls:
                result.text = message.content
                result.stop_reason = StopReason.COMPLETED
                return
            unknown_in_a_row = await self._run_tools(message.tool_calls, appended,
                                                     unknown_in_a_row)
            if unknown_in_a_row >= UNKNOWN_TOOL_LIMIT:
                result.stop_reason = StopReason.UNKNOWN_TOOL_LIMIT
                result.text = message.content
                return
        result.stop_reason = StopReason.MAX_ITERATIONS

    def _fail(self, result: RunOutcome, error: str) -> None:
        result.stop_reason = StopReason.ERROR
        result.error = error
        self.emit(ErrorEvent(error))
        if self.hooks is not None:
            self.hooks.notify("stream_error", error)

    async def _stream(self, provider: Provider, system: str, specs: list[ToolSpec],
                      turn: TurnBuilder, round_: int = 1) -> None:
        messages = self.conversation.messages()
        extra = self.reminder(round_) if self.reminder is not None else None
        if extra:  # the last text of the request, outside the cached prefix; never logged
            messages = [*messages, Message(role="user", content=extra)]
        environment = await self.environment(provider) if self.environment is not None else ""
        loop = asyncio.get_running_loop()
        next_yield = loop.time() + YIELD_EVERY
        async with contextlib.aclosing(provider.stream(system, messages, specs,
                                                       environment=environment)) as events:
            async for event in events:
                if loop.time() >= next_yield:
                    # A fast stream never waits on the network: give the loop a turn so the
                    # editor's read-only requests are answered while the answer streams.
                    await asyncio.sleep(0)
                    next_yield = loop.time() + YIELD_EVERY
                turn.add(event)
                if isinstance(event, TextDelta):
                    self.emit(TextEvent(event.text))
                elif isinstance(event, ToolCallComplete):
                    call = event.call
                    self.emit(ToolCallEvent(call.id, call.name, call.arguments))
                elif isinstance(event, Retrying):
                    self.emit(WarningEvent(
                        f"{event.error}; retrying in {event.delay:.1f}s "
                        f"(attempt {event.attempt})", event.attempt))

    # -- tools -------------------------------------------------------------------------------
    async def _run_tools(self, calls: Sequence[ToolCall], appended: list[Message],
                         unknown_in_a_row: int) -> int:
        """Run the calls of one turn; append their results in call order.

        Returns the number of unknown-tool calls in a row so far.
        """
        results: dict[int, ToolResult] = {}
        try:
            i = 0
            while i < len(calls):
                concurrent = self._concurrent_kind(calls[i].name)
                if concurrent is not None:
                    j = i
                    while j < len(calls) and \
                            self._concurrent_kind(calls[j].name) == concurrent:
                        j += 1
                    batch = await asyncio.gather(*(self._execute(c) for c in calls[i:j]))
                    results.update(zip(range(i, j), batch, strict=True))
                    i = j
                else:
                    if self.before_change is not None:
                        await self.before_change(calls[i])
                    results[i] = await self._execute(calls[i])
                    if self.after_change is not None:
                        await self.after_change(calls[i])
                    i += 1
        except asyncio.CancelledError:
            for index, call in enumerate(calls):
                result = results.get(index) or ToolResult(
                    call.id, call.name,
                    error_envelope(call.name, "canceled", "the run was canceled"), True)
                self.conversation.append(Message(role="user", tool_result=result))
            raise
        for index, call in enumerate(calls):
            result = results[index]
            self._append(Message(role="user", tool_result=result), appended)
            unknown_in_a_row = 0 if self.tools.has(call.name) else unknown_in_a_row + 1
        return unknown_in_a_row

    def _concurrent_kind(self, name: str) -> str | None:
        """Calls that run at once with their neighbours of the same kind: ``read`` (no side
        effects), ``agent`` (sub-agents, bounded by ``agents.maxParallel``); ``None``: alone."""
        if self.tools.is_read_only(name):
            return "read"
        if self.tools.is_agent(name):
            return "agent"
        return None

    async def _execute(self, call: ToolCall) -> ToolResult:
        """One call's result (reported), with its PreToolUse and PostToolUse hooks."""
        ran, result = await self._call(call)
        if any(secret in result.content for secret in self.secrets):
            # e.g. a command that printed /proc/<server pid>/environ: never log or send a key
            result = ToolResult(result.call_id, result.name,
                                scrub(result.content, self.secrets), result.is_error)
        self._report(result)
        if self.hooks is not None:
            await self.hooks.post_tool_use(ran, result)
        return result

    async def _call(self, call: ToolCall) -> tuple[ToolCall, ToolResult]:
        """The call as it ran (a PreToolUse hook may change its arguments) and its result."""
        if call.id in self._unrunnable:
            invalid: ToolResult | None = ToolResult(call.id, call.name, error_envelope(
                call.name, "invalid_arguments", self._unrunnable[call.id]), is_error=True)
        else:  # unknown tool, bad arguments: nobody is asked
            invalid = self.tools.validate(call)
        if invalid is not None:
            return call, invalid
        decided: Decided | None = None
        if self.hooks is not None:
            ruled = await self.hooks.pre_tool_use(call)
            decided = ruled.decided
            if decided is not None and decided.decision == "deny":
                return call, self.tools.error_result(call, ToolError(
                    "hook_blocked", decided.message(), metadata={"hook": decided.hook}))
            if ruled.updated_input is not None:  # checked again, as the model's would be
                call = ToolCall(call.id, call.name, ruled.updated_input)
                invalid = self.tools.validate(call)
                if invalid is not None:
                    return call, invalid
        approval = self.tools.approval_class(call.name)
        shown: list[Preview] = []  # what the user approved, when they were asked

        async def prepare() -> Preview:
            preview = await self.tools.prepare(call)
            shown.append(preview)
            return preview

        mcp = self.tools.mcp_tool(call.name)
        try:
            denial = await self.gate.check(
                self.tools.as_command(call), approval, prepare,
                mcp=(mcp.server, mcp.tool) if mcp is not None else None,
                read_only=mcp.read_only_hint if mcp is not None else False, hook=decided)
        except ToolError as exc:  # the change cannot apply: nobody was asked
            return call, self.tools.error_result(call, exc)
        if denial is not None:
            return call, self.tools.error_result(call, ToolError(
                denial.error_type, denial.reason,
                metadata={"source": denial.source,
                          **({"rule": denial.rule} if denial.rule else {})}))
        return call, await self.tools.execute(call, shown[-1] if shown else None)

    def _report(self, result: ToolResult) -> None:
        size = len(result.content.encode("utf-8", "surrogatepass"))
        view = tool_view(result.content, result.is_error)
        self.emit(ToolResultEvent(result.call_id, result.name, result.is_error, size,
                                  result.content[:PREVIEW_CHARS],
                                  UNSET if view.error is None else view.error,
                                  view.status, view.preview))


def tool_error(content: str) -> str | None:
    """The ``error`` of a failed tool's JSON envelope (SPEC §6); None when there is none."""
    try:
        envelope = json.loads(content)
    except ValueError:
        return None
    error = envelope.get("error") if isinstance(envelope, dict) else None
    return error if isinstance(error, str) and error else None


def summarize_arguments(arguments: object, limit: int = 120) -> str:
    """One line for a terminal or a log."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments,
                                                                    ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."
