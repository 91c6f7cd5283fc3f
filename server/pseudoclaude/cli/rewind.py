"""The CLI's ``rewind`` and ``sessions fork`` (the LSP requests ``pseudoclaude/sessions/turns``,
``pseudoclaude/rewind/preview``, ``pseudoclaude/rewind`` and ``pseudoclaude/sessions/fork``,
through the server's own handlers, so ``--json`` prints the LSP result).

``pseudoclaude rewind`` lists the prompts of the latest session; ``--turn N`` shows what the
rewind does and, on a terminal, asks before doing it (``--yes`` does not ask; ``--preview``
only shows).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pseudoclaude.api import methods, views
from pseudoclaude.api import protocol as p
from pseudoclaude.cli.state import (
    EXIT_FAILURE,
    EXIT_OK,
    CliError,
    emit,
    open_workspace,
    session_params,
)


def _confirm(question: str) -> bool:
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        return False
    return answer.strip().lower() in ("y", "yes")


async def rewind(args: argparse.Namespace) -> int:
    if args.preview and args.turn is None:
        raise p.ParamError("--preview", "goes with --turn N (the prompt to go back to "
                                        "before: see pseudoclaude rewind --list)")
    session = session_params(args.session)
    async with open_workspace(args, session=not session) as ws:
        if ws.session_id is None and not session:
            raise CliError(f"no session to rewind in {ws.root}")
        if args.turn is None:  # the list
            turns = await methods.call(ws, p.SESSIONS_TURNS, session)
            assert isinstance(turns, p.TurnsResult)
            emit(turns, args.json, lambda: views.describe_turns(turns) + (
                "\n\nrewind: pseudoclaude rewind --turn N [--mode code|conversation|both]"
                if turns.turns else ""))
            return EXIT_OK
        params = {**session, "turn": args.turn, "mode": args.mode}
        preview = await methods.call(ws, p.REWIND_PREVIEW, params)
        assert isinstance(preview, p.RewindPreviewResult)
        if args.preview:
            emit(preview, args.json, lambda: views.describe_rewind_preview(preview))
            return EXIT_OK
        if not args.yes and not args.json and sys.stdin.isatty():
            print(views.describe_rewind_preview(preview))
            if not _confirm("Rewind?"):
                print("nothing changed", file=sys.stderr)
                return EXIT_FAILURE
        done = await methods.call(ws, p.REWIND, {**params, "force": args.force})
        assert isinstance(done, p.RewindResult)
        emit(done, args.json, lambda: views.describe_rewind(done))
    return EXIT_OK


async def sessions_fork(args: argparse.Namespace) -> int:
    session = session_params(args.id, "ID")
    params: dict[str, Any] = {**session, **({"turn": args.turn} if args.turn else {})}
    async with open_workspace(args, session=not session) as ws:
        if ws.session_id is None and not session:
            raise CliError(f"no session to fork in {ws.root}")
        result = await methods.call(ws, p.SESSIONS_FORK, params)
    assert isinstance(result, p.ForkResult)
    emit(result, args.json, lambda: (
        f"forked into {result.session_id}\n"
        f"continue it: pseudoclaude run --session {result.session_id} PROMPT"))
    return EXIT_OK
