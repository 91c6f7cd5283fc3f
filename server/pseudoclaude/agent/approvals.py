"""Approvals: the permission engine's verdict on each call, an asynchronous approver, and the
gate (SPEC §6, §8, §13).

The :class:`Gate` asks the session's :class:`~pseudoclaude.permissions.PermissionEngine` about
each call (its mode, the rules of the permission files and settings, the dangerous-command
list, the workspace boundary): ``allow`` proceeds; ``deny`` refuses without asking (a
:class:`Denial`: ``permission_denied``, or ``tool_not_allowed`` in plan mode); ``ask`` asks the
:class:`Approver`. Before asking, the gate gets what the user must see from the caller's
``prepare`` (SPEC §11: a write's path, ``before`` and ``after``; a command line and its folder)
into the :class:`ApprovalRequest`, with the rule "always allow" would add; a change that cannot
apply fails there and nobody is asked. Asks are serialized, so two calls never prompt at once.

What the session's PreToolUse hooks decided comes with the call (``hook``; a refusal never
reaches the gate): ``allow`` counts as an allow rule (``Call.allowed_by``: deny and ask rules, the
dangerous-command list, the boundary and plan mode still decide first), ``ask`` asks even what
would run unasked. A :class:`Gate` tells ``on_ask`` of each question first (the ``Notification``
hooks). A folder's ``hooks.yaml`` is approved as ``hooks`` (:meth:`ApprovalRequest.hooks_file`).

The approver's answer (a :data:`Decision`, or an :class:`Answer` with a message): ``allow_once``;
``allow_session`` — for writes, every later write and edit of the session; for other calls,
the request's rule joins the session's rules (a command: ``Bash(npm run test:*)``, one MCP tool,
one file); ``allow_always`` — the rule is also written to the folder's
``permissions.local.yaml`` (``remember``); ``deny``, with an optional message the model reads.
``None`` means the request was dismissed (an editor's ``showMessageRequest`` answered ``null``)
and is a denial, as is any failure of the approver (:class:`ApprovalUnavailable` carries the
reason verbatim, other exceptions are reported as a failure). ``asyncio.CancelledError``
propagates.

Each front end provides its approver: the LSP server's asks with ``pseudoclaude/approve`` or
``window/showMessageRequest``, the ACP agent's with ``session/request_permission``, the CLI's
on the terminal (``pseudoclaude.cli.approver``).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

from pseudoclaude.agent.tools.base import ApprovalClass, Preview
from pseudoclaude.hooks import Decided
from pseudoclaude.llm.types import ToolCall
from pseudoclaude.names import plural
from pseudoclaude.permissions import PLAN_REASON, Call, PermissionEngine, RuleError, Verdict
from pseudoclaude.permissions.engine import INSTALL_SKILL

Decision = Literal["allow_once", "allow_session", "allow_always", "deny", "approve",
                   "keep_planning"]
Policy = Literal["allow", "ask", "deny"]
POLICIES: tuple[str, ...] = get_args(Policy)
DECISIONS: tuple[str, ...] = get_args(Decision)
_SUMMARY_CHARS = 300
Remember = Callable[[str], Awaitable[str | None]]
"""Writes an "always allow" rule to the folder's local permission file; ``None`` when done,
else why it could not (the rule then lasts the session)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """An approver's answer with more than a decision: ``message`` (with ``deny``) is what
    the model is told."""

    decision: Decision
    message: str | None = None
    mode: str | None = None
    """``approve`` (a plan): the mode to carry it out in."""


SimpleDecision = Literal["allow_once", "allow_session", "deny"]


def simple_decision(answer: Decision | Answer | None) -> SimpleDecision | None:
    """An answer to a question with no rule to keep (an MCP server, a folder's file):
    ``allow_always`` counts as ``allow_session`` (remembered), the message is dropped, and a
    plan's answers are a denial."""
    decision = answer.decision if isinstance(answer, Answer) else answer
    if decision is None or decision == "allow_once":
        return decision
    if decision in ("allow_session", "allow_always"):
        return "allow_session"
    return "deny"


@dataclass(frozen=True, slots=True)
class Denial:
    """Why a call does not run: ``error_type`` of its result (``permission_denied``;
    ``tool_not_allowed`` for a tool plan mode does not offer; ``outside_workspace``, the file
    tools' own error, for a path outside the workspace), the ``reason`` the model reads,
    and its ``source`` (a rule's source, ``mode``, ``blacklist``, ``sandbox``, or ``user``)."""

    reason: str
    source: str
    error_type: str = "permission_denied"
    rule: str | None = None


class ApprovalUnavailable(Exception):
    """Raised by an approver that cannot ask; the message is the denial reason, verbatim."""


@dataclass(frozen=True, slots=True)
class ApprovalHook:
    """One hook of a folder's ``hooks.yaml`` as its approval shows it."""

    name: str
    event: str
    action: str
    """What it runs, in one line (``shell: npm run lint``, ``http: POST <url>``)."""


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
    rule: str | None = None
    """The permission rule "always allow" would add (``None``: it is not offered)."""
    reason: str | None = None
    """Why it is asked (the mode, or the rule that asks)."""
    default_mode: str | None = None
    """``permissions``: the mode the folder's file would start sessions in."""
    plan: str | None = None
    """``plan``: the plan to approve (Markdown)."""
    hooks: tuple[ApprovalHook, ...] = ()
    """``hooks``: the hooks of the folder's ``hooks.yaml`` (``path``) that would run."""
    agent_id: str | None = None
    """The sub-agent whose call it is (``None``: the session's own)."""
    agent_name: str | None = None
    """That sub-agent's name, when the ``agent`` call gave one."""

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
    def plan_of(cls, plan: str, call_id: str, session_id: str | None) -> ApprovalRequest:
        """Approving the plan of ``exit_plan_mode``."""
        first = next((line.strip("# ").strip() for line in plan.splitlines() if line.strip()),
                     "")
        return cls("exit_plan_mode", {"plan": plan}, f"carry out the plan: {first[:200]}",
                   "plan", call_id, session_id=session_id, plan=plan)

    @classmethod
    def mcp_server(cls, server: str, summary: str, url: bool) -> ApprovalRequest:
        """Starting a project's MCP server (its command line, or its URL)."""
        return cls(server, {}, f"start the MCP server {server} of this project: {summary}",
                   "mcpServer", server=server, command=None if url else summary,
                   url=summary if url else None)

    @classmethod
    def hooks_file(cls, path: str, hooks: list[ApprovalHook]) -> ApprovalRequest:
        """Letting the hooks of a folder's own ``hooks.yaml`` (``path``, relative) run."""
        names = ", ".join(hook.name for hook in hooks)
        return cls(path, {}, f"run the hooks of this folder's {path}: {names}", "hooks",
                   path=path, hooks=tuple(hooks))

    @classmethod
    def permissions(cls, path: str, rules: list[str], url: str | None,
                    default_mode: str | None = None) -> ApprovalRequest:
        """Applying what a folder's own settings or permission file (``path``, relative) asks
        for: where the prompts and the key go (``url``), what runs unasked (``rules``: a line
        each), the mode sessions start in (``default_mode``)."""
        return cls(path, {}, f"use the settings of this folder's {path}: " + "; ".join(rules),
                   "permissions", path=path, url=url, rules=tuple(rules),
                   default_mode=default_mode)


class Approver(Protocol):
    """Asks the user. Returns a :data:`Decision` (or an :class:`Answer`), or ``None`` when the
    request was dismissed; raises :class:`ApprovalUnavailable` with a reason when it cannot ask
    at all."""

    async def ask(self, request: ApprovalRequest) -> Decision | Answer | None: ...


def summarize(call: ToolCall, limit: int = _SUMMARY_CHARS) -> str:
    """One line describing a call for an approval prompt."""
    args = call.arguments if isinstance(call.arguments, dict) else {}
    detail = ""
    if call.name == "run_command":
        command = args.get("command")
        extra = args.get("args")
        if isinstance(command, str) and extra is None:
            detail = command  # a shell line, as given
        elif isinstance(command, str) and isinstance(extra, list) \
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


_KINDS: dict[str, ApprovalClass] = {"none": "read"}
"""The request kind of a call the engine asks about although its tool class is never gated
(a read in ``strict`` mode, or one a rule asks for)."""


def _remembered(approval_class: ApprovalClass, mcp: tuple[str, str] | None,
                tool: str = "") -> str | None:
    """What "allow for this session" keeps in the gate rather than as a rule: writes (every
    write and edit), and an MCP tool by its server's and its own name. An install of a skill
    is never kept (asked each time), nor covered by the writes allowed."""
    if tool == INSTALL_SKILL:
        return None
    if approval_class == "write":
        return "write"
    if approval_class == "mcp" and mcp is not None:
        return f"mcp\x00{mcp[0]}\x00{mcp[1]}"
    return None


class Gate:
    """Decides each call with the session's engine, asking the approver when it says ``ask``
    (see the module docstring). ``mcp_servers``: an MCP server's own ``approval`` entry, which
    stands in for ``approvals.mcp`` for its tools when no rule decides."""

    def __init__(self, engine: PermissionEngine, approver: Approver, *,
                 session_id: str | None = None, mcp_servers: Mapping[str, str] | None = None,
                 remember: Remember | None = None,
                 on_ask: Callable[[ApprovalRequest], None] | None = None) -> None:
        self.engine = engine
        self.approver = approver
        self.session_id = session_id
        self.mcp_servers: dict[str, str] = dict(mcp_servers or {})
        self.remember = remember
        self.on_ask = on_ask
        """Told of each question before it is asked (the ``Notification`` hooks)."""
        self.allowed_for_session: set[str] = set()
        """What the user allowed for the rest of the session besides rules: ``write`` (every
        write and edit), and MCP tools by their server's and their own name."""
        self._lock = asyncio.Lock()
        self.agent_id: str | None = None
        self.agent_name: str | None = None
        self.strict = False
        """Asks what would run unasked (a sub-agent whose role is ``strict``)."""

    def for_agent(self, agent_id: str, agent_name: str | None = None,
                  on_ask: Callable[[ApprovalRequest], None] | None = None,
                  strict: bool = False) -> Gate:
        """The gate of a sub-agent of this session: the same engine, approver, answers and
        one-question-at-a-time lock; its questions name the sub-agent. ``on_ask``: who is
        told of its questions instead of the session's listener (its ``Notification`` hooks,
        whose payload names it). ``strict``: its role's ``permissionMode: strict``: what
        the session's mode would run unasked asks (not ``load_skill``, nor what a rule or an
        answer of the user allows)."""
        child = copy.copy(self)
        child.agent_id, child.agent_name = agent_id, agent_name
        child.strict = strict or self.strict
        if on_ask is not None:
            child.on_ask = on_ask
        return child

    def reset(self) -> None:
        """Forget every "allow for this session" (a new session starts)."""
        self.allowed_for_session.clear()

    def verdict(self, call: ToolCall, approval_class: ApprovalClass = "none",
                mcp: tuple[str, str] | None = None, read_only: bool = False,
                allowed_by: str | None = None) -> Verdict:
        """The engine's verdict, with what this session's gate adds: an MCP server's own
        approval entry and "allow for this session" of writes, where no rule decided.
        ``allowed_by``: a hook that allowed the call (as an allow rule would)."""
        arguments = call.arguments if isinstance(call.arguments, dict) else {}
        verdict = self.engine.check(Call(call.name, arguments, read_only, allowed_by))
        if verdict.source != "mode" or (verdict.decision == "deny" and \
                verdict.reason == PLAN_REASON):
            return verdict
        if mcp is not None and mcp[0] in self.mcp_servers and self.engine.mode not in (
                "strict", "bypassPermissions"):
            policy = self.mcp_servers[mcp[0]]
            if policy != verdict.decision:
                return Verdict(policy, None, "settings",  # type: ignore[arg-type]
                               f"the MCP server {mcp[0]}'s approval is {policy}")
        remembered = _remembered(approval_class, mcp, call.name)
        if verdict.decision == "ask" and remembered in self.allowed_for_session:
            return Verdict("allow", None, "session", f"{call.name} allowed for this session")
        return verdict

    def _judged(self, call: ToolCall, approval_class: ApprovalClass,
                mcp: tuple[str, str] | None, read_only: bool, hook: Decided | None) -> Verdict:
        """The verdict with the PreToolUse hooks' decision: ``allow`` counts as an allow rule;
        ``ask`` asks what would run unasked (a refusal stays one)."""
        if hook is not None and hook.decision == "allow":
            return self.verdict(call, approval_class, mcp, read_only, hook.hook)
        verdict = self.verdict(call, approval_class, mcp, read_only)
        if hook is not None and hook.decision == "ask" and verdict.decision != "deny":
            why = f"hook {hook.hook} asks first" + (f": {hook.reason}" if hook.reason else "")
            return Verdict("ask", verdict.rule, "hook", why, verdict.part)
        if self.strict and verdict.decision == "allow" and verdict.source in ("mode", "sandbox") \
                and call.name != "load_skill":  # a rule or an answer of the user still allows
            return Verdict("ask", verdict.rule, "mode", "its role asks for every call (strict)",
                           verdict.part)
        return verdict

    async def check(self, call: ToolCall, approval_class: ApprovalClass,
                    prepare: Callable[[], Awaitable[Preview]] | None = None,
                    mcp: tuple[str, str] | None = None, read_only: bool = False,
                    hook: Decided | None = None) -> Denial | None:
        """``None`` to proceed, or why the call does not run.

        ``prepare`` computes what the user must see (:meth:`ToolRegistry.prepare
        <pseudoclaude.agent.tools.ToolRegistry.prepare>`); it is awaited only when the user is
        about to be asked, and a :class:`~pseudoclaude.agent.tools.ToolError` it raises (the
        change cannot apply) propagates: nobody is asked. ``hook``: what the PreToolUse hooks
        decided (``allow`` or ``ask``; a refusal never reaches the gate).
        """
        verdict = self._judged(call, approval_class, mcp, read_only, hook)
        if verdict.decision == "allow":
            return None
        if verdict.decision == "deny":
            plan = verdict.source == "mode" and verdict.reason == PLAN_REASON
            error_type = "tool_not_allowed" if plan else \
                "outside_workspace" if verdict.source == "sandbox" else "permission_denied"
            return Denial(f"{call.name} is not allowed: {verdict.reason}", verdict.source,
                          error_type, verdict.rule)
        async with self._lock:
            verdict = self._judged(call, approval_class, mcp, read_only, hook)  # answered since?
            if verdict.decision != "ask":
                return await self.check(call, approval_class, prepare, mcp, read_only, hook)
            arguments = call.arguments if isinstance(call.arguments, dict) else {}
            rule = self.engine.suggest_rule(call.name, arguments)
            preview = await prepare() if prepare is not None else None
            kind = _KINDS.get(approval_class, approval_class)
            request = dataclasses.replace(ApprovalRequest.of(call, kind, preview, mcp),
                                          session_id=self.session_id, rule=rule,
                                          reason=verdict.reason, agent_id=self.agent_id,
                                          agent_name=self.agent_name)
            if self.on_ask is not None:
                self.on_ask(request)
            try:
                answer = await self.approver.ask(request)
            except ApprovalUnavailable as exc:
                return Denial(str(exc) or f"{call.name} was not approved", "user")
            except Exception as exc:  # CancelledError propagates
                return Denial(f"{call.name} was not approved: asking for approval failed "
                              f"({exc})", "user")
            decision = answer.decision if isinstance(answer, Answer) else answer
            if decision in ("approve", "keep_planning"):
                decision = "deny"  # a plan's answers, to a question about a call
            if decision in ("allow_session", "allow_always"):
                await self._allow_later(approval_class, mcp, rule, decision == "allow_always",
                                        call.name)
                return None
            if decision == "allow_once":
                return None
            if decision is None:
                return Denial(f"{call.name} was not approved: the approval request was "
                              "dismissed", "user")
            message = answer.message if isinstance(answer, Answer) else None
            said = f": {' '.join(message.split())}" if message and message.strip() else ""
            return Denial(f"{call.name} was denied by the user{said}", "user")

    async def _allow_later(self, approval_class: ApprovalClass, mcp: tuple[str, str] | None,
                           rule: str | None, always: bool, tool: str = "") -> None:
        """"Allow for this session" or "always allow": the rule from now on (for a write
        without an "always", every write; for an MCP tool, that tool of that server by their
        own names: a model name can later stand for another server's tool)."""
        remembered = _remembered(approval_class, mcp, tool)
        if remembered is not None and not always:
            self.allowed_for_session.add(remembered)
            return
        if rule is None:
            return
        try:
            self.engine.allow_for_session(rule)
        except RuleError:
            return
        if always and self.remember is not None:
            await self.remember(rule)
