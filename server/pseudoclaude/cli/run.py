"""``pseudoclaude run``: the agent in a terminal (SPEC §9).

The model's text (of every turn) streams to stdout; tool calls, compaction and memory events
are one line each on stderr (so ``> answer.md`` keeps the text without them; the final answer
alone is the ``text`` of the ``--json`` result line); provider retries are
shown only with ``--verbose``. With ``--json`` every event is a JSON object on its own stdout
line and the last line is the result (the ``pseudoclaude/run`` result with ``"kind":
"result"``), whatever the outcome: completed, error, limit or canceled.

Exit codes: 0 ``completed``, 1 failure (one line on stderr), 3 ``max_iterations`` or
``unknown_tool_limit``, 130 canceled (Ctrl-C).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pseudoclaude.api import methods
from pseudoclaude.api import protocol as p
from pseudoclaude.cli.approver import TerminalApprover
from pseudoclaude.cli.state import settle_mcp_approvals
from pseudoclaude.config import Settings
from pseudoclaude.events import (
    CompactEvent,
    ErrorEvent,
    Event,
    MemoryEvent,
    ModeEvent,
    StopReason,
    TaskEvent,
    TasksEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
)
from pseudoclaude.words import plural
from pseudoclaude.workspace import (
    Hooks,
    RunOutcome,
    Workspace,
    describe_size,
    summarize_arguments,
)

EXIT_OK, EXIT_FAILURE, EXIT_LIMIT, EXIT_CANCELED = 0, 1, 3, 130
EXIT_CODES = {StopReason.COMPLETED: EXIT_OK, StopReason.MAX_ITERATIONS: EXIT_LIMIT,
              StopReason.UNKNOWN_TOOL_LIMIT: EXIT_LIMIT, StopReason.CANCELED: EXIT_CANCELED,
              StopReason.ERROR: EXIT_FAILURE, StopReason.BLOCKED: EXIT_FAILURE}


def silence(stream: TextIO) -> None:
    """Point a closed pipe's file descriptor at the null device, so that what is still
    buffered (and Python's flush at exit) goes nowhere instead of raising BrokenPipeError."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, stream.fileno())
        finally:
            os.close(null)
    except (OSError, ValueError):
        pass


@dataclass
class Output:
    """Writes to stdout that end quietly when the reader closes it (``| head -1``): the first
    BrokenPipeError silences the stream and calls ``on_closed`` (the run stops); later writes,
    such as the background memory update's event, are dropped."""

    out: TextIO
    closed: bool = False
    on_closed: Callable[[], object] | None = None

    def put(self, text: str) -> None:
        if self.closed:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:
            self.closed = True
            silence(self.out)
            if self.on_closed is not None:
                self.on_closed()


def short_id(agent_id: str) -> str:
    """A sub-agent's id as the terminal shows it: six hex digits (``agent-65f97a…`` ->
    ``65f97a``); ``--json`` has the whole id."""
    return agent_id.removeprefix("agent-")[:6]


@dataclass
class TerminalPrinter(Output):
    """Human output: the answer on ``out``, everything else on ``err``."""

    err: TextIO = sys.stderr
    verbose: bool = False
    _mid_line: bool = False
    errors: list[str] = field(default_factory=list)

    def __call__(self, session_id: str, event: Event) -> None:
        sub = isinstance(event.agent_id, str) and not isinstance(event, TaskEvent)
        if isinstance(event, ErrorEvent) and not sub:
            self.errors.append(event.message)
        if isinstance(event, TextEvent):
            if sub:  # a sub-agent's text is its answer to the agent, not the user's answer
                return
            self.put(event.delta)
            self._mid_line = not event.delta.endswith("\n")
            return
        line = self.line(event)
        if line is None or (self._is_retry(event) and not self.verbose):
            return
        if sub:  # under its agent call, named (several may run at once)
            line = f"  | {short_id(str(event.agent_id))} {line}"
        if self._mid_line:
            self.put("\n")
            self._mid_line = False
        self.err.write(line + "\n")
        self.err.flush()

    @staticmethod
    def _is_retry(event: Event) -> bool:
        return isinstance(event, WarningEvent) and isinstance(event.attempt, int)

    def finish(self) -> None:
        if self._mid_line:
            self.put("\n")
            self._mid_line = False

    @staticmethod
    def line(event: Event) -> str | None:
        """The stderr line of an event (None: not shown)."""
        if isinstance(event, ToolCallEvent):
            return f"> {event.name} {summarize_arguments(event.arguments)}"
        if isinstance(event, ToolResultEvent):
            status = "error" if event.is_error else "ok"
            detail = f": {event.error}" if isinstance(event.error, str) else ""
            return f"  {status} ({describe_size(event.bytes)}){detail}"
        if isinstance(event, CompactEvent):
            what = (f"{plural(event.offloaded, 'large tool result')} saved to files"
                    if event.layer == 1
                    else "older context summarised")
            return (f"[compact] {what}: {event.before_tokens:,} -> {event.after_tokens:,} "
                    "estimated tokens")
        if isinstance(event, MemoryEvent):
            if event.status == "failed":
                return f"[memory] update failed: {event.error}"
            changes = ", ".join(f"{c.action} {c.level}/{c.filename}"
                                for c in event.changes) or "no change"
            return f"[memory] {event.status}: {changes}"
        if isinstance(event, TasksEvent):
            if not event.tasks:
                return "[tasks] cleared"
            done = sum(1 for t in event.tasks if t.status == "completed")
            now = next((t.content for t in event.tasks if t.status == "in_progress"), None)
            return f"[tasks] {done}/{len(event.tasks)} done" + (f"; now: {now}" if now else "")
        if isinstance(event, ModeEvent):
            return f"[mode] {event.mode}"
        if isinstance(event, TaskEvent):
            who = event.name if isinstance(event.name, str) and event.name else \
                event.description
            return (f"[task {short_id(event.task_id)}] {event.subagent_type} {event.status}: "
                    f"{who}")
        if isinstance(event, WarningEvent):
            return f"warning: {event.message}"
        if isinstance(event, ErrorEvent):  # a failure: the prefix of every other one
            return f"pseudoclaude: {event.message}"
        return None


@dataclass
class JsonPrinter(Output):
    def __call__(self, session_id: str, event: Event) -> None:
        self.write(p.event_params(None, session_id, event))

    def write(self, value: Any) -> None:
        self.put(p.encode_line(value) + "\n")


def result_line(result: p.RunResult) -> dict[str, Any]:
    """The last ``--json`` line: the ``pseudoclaude/run`` result with ``"kind": "result"``."""
    return {"kind": "result", **p.to_wire(result)}


def canceled_result(workspace: Workspace) -> p.RunResult:
    """What a cancelled run had done (its runner keeps it), as a run result."""
    done = workspace.last_outcome() or RunOutcome(StopReason.CANCELED)
    done.stop_reason = StopReason.CANCELED
    return methods.run_result(workspace.session_id or "", done)


async def run_in_terminal(root: Path, settings: Settings, prompt: str, session: str,
                          as_json: bool, verbose: bool = False, worktree: bool = False,
                          mode: str | None = None) -> int:
    printer: JsonPrinter | TerminalPrinter = (
        JsonPrinter(sys.stdout) if as_json
        else TerminalPrinter(sys.stdout, err=sys.stderr, verbose=verbose))
    workspace = Workspace(root, settings, approver=TerminalApprover(),
                          hooks=Hooks(events=printer))
    if worktree:
        try:
            made = await methods.call(workspace, p.SESSIONS_NEW, {"worktree": True})
        except BaseException:
            await workspace.close()
            raise
        assert isinstance(made, p.NewSessionResult) and made.worktree is not None
        session = made.session_id
        sys.stderr.write(f"pseudoclaude: session {session} works in {made.worktree.path} "
                         f"(branch {made.worktree.branch})\n")
    try:  # the permission mode, then the MCP servers' questions, before the run streams
        if mode is not None:
            await methods.call(workspace, p.MODE, {"mode": mode} if session == "new" else
                               {"mode": mode, "sessionId": session})
        await settle_mcp_approvals(workspace)
    except BaseException:
        await workspace.close()
        raise
    run = asyncio.ensure_future(methods.call(workspace, p.RUN, {"prompt": prompt,
                                                                "sessionId": session}))
    printer.on_closed = run.cancel  # stdout closed (| head): nobody reads the rest
    try:
        try:
            result = await run
        except asyncio.CancelledError:
            if printer.closed:  # a quiet end, not a Ctrl-C
                return EXIT_OK
            if isinstance(printer, JsonPrinter) and workspace.session_id:
                printer.write(result_line(canceled_result(workspace)))
            raise
    finally:
        await workspace.close()
    assert isinstance(result, p.RunResult)
    stop = StopReason(result.stop_reason)
    if isinstance(printer, JsonPrinter):
        printer.write(result_line(result))
    else:
        printer.finish()
        error = result.error if isinstance(result.error, str) else None
        if stop != StopReason.COMPLETED and error not in printer.errors:
            reason = error or stop.replace("_", " ")
            sys.stderr.write(f"pseudoclaude: run stopped: {reason} "
                             f"(session {result.session_id})\n")
    return EXIT_CODES[stop]


def run_command(root: Path, settings: Settings, prompt: str, session: str,
                as_json: bool, verbose: bool = False, *, worktree: bool = False,
                mode: str | None = None) -> int:
    try:
        return asyncio.run(run_in_terminal(root, settings, prompt, session, as_json, verbose,
                                           worktree, mode))
    except KeyboardInterrupt:
        sys.stderr.write("\npseudoclaude: canceled\n")
        return EXIT_CANCELED
