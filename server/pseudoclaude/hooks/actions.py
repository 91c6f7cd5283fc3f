"""Running one hook's action (docs/hooks.md "Actions").

* ``shell``: ``/bin/sh -c <command>`` in its own process group, in the workspace folder, with
  the payload as JSON (sorted keys, one line) on standard input and ``CLAUDE_PROJECT_DIR`` /
  ``PSEUDOCLAUDE_PROJECT_DIR`` naming the workspace. At its timeout (or when what waits for it
  is cancelled) the whole process group is killed. What it prints is kept up to
  :data:`OUTPUT_LIMIT` bytes per stream.
* ``http``: the payload as a JSON body (or ``body``, a template whose ``{{.field.path}}``
  placeholders take payload values, ``{{.}}`` the whole payload) to ``url``; a status outside
  2xx is a failure; the response body is the hook's answer.
* ``prompt``: its text, as if the hook had printed it (nothing runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pseudoclaude.hooks.conditions import field_text
from pseudoclaude.hooks.model import Hook, HttpAction, PromptAction, ShellAction

OUTPUT_LIMIT = 1 << 20
"""Bytes of standard output (and of standard error) kept of one hook."""
SHELL = "/bin/sh"
_PLACEHOLDER = re.compile(r"\{\{\s*\.([A-Za-z0-9_.-]*)\s*\}\}")


@dataclass(frozen=True, slots=True)
class Ran:
    """How one action ended: ``ok`` (it ran; ``exit_code`` says how it exited), ``failed``
    (it could not run, or an HTTP error: ``error`` says why) or ``timeout``."""

    status: Literal["ok", "failed", "timeout"]
    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    error: str = ""


def payload_json(payload: Mapping[str, Any]) -> str:
    """The payload as a hook reads it: JSON with sorted keys, on one line."""
    return json.dumps(payload, ensure_ascii=False, sort_keys=True, default=str)


async def run_action(hook: Hook, payload: Mapping[str, Any], *, cwd: Path,
                     env: Mapping[str, str]) -> Ran:
    action = hook.action
    if isinstance(action, PromptAction):
        return Ran("ok", stdout=action.text)
    if isinstance(action, ShellAction):
        return await run_shell(action.command, payload_json(payload) + "\n", cwd=cwd, env=env,
                               timeout=hook.timeout)
    assert isinstance(action, HttpAction)
    return await run_http(action, payload, timeout=hook.timeout)


async def run_shell(command: str, stdin: str, *, cwd: Path, env: Mapping[str, str],
                    timeout: float) -> Ran:
    """``/bin/sh -c command`` in a new process group (killed whole at ``timeout``, and when
    the caller is cancelled)."""
    try:
        process = await asyncio.create_subprocess_exec(
            SHELL, "-c", command, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            cwd=cwd if cwd.is_dir() else None, env=dict(env), start_new_session=True)
    except OSError as exc:
        return Ran("failed", error=f"cannot start {SHELL}: {exc.strerror or exc}")
    try:
        async with asyncio.timeout(timeout):
            _, out, err = await asyncio.gather(
                _feed(process, stdin.encode("utf-8", "surrogatepass")),
                _read(process.stdout), _read(process.stderr))
            code = await process.wait()
    except TimeoutError:
        kill_group(process.pid)
        await _reap(process)
        return Ran("timeout")
    except BaseException:  # cancelled: nothing may outlive what waited for it
        kill_group(process.pid)
        await _reap(process)
        raise
    return Ran("ok", code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


async def _reap(process: asyncio.subprocess.Process) -> None:
    """After the kill: the process waited for and its pipes read to their end (bounded), so
    nothing of it is left open."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(2):
            await asyncio.gather(process.wait(), _read(process.stdout), _read(process.stderr))


def kill_group(pid: int) -> None:
    """SIGKILL to the process group a hook's shell leads."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _feed(process: asyncio.subprocess.Process, data: bytes) -> None:
    stdin = process.stdin
    if stdin is None:
        return
    try:
        stdin.write(data)
        await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the hook does not read its input: fine
    finally:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            stdin.close()


async def _read(stream: asyncio.StreamReader | None) -> bytes:
    """Everything a stream gives, the first :data:`OUTPUT_LIMIT` bytes kept."""
    if stream is None:
        return b""
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < OUTPUT_LIMIT:
            kept += chunk[:OUTPUT_LIMIT - len(kept)]
    return bytes(kept)


async def run_http(action: HttpAction, payload: Mapping[str, Any], *, timeout: float) -> Ran:
    import httpx2  # the SDKs' HTTP client, imported when an http hook first runs

    body = payload_json(payload) if action.body is None else render(action.body, payload)
    headers = dict(action.headers)
    if not any(name.lower() == "content-type" for name in headers):
        headers["Content-Type"] = "application/json"
    try:
        async with asyncio.timeout(timeout), httpx2.AsyncClient(timeout=timeout) as client:
            response = await client.request(action.method, action.url, headers=headers,
                                            content=body.encode("utf-8"))
            text = response.text[:OUTPUT_LIMIT]
    except (TimeoutError, httpx2.TimeoutException):
        return Ran("timeout")
    except httpx2.HTTPError as exc:
        return Ran("failed", error=f"{action.method} {action.url} failed: "
                                   f"{type(exc).__name__}: {exc}")
    if not 200 <= response.status_code < 300:
        return Ran("failed", error=f"{action.method} {action.url} answered "
                                   f"{response.status_code}", stdout=text)
    return Ran("ok", stdout=text)


def render(template: str, payload: Mapping[str, Any]) -> str:
    """``{{.tool_input.path}}`` placeholders replaced by payload values; ``{{.}}`` by the
    whole payload as JSON."""
    def value(found: re.Match[str]) -> str:
        path = found.group(1)
        return payload_json(payload) if path == "" else field_text(payload, path)

    return _PLACEHOLDER.sub(value, template)

