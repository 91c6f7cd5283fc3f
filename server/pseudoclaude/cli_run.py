"""``pseudoclaude run``: the agent in a terminal (SPEC §9).

The answer streams to stdout; tool calls, compaction and memory events are one line each on
stderr (so ``pseudoclaude run ... > answer.md`` keeps only the answer). With ``--json`` every
event is a JSON object on its own stdout line and the last line is the result.

Exit codes: 0 ``completed``, 1 failure (one line on stderr), 3 ``max_iterations`` or
``unknown_tool_limit``, 130 canceled (Ctrl-C).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pseudoclaude.agent.approvals import TerminalApprover
from pseudoclaude.agent.runner import (
    CANCELED,
    COMPLETED,
    MAX_ITERATIONS,
    UNKNOWN_TOOL_LIMIT_REASON,
    RunResult,
    summarize_arguments,
)
from pseudoclaude.config import Settings
from pseudoclaude.events import (
    CompactEvent,
    ErrorEvent,
    Event,
    MemoryEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
)
from pseudoclaude.session.format import describe_size
from pseudoclaude.workspace import Workspace

EXIT_OK, EXIT_FAILURE, EXIT_LIMIT, EXIT_CANCELED = 0, 1, 3, 130
_ERROR = re.compile(r'"error":"((?:[^"\\]|\\.)*)"')


@dataclass
class TerminalPrinter:
    """Human output: the answer on ``out``, everything else on ``err``."""

    out: TextIO
    err: TextIO
    _mid_line: bool = False
    errors: list[str] = field(default_factory=list)

    def __call__(self, session_id: str, event: Event) -> None:
        if isinstance(event, ErrorEvent):
            self.errors.append(event.message)
        if isinstance(event, TextEvent):
            self.out.write(event.delta)
            self.out.flush()
            self._mid_line = not event.delta.endswith("\n")
            return
        line = self._line(event)
        if line is None:
            return
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False
        self.err.write(line + "\n")
        self.err.flush()

    def finish(self) -> None:
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False

    @staticmethod
    def _line(event: Event) -> str | None:
        if isinstance(event, ToolCallEvent):
            return f"> {event.name} {summarize_arguments(event.arguments)}"
        if isinstance(event, ToolResultEvent):
            status = "error" if event.is_error else "ok"
            match = _ERROR.search(event.preview) if event.is_error else None
            detail = f": {match.group(1)}" if match else ""
            return f"  {status} ({describe_size(event.bytes)}){detail}"
        if isinstance(event, CompactEvent):
            what = (f"{event.offloaded} large tool result(s) saved to files" if event.layer == 1
                    else "older context summarised")
            return (f"[compact] {what}: {event.before_tokens:,} -> {event.after_tokens:,} "
                    "estimated tokens")
        if isinstance(event, MemoryEvent):
            if event.status == "failed":
                return f"[memory] update failed: {event.error}"
            changes = ", ".join(f"{c['action']} {c['level']}/{c['filename']}"
                                for c in event.changes) or "no change"
            return f"[memory] {event.status}: {changes}"
        if isinstance(event, WarningEvent):
            return f"warning: {event.message}"
        if isinstance(event, ErrorEvent):
            return f"error: {event.message}"
        return None


@dataclass
class JsonPrinter:
    out: TextIO

    def __call__(self, session_id: str, event: Event) -> None:
        self.out.write(json.dumps({"sessionId": session_id, **event.payload()},
                                  ensure_ascii=False, default=str) + "\n")
        self.out.flush()


def result_payload(session_id: str, result: RunResult) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "kind": "result", "sessionId": session_id, "stopReason": result.stop_reason,
        "text": result.text, "iterations": result.iterations,
        "usage": {"inputTokens": result.usage.input_tokens,
                  "outputTokens": result.usage.output_tokens},
    }
    if result.error:
        payload["error"] = result.error
    return payload


def exit_code(stop_reason: str) -> int:
    if stop_reason == COMPLETED:
        return EXIT_OK
    if stop_reason in (MAX_ITERATIONS, UNKNOWN_TOOL_LIMIT_REASON):
        return EXIT_LIMIT
    if stop_reason == CANCELED:
        return EXIT_CANCELED
    return EXIT_FAILURE


async def run_in_terminal(root: Path, settings: Settings, prompt: str, session: str,
                          as_json: bool) -> int:
    printer = JsonPrinter(sys.stdout) if as_json else TerminalPrinter(sys.stdout, sys.stderr)
    workspace = Workspace(root, settings, approver=TerminalApprover(), events=printer)
    try:
        session_id, result = await workspace.run(prompt, session)
    finally:
        await workspace.close()
    if as_json:
        sys.stdout.write(json.dumps(result_payload(session_id, result), ensure_ascii=False)
                         + "\n")
    else:
        assert isinstance(printer, TerminalPrinter)
        printer.finish()
        if result.stop_reason != COMPLETED and result.error not in printer.errors:
            reason = result.error or result.stop_reason.replace("_", " ")
            sys.stderr.write(f"pseudoclaude: run stopped: {reason} (session {session_id})\n")
    return exit_code(result.stop_reason)


def run_command(root: Path, settings: Settings, prompt: str, session: str,
                as_json: bool) -> int:
    try:
        return asyncio.run(run_in_terminal(root, settings, prompt, session, as_json))
    except KeyboardInterrupt:
        sys.stderr.write("\npseudoclaude: canceled\n")
        return EXIT_CANCELED
