"""Approvals over ACP: the core's approver asks the client with ``session/request_permission``.

A call the permission engine asks about is sent as a ``pending`` tool call with three options
(four when there is a rule to keep: "Always allow <rule>"); the chosen option's id is the core's
decision (the ``cancelled`` outcome, a dismissed
request, is a denial). A write carries its change as ``diff`` content.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

from acp import RequestError
from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    ContentToolCallContent,
    FileEditToolCallContent,
    PermissionOption,
    TerminalToolCallContent,
    ToolCallStatus,
    ToolCallUpdate,
)
from pydantic import ValidationError

from pseudoclaude.acp.outbox import Outbox
from pseudoclaude.acp.subagents import SubAgentCards
from pseudoclaude.acp.updates import locations, text_block, tool_kind, tool_status
from pseudoclaude.errors import one_line
from pseudoclaude.workspace import Answer, ApprovalRequest, ApprovalUnavailable, Decision

ToolCallContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_session", name="Allow for this session",
                     kind="allow_always"),
    PermissionOption(option_id="deny", name="Reject", kind="reject_once"),
]
"""``session/request_permission`` options; the chosen id is the core's decision."""
DECISIONS: dict[str, Decision] = {"allow_once": "allow_once", "allow_session": "allow_session",
                                  "allow_always": "allow_always", "deny": "deny"}


PLAN_OPTIONS = [
    PermissionOption(option_id="approve", name="Approve the plan", kind="allow_once"),
    PermissionOption(option_id="approve_accept_edits", name="Approve, and accept edits",
                     kind="allow_once"),
    PermissionOption(option_id="keep_planning", name="Keep planning", kind="reject_once"),
]
"""A plan's options: carried out in ``default`` or ``acceptEdits`` mode, or not yet."""
PLAN_ANSWERS = {"approve": Answer("approve", mode="default"),
                "approve_accept_edits": Answer("approve", mode="acceptEdits")}


def options(request: ApprovalRequest) -> list[PermissionOption]:
    """The options of a request: with a rule to keep, also "Always allow <rule>"."""
    if request.approval_class == "plan":
        return PLAN_OPTIONS
    if request.rule is None or request.approval_class in ("permissions", "hooks"):
        return OPTIONS
    return [*OPTIONS[:2],
            PermissionOption(option_id="allow_always", name=f"Always allow {request.rule}",
                             kind="allow_always"),
            OPTIONS[2]]


class AcpApprover:
    """The core's :class:`~pseudoclaude.workspace.Approver` for one workspace: asks in
    the workspace's current session (``session``), through the connection's client."""

    def __init__(self, root: Path, outbox: Outbox, client: Callable[[], Client | None],
                 session: Callable[[], str | None], cards: SubAgentCards | None = None
                 ) -> None:
        self._root = root
        self._outbox = outbox
        self._client = client
        self._session = session
        self._cards = cards
        """The sub-agents' cards: a sub-agent's call is asked on its card."""

    async def ask(self, request: ApprovalRequest) -> Decision | Answer | None:
        client, session_id = self._client(), request.session_id or self._session()
        if client is None or session_id is None:
            raise ApprovalUnavailable(f"{request.tool} was not approved: no client to ask")
        call_id = request.call_id or f"approval-{uuid.uuid4().hex}"
        summary = request.summary
        card = self._cards.card_of(session_id, request.agent_id) \
            if self._cards is not None and request.agent_id else None
        if card is not None:  # on the sub-agent's card, not as a call of the session's
            call_id = card.call_id
            summary = f"{request.agent_name or card.label or 'sub-agent'}: {summary}"
        status: ToolCallStatus = "pending"
        update = ToolCallUpdate(tool_call_id=call_id, title=summary,
                                kind=tool_kind(request.tool), status=status,
                                raw_input=request.arguments,
                                locations=locations(request.arguments, self._root),
                                content=diff(request, self._root))
        try:
            response = await client.request_permission(
                session_id=session_id, tool_call=update, options=options(request))
        except (RequestError, ConnectionError, ValidationError) as exc:
            raise ApprovalUnavailable(f"{request.tool} was not approved: the client could not "
                                      f"ask ({one_line(exc)})") from None
        finally:
            if card is not None and self._cards is not None:
                self._cards.show(card)  # its progress again
        outcome = response.outcome
        if request.approval_class == "plan":
            chosen = outcome.option_id if isinstance(outcome, AllowedOutcome) else ""
            return PLAN_ANSWERS.get(chosen, Answer("keep_planning"))
        if not isinstance(outcome, AllowedOutcome):
            return None  # cancelled: dismissed, a denial
        decision = DECISIONS.get(outcome.option_id, "deny")
        if decision != "deny" and card is None:
            self._outbox.post(session_id, tool_status(call_id, "in_progress"))
        return decision


def diff(request: ApprovalRequest, root: Path) -> list[ToolCallContent] | None:
    """A write's change as ACP diff content (SPEC §11 "Diff approvals": the gate computed the
    whole file without and with the change; no ``oldText`` for a new file); what a folder's
    settings file asks for, or the hooks of its ``hooks.yaml``, as text, a line each."""
    if request.approval_class == "plan":
        return [ContentToolCallContent(type="content", content=text_block(request.plan or ""))]
    if request.approval_class == "permissions":
        lines = "\n".join(f"- {rule}" for rule in request.rules)
        return [ContentToolCallContent(type="content", content=text_block(
            f"This folder's {request.path} asks to use these settings (until you allow them, "
            f"yours stand):\n{lines}"))]
    if request.approval_class == "hooks":
        lines = "\n".join(f"- {h.name} ({h.event}): {h.action}" for h in request.hooks)
        return [ContentToolCallContent(type="content", content=text_block(
            f"This folder's {request.path} has hooks that would run on your machine (until "
            f"you allow them, they do not):\n{lines}"))]
    if request.path is None or request.after is None:
        return None
    content: list[ToolCallContent] = [FileEditToolCallContent(
        type="diff", path=os.path.normpath(os.path.join(root, request.path)),
        new_text=request.after, old_text=request.before or None)]
    return content
