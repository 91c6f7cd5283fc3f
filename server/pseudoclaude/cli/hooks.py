"""``pseudoclaude hooks list [--json]``: the hooks of a folder (``pseudoclaude/hooks/list``, as
``/hooks`` in the chats): by event, each with what it runs, where it is defined and whether it
runs (a folder's own ``hooks.yaml`` waits for your approval; an entry that cannot be read is
named with its file, line and why). Nothing is asked, run or written."""

from __future__ import annotations

import argparse

from pseudoclaude.api import methods
from pseudoclaude.api import protocol as p
from pseudoclaude.cli.state import EXIT_OK, NoQuestions, emit, open_workspace


async def hooks_list(args: argparse.Namespace) -> int:
    async with open_workspace(args, session=False, approver=NoQuestions()) as ws:
        result = await methods.call(ws, p.HOOKS_LIST, {})
    assert isinstance(result, p.HooksListResult)
    emit(result, args.json, lambda: result.text)
    return EXIT_OK
