"""The environment block: what the model is told about where and when it works.

Rebuilt for every model request and sent after the cached prefix (a second system block
without a cache marker for Anthropic, a second system message for OpenAI-compatible servers),
never logged: the date, the branch and the git status change, the conversation does not.

    Runtime environment:
    - working directory: /home/me/project
    - platform: linux/x86_64
    - date: 2026-12-03
    - git status: 2 changed files
    - branch: main
    - version: 0.13.0
    - provider: anthropic
    - model: claude-sonnet-4-5
    - mode: default

A value that cannot be known reads ``unavailable``. ``git`` gets :data:`GIT_TIMEOUT` seconds
in all (a huge or slow repository must not hold up the request); it runs without the user's
git configuration, hooks or prompts, read-only (``GIT_OPTIONAL_LOCKS=0``).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import os
import platform
import shutil
from dataclasses import dataclass
from pathlib import Path

HEADING = "Runtime environment:"
UNAVAILABLE = "unavailable"
GIT_TIMEOUT = 0.3
"""Seconds ``git status`` and ``git rev-parse`` get together."""


@dataclass(frozen=True)
class Environment:
    """The values of the block (all strings as the model reads them)."""

    working_directory: str
    platform: str
    date: str
    git_status: str
    branch: str
    version: str
    provider: str
    model: str
    mode: str

    def render(self) -> str:
        lines = [
            ("working directory", self.working_directory), ("platform", self.platform),
            ("date", self.date), ("git status", self.git_status), ("branch", self.branch),
            ("version", self.version), ("provider", self.provider), ("model", self.model),
            ("mode", self.mode),
        ]
        return "\n".join([HEADING, *(f"- {name}: {value or UNAVAILABLE}"
                                     for name, value in lines)])


def platform_name() -> str:
    """``linux/x86_64``, ``darwin/arm64``, ``windows/AMD64`` (system/machine)."""
    return f"{platform.system().lower() or UNAVAILABLE}/{platform.machine() or UNAVAILABLE}"


def today() -> str:
    """The date in the server's local time zone, ``YYYY-MM-DD``."""
    return datetime.datetime.now().astimezone().date().isoformat()


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    return env


async def _git(root: Path, *args: str) -> str | None:
    """``git args`` in ``root``: its stdout, or ``None`` (no git, not a repository, an error)."""
    command = shutil.which("git")
    if command is None:
        return None
    try:
        process = await asyncio.create_subprocess_exec(
            command, "-c", f"core.hooksPath={os.devnull}", "-c", "core.quotepath=off", *args,
            cwd=root, env=_git_env(), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    except OSError:
        return None
    try:
        out, _ = await process.communicate()
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise
    return out.decode("utf-8", "replace") if process.returncode == 0 else None


async def git_facts(root: Path, timeout: float = GIT_TIMEOUT) -> tuple[str, str]:
    """``(git status, branch)`` of ``root``: ``clean`` or ``<n> changed files`` (``1 changed
    file``), and the branch name (``detached at <sha>`` without one); ``unavailable`` for
    what ``git`` could not say within ``timeout``."""
    async def both() -> tuple[str | None, str | None]:
        return await asyncio.gather(
            _git(root, "status", "--porcelain", "--untracked-files=normal"),
            _git(root, "rev-parse", "--abbrev-ref", "HEAD"))

    try:
        status, branch = await asyncio.wait_for(both(), timeout)
    except TimeoutError:
        return UNAVAILABLE, UNAVAILABLE
    if status is None:
        changed = UNAVAILABLE
    else:
        n = len([line for line in status.splitlines() if line.strip()])
        changed = "clean" if n == 0 else f"{n} changed file{'' if n == 1 else 's'}"
    name = (branch or "").strip()
    if name == "HEAD":
        sha = await _short_head(root, timeout)
        name = f"detached at {sha}" if sha else UNAVAILABLE
    return changed, name or UNAVAILABLE


async def _short_head(root: Path, timeout: float) -> str:
    try:
        out = await asyncio.wait_for(_git(root, "rev-parse", "--short", "HEAD"), timeout)
    except TimeoutError:
        return ""
    return (out or "").strip()


async def environment(root: Path, *, version: str, provider: str, model: str, mode: str
                      ) -> Environment:
    """The block's values now, for a session working in ``root``."""
    status, branch = await git_facts(root)
    return Environment(str(root), platform_name(), today(), status, branch, version, provider,
                       model, mode)
