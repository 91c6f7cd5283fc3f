"""``pseudoclaude hooks list [--json]``: the hooks of a folder (``pseudoclaude/hooks/list``, as
``/hooks`` in the chats): by event, each with what it runs, where it is defined and whether it
runs (a folder's own ``hooks.yaml`` waits for your approval; an entry that cannot be read is
named with its file, line and why). Nothing is asked, run or written.

``pseudoclaude hooks approve [--json]``: let the folder's own ``hooks.yaml`` run, remembered
until it changes (``pseudoclaude/hooks/review``, the command being the answer)."""

from __future__ import annotations

import argparse

from pseudoclaude.api import methods
from pseudoclaude.api import protocol as p
from pseudoclaude.cli.state import EXIT_OK, NoQuestions, emit, open_workspace
from pseudoclaude.workspace import ApprovalRequest, Decision


async def hooks_list(args: argparse.Namespace) -> int:
    async with open_workspace(args, session=False, approver=NoQuestions()) as ws:
        result = await methods.call(ws, p.HOOKS_LIST, {})
    assert isinstance(result, p.HooksListResult)
    emit(result, args.json, lambda: result.text)
    return EXIT_OK


class _ApproveHooks:
    """The approver of ``hooks approve``: yes to the folder's ``hooks.yaml`` (remembered),
    nothing else asked."""

    def __init__(self) -> None:
        self.asked = False

    async def ask(self, request: ApprovalRequest) -> Decision | None:
        if request.approval_class != "hooks":
            return "deny"  # pragma: no cover - the review asks about hooks only
        self.asked = True
        return "allow_session"


async def hooks_approve(args: argparse.Namespace) -> int:
    approver = _ApproveHooks()
    async with open_workspace(args, session=False, approver=approver) as ws:
        result = await methods.call(ws, p.HOOKS_REVIEW, {})
    assert isinstance(result, p.HooksListResult)

    def text() -> str:
        if not approver.asked:
            return "nothing waits for an approval in this folder's .PseudoClaude/hooks.yaml"
        names = [h.name for h in result.hooks if h.source == "workspace" and h.status == "active"]
        return ("approved this folder's .PseudoClaude/hooks.yaml (until it changes): "
                + ", ".join(names))
    emit(result, args.json, text)
    return EXIT_OK
