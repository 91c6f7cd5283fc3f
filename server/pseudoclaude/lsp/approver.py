"""Approvals asked in the editor (SPEC §8, §11 "Diff approvals").

A client that set ``experimental.pseudoclaude.approvals: true`` in its ``initialize``
capabilities gets the server → client request ``pseudoclaude/approve``
(:class:`~pseudoclaude.api.protocol.ApproveParams`: the path, ``before`` and ``after`` of a
write, the command line and folder of a command) and answers
:class:`~pseudoclaude.api.protocol.ApproveResult` ``{decision}``. Other clients get
``window/showMessageRequest`` (Warning, actions ``Allow once``, ``Allow for this session``,
``Deny``; a dismissed request, null, is a denial).

An answer that does not fit, or an error response, is a denial with the reason
(:class:`~pseudoclaude.workspace.ApprovalUnavailable`). When the run is cancelled while
the request is pending, the client gets ``$/cancelRequest`` for it and the late answer is
dropped; the cancellation goes on to the runner (the call gets its ``canceled`` result).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, get_args

from lsprotocol import types
from msgspec import UNSET, UnsetType

from pseudoclaude.api import protocol as p
from pseudoclaude.api.protocol import APPROVAL_ACTIONS
from pseudoclaude.errors import one_line
from pseudoclaude.lsp.editor import client_offers
from pseudoclaude.workspace import Answer, ApprovalRequest, ApprovalUnavailable, Decision

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

ALLOW_ONCE = APPROVAL_ACTIONS["once"]
ALLOW_SESSION = APPROVAL_ACTIONS["session"]
ALLOW_ALWAYS = APPROVAL_ACTIONS["always"]
DENY = APPROVAL_ACTIONS["deny"]
_DECISIONS: dict[str, Decision] = {ALLOW_ONCE: "allow_once", ALLOW_SESSION: "allow_session",
                                   ALLOW_ALWAYS: "allow_always", DENY: "deny"}
_WIRE_DECISIONS: dict[str, Decision] = {"allowOnce": "allow_once",
                                        "allowSession": "allow_session",
                                        "allowAlways": "allow_always", "deny": "deny",
                                        "approve": "approve",
                                        "keepPlanning": "keep_planning"}
APPROVE_PLAN = "Approve"
APPROVE_PLAN_EDITS = "Approve, accept edits"
KEEP_PLANNING = "Keep planning"
_PLAN_ACTIONS: dict[str, Answer] = {
    APPROVE_PLAN: Answer("approve", mode="default"),
    APPROVE_PLAN_EDITS: Answer("approve", mode="acceptEdits"),
    KEEP_PLANNING: Answer("keep_planning")}
_KINDS: dict[str, p.ApproveKind] = {kind: kind for kind in get_args(p.ApproveKind)}
_ARGUMENTS_SHOWN = 600
_ANSWER_SHOWN = 200

T = TypeVar("T")


def wants_approve(capabilities: Any) -> bool:
    """Whether the client's ``initialize`` capabilities set
    ``experimental.pseudoclaude.approvals: true``."""
    return client_offers(capabilities, p.APPROVALS_CAPABILITY)


class LspApprover:
    """Asks the user through the editor, for the workspace folder ``workspace`` (its URI);
    ``session_id`` gives the workspace's current session (for ``pseudoclaude/approve``)."""

    def __init__(self, server: LanguageServer, workspace: str = "",
                 session_id: Callable[[], str | None] = lambda: None) -> None:
        self.server = server
        self.workspace = workspace
        self.session_id = session_id

    async def ask(self, request: ApprovalRequest) -> Decision | Answer | None:
        if wants_approve(self.server.client_capabilities):
            return await self._approve(request)
        return await self._show_message(request)

    # -- pseudoclaude/approve ------------------------------------------------------------------
    def params(self, request: ApprovalRequest) -> p.ApproveParams:
        """The ``pseudoclaude/approve`` params of a request."""
        return p.ApproveParams(
            workspace=self.workspace, session_id=request.session_id or self.session_id() or "",
            tool=request.tool,
            arguments=request.arguments,
            kind=_KINDS.get(request.approval_class, "runCommand"),
            path=_given(request.path), before=_given(request.before),
            after=_given(request.after), command=_given(request.command),
            cwd=_given(request.cwd), server=_given(request.server), url=_given(request.url),
            rules=list(request.rules) if request.approval_class == "permissions" else UNSET,
            rule=_given(request.rule), reason=_given(request.reason),
            plan=_given(request.plan), agent_id=_given(request.agent_id),
            agent_name=_given(request.agent_name),
            hooks=[p.ApproveHook(name=h.name, event=h.event, action=h.action)
                   for h in request.hooks] if request.approval_class == "hooks" else UNSET)

    async def _approve(self, request: ApprovalRequest) -> Decision | Answer:
        try:
            answer = await self._request(p.APPROVE, p.to_wire(self.params(request)))
        except ApprovalUnavailable as exc:
            raise ApprovalUnavailable(f"{request.tool} was not approved: {exc}") from None
        try:
            result = p.decode_params(p.ApproveResult, p.as_object(answer))
        except (p.ParamError, TypeError) as exc:
            raise ApprovalUnavailable(
                f"{request.tool} was not approved: the editor's answer to {p.APPROVE} is "
                f"not valid ({exc}; got {_shown(answer)})") from None
        decision = _WIRE_DECISIONS[result.decision]
        if request.approval_class == "plan":  # approve (with a mode) or keep planning
            if decision == "approve":
                return Answer("approve", mode=result.mode or "default")
            return Answer("keep_planning", result.feedback or result.message)
        if decision == "allow_always" and request.rule is None:
            decision = "allow_session"  # nothing to write: the editor offered more than asked
        if decision == "deny" and result.message and result.message.strip():
            return Answer("deny", result.message)
        return decision

    # -- window/showMessageRequest -------------------------------------------------------------
    async def _show_message(self, request: ApprovalRequest) -> Decision | Answer | None:
        arguments = request.arguments if isinstance(request.arguments, str) else json.dumps(
            request.arguments, ensure_ascii=False)
        if len(arguments) > _ARGUMENTS_SHOWN:
            arguments = arguments[:_ARGUMENTS_SHOWN] + "..."
        summary = request.summary if request.summary.startswith(request.tool) else (
            f"{request.tool}: {request.summary}")
        message = f"PseudoClaude wants to use {summary}\nArguments: {arguments}"
        if request.approval_class == "mcpServer":
            message = (f"This project's MCP configuration asks PseudoClaude to "
                       f"{request.summary.removeprefix(request.tool + ': ')}")
        elif request.approval_class == "permissions":
            message = (f"This folder's {request.path} asks PseudoClaude to use these settings "
                       "(until you allow them, yours stand):\n"
                       + "\n".join(f"- {rule}" for rule in request.rules))
        elif request.approval_class == "hooks":
            message = hooks_message(request)
        if request.approval_class == "plan":
            return await self._show_plan(request)
        titles = [t for t in _DECISIONS if t != ALLOW_ALWAYS or request.rule is not None]
        if request.rule is not None and request.approval_class != "permissions":
            message += f"\n{ALLOW_ALWAYS} adds the rule {request.rule} to this folder's " \
                       ".PseudoClaude/permissions.local.yaml"
        answer = await self._request(
            types.WINDOW_SHOW_MESSAGE_REQUEST,
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning, message=message,
                actions=[types.MessageActionItem(title=t) for t in titles]))
        if answer is None:
            return None
        title = answer.get("title") if isinstance(answer, dict) else getattr(answer, "title", None)
        return _DECISIONS.get(str(title), "deny")

    async def _show_plan(self, request: ApprovalRequest) -> Answer | None:
        """A plan in a message (its Markdown as text): Approve, Approve with edits accepted,
        or Keep planning (no feedback: a message has no text field)."""
        answer = await self._request(
            types.WINDOW_SHOW_MESSAGE_REQUEST,
            types.ShowMessageRequestParams(
                type=types.MessageType.Info,
                message=f"PseudoClaude's plan:\n\n{request.plan or ''}",
                actions=[types.MessageActionItem(title=t) for t in _PLAN_ACTIONS]))
        if answer is None:
            return None
        title = answer.get("title") if isinstance(answer, dict) else getattr(answer, "title", None)
        return _PLAN_ACTIONS.get(str(title), Answer("keep_planning"))

    # -- the request ---------------------------------------------------------------------------
    async def _request(self, method: str, params: Any) -> Any:
        """Send a request to the client and wait for its answer; an error answer (or none,
        the connection is gone) is :class:`ApprovalUnavailable`. Cancelled: the client gets
        ``$/cancelRequest`` and a late answer is dropped."""
        protocol = self.server.protocol
        msg_id = f"pseudoclaude-approval-{uuid.uuid4()}"
        try:
            future = protocol.send_request(method, params, msg_id=msg_id)
        except Exception as exc:
            raise ApprovalUnavailable(
                f"the editor could not ask for approval: {one_line(exc)}") from None
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            protocol._request_futures.pop(msg_id, None)  # the answer, if any, is dropped
            protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise
        except Exception as exc:
            raise ApprovalUnavailable(
                f"the editor could not ask for approval: {one_line(exc)}") from None


def hooks_message(request: ApprovalRequest) -> str:
    """A folder's ``hooks.yaml`` as its approval shows it: each hook's event and what it runs."""
    return (f"This folder's {request.path} has hooks that would run on your machine (until you "
            "allow them, they do not):\n"
            + "\n".join(f"- {h.name} ({h.event}): {h.action}" for h in request.hooks))


def _given(value: T | None) -> T | UnsetType:
    return UNSET if value is None else value


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _ANSWER_SHOWN else text[:_ANSWER_SHOWN] + "…"
