"""Approvals asked in the editor with ``window/showMessageRequest`` (SPEC §8)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from lsprotocol import types

from pseudoclaude.agent.approvals import ApprovalRequest, ApprovalUnavailable, Decision

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
DENY = "Deny"
_DECISIONS: dict[str, Decision] = {ALLOW_ONCE: "allow_once", ALLOW_SESSION: "allow_session",
                                   DENY: "deny"}
_ARGUMENTS_SHOWN = 600


class LspApprover:
    """Asks the user through the editor; a dismissed request (null) is a denial."""

    def __init__(self, server: LanguageServer) -> None:
        self.server = server

    async def ask(self, request: ApprovalRequest) -> Decision | None:
        arguments = request.arguments if isinstance(request.arguments, str) else json.dumps(
            request.arguments, ensure_ascii=False)
        if len(arguments) > _ARGUMENTS_SHOWN:
            arguments = arguments[:_ARGUMENTS_SHOWN] + "..."
        summary = request.summary if request.summary.startswith(request.tool) else (
            f"{request.tool}: {request.summary}")
        message = f"PseudoClaude wants to use {summary}\nArguments: {arguments}"
        try:
            answer = await self.server.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Warning, message=message,
                    actions=[types.MessageActionItem(title=t) for t in _DECISIONS]))
        except Exception as exc:
            raise ApprovalUnavailable(f"the editor could not ask for approval: {exc}") from None
        if answer is None:
            return None
        title = answer.get("title") if isinstance(answer, dict) else getattr(answer, "title", None)
        return _DECISIONS.get(str(title), "deny")
