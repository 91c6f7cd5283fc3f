"""What a hook is: its event, its condition, its action and how it runs (docs/hooks.md).

A :class:`Hook` is read from a ``hooks.yaml`` file or the ``hooks`` setting
(:mod:`pseudoclaude.hooks.config`); a :class:`Problem` is an entry that could not be read, named
by its file and line. Nothing here runs anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from pseudoclaude.hooks.conditions import Condition

HookEvent = Literal["SessionStart", "SessionResume", "SessionEnd", "UserPromptSubmit",
                    "PreUserMessage", "PreToolUse", "PostToolUse", "PreCompact", "PostCompact",
                    "Stop", "SubagentStop", "Notification"]
EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
BLOCKING: frozenset[str] = frozenset({"UserPromptSubmit", "PreToolUse"})
"""Events whose hooks may stop what is about to happen (and so never run ``async``)."""
CONTEXT_FROM_STDOUT: frozenset[str] = frozenset({"UserPromptSubmit", "SessionStart",
                                                 "SessionResume"})
"""Events whose hooks' plain standard output (not JSON) reaches the model as context, as in
Claude Code."""

Source = Literal["user", "workspace", "settings"]
SOURCES: tuple[Source, ...] = get_args(Source)
Status = Literal["active", "needsApproval", "denied", "invalid"]

DEFAULT_TIMEOUT = 30.0
"""Seconds a hook may run (``timeout`` changes it)."""
MAX_TIMEOUT = 600.0


@dataclass(frozen=True, slots=True)
class ShellAction:
    """``{type: shell, command}``: ``/bin/sh -c command`` with the payload on stdin."""

    command: str

    def describe(self) -> str:
        return f"shell: {self.command}"


@dataclass(frozen=True, slots=True)
class HttpAction:
    """``{type: http, url, method?, headers?, body?}``: the payload (or ``body``, a template
    over it) sent to ``url``."""

    url: str
    method: str = "POST"
    headers: Mapping[str, str] = field(default_factory=dict)
    body: str | None = None

    def describe(self) -> str:
        return f"http: {self.method} {self.url}"


@dataclass(frozen=True, slots=True)
class PromptAction:
    """``{type: prompt, text}``: ``text`` reaches the model with its next request."""

    text: str

    def describe(self) -> str:
        return f"prompt: {self.text}"


Action = ShellAction | HttpAction | PromptAction
ACTION_TYPES = ("shell", "http", "prompt")


@dataclass(frozen=True, slots=True)
class Hook:
    """One hook, as its file defines it."""

    name: str
    event: HookEvent
    action: Action
    source: Source
    origin: str
    """Where it is defined: a file's path, or ``settings``."""
    line: int | None = None
    condition: Condition | None = None
    only_once: bool = False
    """At most once per session (again after a resume)."""
    run_async: bool = False
    """In the background: nothing waits for it and its answer is ignored."""
    timeout: float = DEFAULT_TIMEOUT

    def describe(self) -> str:
        """Its action in one line, with its flags (as ``/hooks`` and approvals show it)."""
        flags = [flag for flag, on in (("only_once", self.only_once),
                                       ("async", self.run_async)) if on]
        if self.timeout != DEFAULT_TIMEOUT:
            flags.append(f"timeout={self.timeout:g}s")
        text = " ".join(self.action.describe().split())
        return text + (f" [{', '.join(flags)}]" if flags else "")


@dataclass(frozen=True, slots=True)
class Problem:
    """An entry (or a whole file) that could not be read: the others still load."""

    origin: str
    line: int | None
    message: str
    name: str = ""
    """The hook's name when the entry has one (else it is named by its place)."""
    event: str = ""
    source: Source = "user"

    def text(self) -> str:
        """``<file>:<line>: <why>``."""
        where = f"{self.origin}:{self.line}" if self.line is not None else self.origin
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class Loaded:
    """What one source holds: its hooks and its problems."""

    hooks: tuple[Hook, ...] = ()
    problems: tuple[Problem, ...] = ()
