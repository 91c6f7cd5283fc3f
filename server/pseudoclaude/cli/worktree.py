"""The CLI's ``worktree status|apply|remove`` (the LSP requests ``pseudoclaude/worktree/*``,
through the server's own handlers, so ``--json`` prints the LSP result). The session is the
latest one unless ``--session`` names another."""

from __future__ import annotations

import argparse

from pseudoclaude.api import methods
from pseudoclaude.api import protocol as p
from pseudoclaude.cli.state import (
    EXIT_FAILURE,
    EXIT_OK,
    CliError,
    emit,
    open_workspace,
    session_params,
)


def describe_status(status: p.WorktreeStatusResult) -> str:
    lines = [f"session {status.session_id} works in {status.path}",
             f"branch {status.branch}, made from {status.base[:12]}"]
    lines += [f"  {f.action:<6}  {f.path}" for f in status.files]
    lines.append(status.message)
    return "\n".join(lines)


def describe_apply(result: p.WorktreeApplyResult) -> str:
    lines = [result.message]
    lines += [f"  applied   {path}" for path in result.applied]
    lines += [f"  conflict  {path}" for path in result.conflicts]
    return "\n".join(lines)


async def _call(args: argparse.Namespace, method: str, extra: dict[str, object]) -> p.Wire:
    session = session_params(args.session)
    async with open_workspace(args, session=not session) as ws:
        if ws.session_id is None and not session:
            raise CliError(f"no session in {ws.root}")
        return await methods.call(ws, method, {**session, **extra})


async def status(args: argparse.Namespace) -> int:
    result = await _call(args, p.WORKTREE_STATUS, {})
    assert isinstance(result, p.WorktreeStatusResult)
    emit(result, args.json, lambda: describe_status(result))
    return EXIT_OK


async def apply(args: argparse.Namespace) -> int:
    result = await _call(args, p.WORKTREE_APPLY, {})
    assert isinstance(result, p.WorktreeApplyResult)
    emit(result, args.json, lambda: describe_apply(result))
    return EXIT_FAILURE if result.conflicts else EXIT_OK


async def remove(args: argparse.Namespace) -> int:
    result = await _call(args, p.WORKTREE_REMOVE, {"force": args.force})
    assert isinstance(result, p.WorktreeRemoveResult)
    emit(result, args.json, lambda: result.message)
    return EXIT_OK
