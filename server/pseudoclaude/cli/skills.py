"""``pseudoclaude skills list [--json] [--session ID|latest]``: the skills of a folder
(``pseudoclaude/skills/list``): each with where it is defined, whether the session (the latest by
default) loaded it and what it does; then the skills that cannot be read, with their file, line
and why. Nothing is asked, run or written."""

from __future__ import annotations

import argparse

from pseudoclaude.api import methods, views
from pseudoclaude.api import protocol as p
from pseudoclaude.cli.state import EXIT_OK, NoQuestions, emit, open_workspace


async def skills_list(args: argparse.Namespace) -> int:
    async with open_workspace(args, session=False, approver=NoQuestions()) as ws:
        session = args.session if args.session is not None else (
            "latest" if await ws.has_latest() else None)
        result = await methods.call(ws, p.SKILLS_LIST,
                                    {"sessionId": session} if session is not None else {})
    assert isinstance(result, p.SkillsListResult)
    emit(result, args.json, lambda: views.describe_skills(result))
    return EXIT_OK
