"""``pseudoclaude status``: a session at a glance (``pseudoclaude/status``, as ``/status`` in the
chats): the session, its mode, the model, the tokens, the sandbox, the MCP servers, the hooks
and the skills. The latest session by default; nothing is asked, started or written."""

from __future__ import annotations

import argparse

from pseudoclaude.api import methods
from pseudoclaude.api import protocol as p
from pseudoclaude.api.protocol import ParamError
from pseudoclaude.cli.state import (
    EXIT_OK,
    CliError,
    NoQuestions,
    emit,
    open_workspace,
    session_params,
)


async def status(args: argparse.Namespace) -> int:
    """A well-formed id of no session is a failure (1), one that is not an id a usage error (2)."""
    params = session_params(args.session)
    async with open_workspace(args, session="sessionId" not in params,
                              approver=NoQuestions()) as ws:
        try:
            result = await methods.call(ws, p.STATUS, params)
        except ParamError as exc:
            if exc.field == "sessionId":
                raise CliError(str(exc).removeprefix("sessionId: ")) from None
            raise
    assert isinstance(result, p.StatusResult)
    emit(result, args.json, lambda: result.text)
    return EXIT_OK
