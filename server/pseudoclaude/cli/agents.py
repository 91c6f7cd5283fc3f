"""``pseudoclaude agents list [--session ID|latest] [--json]``: a session's sub-agents
(``pseudoclaude/agents/list``), each with its type, name, status, tokens and task; ``pseudoclaude
agents show AGENT_ID [--session ID|latest] [--json]``: one sub-agent's conversation as its model
saw it. The latest session by default. Nothing is asked, run or written."""

from __future__ import annotations

import argparse

from pseudoclaude.api import methods, views
from pseudoclaude.api import protocol as p
from pseudoclaude.cli.state import EXIT_OK, NoQuestions, emit, open_workspace, session_params
from pseudoclaude.words import plural
from pseudoclaude.workspace import message_to_json, render_message


async def agents_list(args: argparse.Namespace) -> int:
    params = session_params(args.session)
    async with open_workspace(args, session=False, approver=NoQuestions()) as ws:
        result = await methods.call(ws, p.AGENTS_LIST, params)
    assert isinstance(result, p.AgentsResult)
    emit(result, args.json, lambda: views.describe_agents(result))
    return EXIT_OK


async def agents_show(args: argparse.Namespace) -> int:
    params = session_params(args.session)
    async with open_workspace(args, session=False, approver=NoQuestions()) as ws:
        sid, messages = await ws.agent_messages(params.get("sessionId"), args.agent_id)
    if args.json:
        print(p.encode_line({"sessionId": sid, "agentId": args.agent_id,
                             "messages": [message_to_json(m) for m in messages]}))
        return EXIT_OK
    print(f"sub-agent {args.agent_id} of session {sid}: {plural(len(messages), 'message')}")
    for m in messages:
        print(render_message(m))
    return EXIT_OK
