"""Approvals: a policy per tool class, an asynchronous approver, and the gate (SPEC §6, §8).

Tool classes: ``write`` (``write_file``, ``edit_file``), ``runCommand`` (``run_command``) and
``none`` (read-only tools, never gated). The policy gives each class ``allow``, ``ask`` or
``deny`` (settings ``approvals.write``, default ``allow``; ``approvals.runCommand``, default
``ask``).

The :class:`Gate` decides each call: ``allow`` proceeds; ``deny`` refuses without asking;
``ask`` asks the :class:`Approver` unless the user already chose "allow for this session" for
that *class* (one "allow for this session" on a write covers every later write and edit of the
session; on a command, every later command). Before asking, the gate gets what the user must
see from the caller's ``prepare`` (SPEC §11: a write's path, ``before`` and ``after``; a
command line and its folder) into the :class:`ApprovalRequest`; a change that cannot apply
fails there and nobody is asked. The memory lives in the gate: make a new gate
(or call :meth:`Gate.reset`) for a new session. Asks are serialized, so two calls never prompt
at once. The approver's answer: ``allow_once``, ``allow_session`` or ``deny``; ``None`` means
the request was dismissed (an editor's ``showMessageRequest`` answered ``null``) and is a
denial, as is any failure of the approver (:class:`ApprovalUnavailable` carries the reason
verbatim, other exceptions are reported as a failure). ``asyncio.CancelledError`` propagates.

Each front end provides its approver: the LSP server's asks with ``pseudoclaude/approve`` or
``window/showMessageRequest``, the ACP agent's with ``session/request_permission``, the CLI's
on the terminal (``pseudoclaude.cli.approver``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from pseudoclaude.agent.tools.base import ApprovalClass, Preview
from pseudoclaude.llm.types import ToolCall
from pseudoclaude.names import plural

if TYPE_CHECKING:
    from pseudoclaude.config import Settings

Decision = Literal["allow_once", "allow_session", "deny"]
Policy = Literal["allow", "ask", "deny"]
POLICIES: tuple[str, ...] = get_args(Policy)
DECISIONS: tuple[str, ...] = get_args(Decision)
SETTING_NAMES: dict[str, str] = {"write": "approvals.write", "runCommand": "approvals.runCommand",
                                 "mcp": "approvals.mcp"}
"""The setting that governs each gated class."""
_SUMMARY_CHARS = 300


class ApprovalUnavailable(Exception):
    """Raised by an approver that cannot ask; the message is the denial reason, verbatim."""


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What the user is asked to approve.

    ``summary`` is one line for a prompt (``run_command: git status --short``);
    ``arguments`` are the call's arguments as the model sent them. What the user must see
    (SPEC §11 "Diff approvals"), when the gate could compute it: for a write, ``path``
    (relative to the workspace), ``before`` (the whole file text without the change, ``""``
    for a new file) and ``after`` (with it); for a command, ``command`` (the command line)
    and ``cwd`` (the folder it runs in).
    """

    tool: str
    arguments: Any
    summary: str
    approval_class: ApprovalClass = "none"
    call_id: str = ""
    path: str | None = None
    before: str | None = None
    after: str | None = None
    command: str | None = None
    cwd: str | None = None
    server: str | None = None
    """The MCP server (``mcp``: whose tool ``tool`` is, by its own name; ``mcpServer``: the
    server to start, with its command line in ``command`` or its ``url``)."""
    url: str | None = None
    rules: tuple[str, ...] = ()
    """``permissions``: what the folder's settings file asks for, one line each."""
    session_id: str | None = None
    """The session whose run asks (a question when a folder opens belongs to none)."""

    @classmethod
    def of(cls, call: ToolCall, approval_class: ApprovalClass,
           preview: Preview | None = None, mcp: tuple[str, str] | None = None
           ) -> ApprovalRequest:
        """``mcp``: ``(server, tool)`` of an MCP tool's call."""
        shown = preview or Preview()
        if mcp is not None:
            server, tool = mcp
            return cls(tool, call.arguments, summarize(call), approval_class, call.id,
                       server=server)
        return cls(call.name, call.arguments, summarize(call), approval_class, call.id,
                   path=shown.path, before=shown.before, after=shown.after,
                   command=shown.command, cwd=shown.cwd)

    @classmethod
    def mcp_server(cls, server: str, summary: str, url: bool) -> ApprovalRequest:
        """Starting a project's MCP server (its command line, or its URL)."""
        return cls(server, {}, f"start the MCP server {server} of this project: {summary}",
                   "mcpServer", server=server, command=None if url else summary,
                   url=summary if url else None)

    @classmethod
    def permissions(cls, path: str, rules: list[str], url: str | None) -> ApprovalRequest:
        """Applying what a folder's own settings file (``path``, relative) asks for: where
        the prompts and the key go (``url``), what runs unasked (``rules``: a line each)."""
        return cls(path, {}, f"use the settings of this folder's {path}: " + "; ".join(rules),
                   "permissions", path=path, url=url, rules=tuple(rules))


class Approver(Protocol):
    """Asks the user. Returns a :data:`Decision`, or ``None`` when the request was dismissed;
    raises :class:`ApprovalUnavailable` with a reason when it cannot ask at all."""

    async def ask(self, request: ApprovalRequest) -> Decision | None: ...


@dataclass(frozen=True, slots=True)
class ApprovalPolicy:
    """``allow``/``ask``/``deny`` for each gated class."""

    run_command: str = "ask"
    write: str = "allow"
    mcp: str = "ask"
    mcp_servers: Mapping[str, str] = field(default_factory=dict)
    """Per MCP server: its entry's own ``approval`` (overrides ``mcp``)."""

    def __post_init__(self) -> None:
        for name, value in (("approvals.runCommand", self.run_command),
                            ("approvals.write", self.write), ("approvals.mcp", self.mcp),
                            *((f"the approval of {k}", v) for k, v in self.mcp_servers.items())):
            if value not in POLICIES:
                raise ValueError(f"{name} must be one of allow, ask, deny (got {value!r})")

    @classmethod
    def from_settings(cls, settings: Settings,
                      mcp_servers: Mapping[str, str] | None = None) -> ApprovalPolicy:
        return cls(run_command=settings.approvals.run_command, write=settings.approvals.write,
                   mcp=settings.approvals.mcp, mcp_servers=dict(mcp_servers or {}))

    def for_class(self, approval_class: str, server: str | None = None) -> str:
        """The policy of a class (``none`` and unknown classes are ``allow``); ``server``: the
        MCP server of an ``mcp`` call."""
        if approval_class == "runCommand":
            return self.run_command
        if approval_class == "write":
            return self.write
        if approval_class == "mcp":
            return self.mcp_servers.get(server or "", self.mcp)
        return "allow"


def summarize(call: ToolCall, limit: int = _SUMMARY_CHARS) -> str:
    """One line describing a call for an approval prompt."""
    args = call.arguments if isinstance(call.arguments, dict) else {}
    detail = ""
    if call.name == "run_command":
        command = args.get("command")
        extra = args.get("args") or []
        if isinstance(command, str) and isinstance(extra, list) \
                and all(isinstance(a, str) for a in extra):
            detail = shlex.join([command, *extra])
    elif call.name in ("write_file", "edit_file"):
        path = args.get("path")
        if isinstance(path, str):
            detail = path
            content = args.get("content")
            if call.name == "write_file" and isinstance(content, str):
                detail += f" ({plural(len(content.encode('utf-8', 'surrogatepass')), 'byte')})"
    if not detail:
        detail = compact_json(call.arguments)
    line = " ".join(f"{call.name}: {detail}".split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def compact_json(value: Any) -> str:
    """``value`` as JSON on one line (its ``repr`` when it is not JSON)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return repr(value)


@dataclass
class Gate:
    """Applies the policy to each call, asking the approver when the policy says ``ask``."""

    policy: ApprovalPolicy
    approver: Approver
    allowed_for_session: set[str] = field(default_factory=set)
    session_id: str | None = None
    """The session whose calls this gate decides (named in each request)."""
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)

    def reset(self) -> None:
        """Forget every "allow for this session" (a new session starts)."""
        self.allowed_for_session.clear()

    def would_ask(self, approval_class: ApprovalClass) -> bool:
        """Whether a call of this class would wait for the approver now (``ask``, and no
        "allow for this session" yet); read-only tools never do."""
        return (self.policy.for_class(approval_class) == "ask"
                and approval_class not in self.allowed_for_session)

    async def check(self, call: ToolCall, approval_class: ApprovalClass,
                    prepare: Callable[[], Awaitable[Preview]] | None = None,
                    mcp: tuple[str, str] | None = None) -> str | None:
        """``None`` to proceed, or the reason the call is denied (for a ``denied`` result).

        ``prepare`` computes what the user must see (:meth:`ToolRegistry.prepare
        <pseudoclaude.agent.tools.ToolRegistry.prepare>`); it is awaited only when the user is
        about to be asked, and a :class:`~pseudoclaude.agent.tools.ToolError` it raises (the
        change cannot apply) propagates: nobody is asked.
        """
        server = mcp[0] if mcp is not None else None
        policy = self.policy.for_class(approval_class, server)
        setting = SETTING_NAMES.get(approval_class, "approvals")
        if server is not None and server in self.policy.mcp_servers:
            setting = f"the approval of the MCP server {server}"
        if policy == "allow":
            return None
        if policy == "deny":
            return f"{call.name} is not allowed: {setting} is set to deny"
        # "allow for this session" covers a class; for an MCP tool, that one tool of that one
        # server, by their own names (a model name can later stand for another server's tool)
        remembered = (approval_class if approval_class != "mcp"
                      else call.name if mcp is None else f"mcp\x00{mcp[0]}\x00{mcp[1]}")
        async with self._lock:
            if remembered in self.allowed_for_session:
                return None
            preview = await prepare() if prepare is not None else None
            request = dataclasses.replace(ApprovalRequest.of(call, approval_class, preview, mcp),
                                          session_id=self.session_id)
            try:
                decision = await self.approver.ask(request)
            except ApprovalUnavailable as exc:
                return str(exc) or f"{call.name} was not approved"
            except Exception as exc:  # CancelledError propagates
                return f"{call.name} was not approved: asking for approval failed ({exc})"
            if decision == "allow_session":
                self.allowed_for_session.add(remembered)
                return None
            if decision == "allow_once":
                return None
            if decision is None:
                return f"{call.name} was not approved: the approval request was dismissed"
            return f"{call.name} was denied by the user"
