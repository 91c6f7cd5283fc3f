"""``run_command{command, args?, timeout?}`` (SPEC §6, §13).

Two forms. ``{command}`` alone is a shell line, run with ``/bin/sh -c`` (pipes, ``&&``, ``cd``,
redirections and variables work, as models trained on other agents write them). ``{command,
args}`` runs the program ``command`` with ``args`` as its argument vector and no shell
(``;``, ``|``, ``$VAR``, globs and quotes are literal characters); ``command`` is looked up on
``PATH`` unless it contains a ``/`` (then it is relative to the workspace). Either way the
command starts in the workspace root (or the session's worktree), stdin is ``/dev/null``, and it
runs in a new session (its own process group, no controlling terminal, so nothing can prompt
on the user's terminal). What may run is the permission engine's decision, part by part.

With a working sandbox (:mod:`pseudoclaude.sandbox`, ``sandbox.enabled``), the command runs
inside ``bwrap``: the workspace and a private ``/tmp`` writable, the rest read-only, secrets
hidden, no network unless ``sandbox.network``. ``sandbox.enabled: true`` without a working
sandbox refuses every command (``sandbox_unavailable``). ``metadata.sandboxed`` says which.

The environment is the server's minus its secrets (:func:`child_environment`): variables named
``ANTHROPIC_*``, ``OPENAI_*``, ``*_API_KEY``, ``*_APIKEY`` or ``*_AUTH_TOKEN`` are dropped.

Output: stdout and stderr are captured *combined*, in the order written (one pipe), decoded as
UTF-8 with invalid bytes replaced. When it exceeds the budget, the first
:data:`HEAD_BYTES` and the last :data:`TAIL_BYTES` are kept around a line
``...[truncated] (N bytes omitted)`` — the end of a build or test log is usually what matters.

``timeout`` is in seconds (default 120, at most 600; more is ``invalid_arguments``). On timeout,
and when the call is cancelled, the whole process group is killed (``SIGKILL``); cancellation
then propagates. When the program exits but a child it left behind keeps the output pipe open,
the group is killed after :data:`EOF_GRACE` seconds.

Result: ``ok`` when the exit status is 0. A non-zero status is ``exit_status`` (content still
holds the output), a timeout is ``timeout``, a missing program ``not_found``, a program that is
not executable ``permission_denied``. Metadata: ``command``, ``args`` (absent for a shell
line), ``shell`` (true for a shell line), ``exit_code`` (negative: killed by that signal;
``null`` when unknown), ``timed_out``, ``duration_ms``, ``output_bytes``, ``truncated``,
``sandboxed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pseudoclaude.agent.tools.base import (
    MAX_CONTENT_BYTES,
    TRUNCATION_MARKER,
    ApprovalClass,
    Param,
    Preview,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
)
from pseudoclaude.redact import without_credentials
from pseudoclaude.sandbox import Sandbox, SandboxUnavailable

SHELL = "/bin/sh"
"""The shell a command line runs with (``-c``)."""
DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 600.0
HEAD_BYTES = 16 * 1024
TAIL_BYTES = MAX_CONTENT_BYTES - HEAD_BYTES - 1024
EOF_GRACE = 1.0
"""Seconds the output pipe may stay open after the program exited."""
_POLL = 0.1
_READ_CHUNK = 64 * 1024
child_environment = without_credentials
"""The environment of a command: the server's without the variables that may hold its
credentials (see the module docstring)."""


class OutputCapture:
    """Keeps the head and the tail of a byte stream, counting what it drops."""

    def __init__(self, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self._head_limit, self._tail_limit = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            excess = len(self.tail) - self._tail_limit
            if excess > 0:
                del self.tail[:excess]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def text(self) -> str:
        if not self.truncated:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        head = bytes(self.head)
        # end the head and start the tail on character boundaries
        head = head[:len(head) - _partial_suffix(head)]
        tail = bytes(self.tail)
        skip = 0
        while skip < min(3, len(tail)) and 0x80 <= tail[skip] <= 0xBF:
            skip += 1
        omitted = self.total - len(head) - (len(tail) - skip)
        return (head.decode("utf-8", "replace")
                + f"\n{TRUNCATION_MARKER} ({omitted} bytes omitted)\n"
                + tail[skip:].decode("utf-8", "replace"))


def _partial_suffix(data: bytes) -> int:
    """How many bytes at the end of ``data`` are an incomplete UTF-8 character."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return 0
        if byte >= 0xC0:  # a lead byte: complete when its sequence fits
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return 0 if back >= need else back
    return 0


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"exited with status {code}"


async def run_process(
    command: str,
    args: list[str] | None,
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
    stdin: bytes | None = None,
) -> ToolOutput:
    """Run one program (``args`` given) or one shell line (``args`` is ``None``) as described
    in the module docstring; ``stdin``: what the program reads (default: nothing)."""
    shell = args is None
    argv = [SHELL, "-c", command] if args is None else [command, *args]
    shown = command if args is None else shlex.join(argv)
    environment = child_environment(env)
    sandboxed = False
    if sandbox is not None:
        try:
            wrapped = await asyncio.to_thread(sandbox.command, argv, cwd, env=environment)
        except SandboxUnavailable as exc:
            raise ToolError("sandbox_unavailable",
                            f"commands are refused: {exc.reason}") from None
        except FileNotFoundError as exc:
            raise ToolError("not_found", f"command not found: {command!r} (no shell: put the "
                            "program in `command` and each argument in `args`, or give the "
                            "whole line in `command` alone)") from exc
        except PermissionError as exc:
            raise ToolError("permission_denied",
                            f"{command!r} is not executable (permission denied)") from exc
        sandboxed = wrapped != argv
        argv = wrapped
    started = time.monotonic()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=environment,
            stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        )
    except FileNotFoundError as exc:
        hint = " (no shell with `args`: put the program in `command` and each argument in " \
            "`args`, or give the whole line in `command` alone)"
        raise ToolError("not_found", f"command not found: {command!r}{hint}") from exc
    except PermissionError as exc:
        raise ToolError("permission_denied",
                        f"{command!r} is not executable (permission denied)") from exc
    except OSError as exc:
        raise ToolError("io_error",
                        f"could not start {command!r}: {exc.strerror or exc}") from exc

    capture = OutputCapture()
    stdout = proc.stdout
    assert stdout is not None

    async def pump() -> None:
        while chunk := await stdout.read(_READ_CHUNK):
            capture.feed(chunk)

    async def supervise() -> None:
        while not pump_task.done():
            if proc.returncode is not None:
                done, _ = await asyncio.wait({pump_task}, timeout=EOF_GRACE)
                if not done:  # a child left behind holds the pipe open
                    _kill_group(proc.pid)
                    await asyncio.wait({pump_task}, timeout=EOF_GRACE)
                return
            await asyncio.wait({pump_task}, timeout=_POLL)
        await proc.wait()

    async def feed() -> None:
        writer = proc.stdin
        if writer is None or stdin is None:
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            writer.write(stdin)
            await writer.drain()
        writer.close()

    pump_task = asyncio.ensure_future(pump())
    feed_task = asyncio.ensure_future(feed())
    timed_out = False
    try:
        try:
            await asyncio.wait_for(supervise(), timeout)
        except TimeoutError:
            timed_out = True
            _kill_group(proc.pid)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), EOF_GRACE)
    except BaseException:  # cancellation included: nothing of the command may outlive it
        _kill_group(proc.pid)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(proc.wait()), EOF_GRACE)
        pump_task.cancel()
        raise
    finally:
        for task in (pump_task, feed_task):
            if not task.done():
                task.cancel()
            with contextlib.suppress(BaseException):
                await task
    code = proc.returncode
    metadata: dict[str, Any] = {
        "command": command, **({"shell": True} if shell else {"args": list(args or [])}),
        "exit_code": code, "timed_out": timed_out,
        "duration_ms": round((time.monotonic() - started) * 1000),
        "output_bytes": capture.total, "truncated": capture.truncated, "sandboxed": sandboxed,
    }
    text = capture.text()
    if timed_out:
        return ToolOutput(text, metadata, "timeout",
                          f"`{shown}` timed out after {timeout:g} seconds and was killed")
    if code != 0:
        status = "did not report an exit status" if code is None else _describe_exit(code)
        return ToolOutput(text, metadata, "exit_status", f"`{shown}` {status}")
    return ToolOutput(text, metadata)


class RunCommand(Tool):
    name: ClassVar[str] = "run_command"
    description: ClassVar[str] = (
        "Run a command in the workspace root and return its combined stdout and stderr and "
        "its exit status. Give a shell line in `command` alone (run with /bin/sh -c: pipes, "
        "`&&`, `cd`, redirections work, e.g. `npm test 2>&1 | tail -20`), or a program in "
        "`command` with its arguments in `args` (no shell). stdin is empty. Killed after "
        "`timeout` seconds (default 120, max 600). A non-zero exit status is reported as an "
        "error, with the output. Each part of a line must be allowed by the permission rules."
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("command", "string", "A shell line; or, with `args`, the program to run "
              "(looked up on PATH, or a path containing `/`, relative to the workspace).",
              required=True, non_empty=True),
        Param("args", "string_array", "The program's arguments, one string each (no shell). "
              "Absent: `command` is a shell line."),
        Param("timeout", "number", "Seconds before the command is killed. Default 120, at "
              "most 600.", exclusive_minimum=0, maximum=MAX_TIMEOUT),
    )
    read_only: ClassVar[bool] = False
    approval_class: ClassVar[ApprovalClass] = "runCommand"

    async def prepare(self, args: dict[str, Any], ctx: ToolContext) -> Preview:
        """The command line (a shell line as given; a program and its arguments quoted as a
        POSIX shell would need them) and the folder."""
        return Preview(command=command_line(args), cwd=str(ctx.paths.workspace))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return await run_process(
            args["command"], args.get("args"), cwd=ctx.paths.workspace,
            timeout=float(args.get("timeout", DEFAULT_TIMEOUT)), sandbox=ctx.sandbox,
        )


def command_line(args: Mapping[str, Any]) -> str:
    """A ``run_command`` call's command as one line (what the user approves)."""
    extra = args.get("args")
    if extra is None:
        return str(args["command"])
    return shlex.join([args["command"], *extra])
