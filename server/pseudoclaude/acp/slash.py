"""Slash commands over ACP: the server's commands (:mod:`pseudoclaude.api.commands`), listed in
``available_commands_update`` and run by their request (:func:`pseudoclaude.api.methods.call`).

A prompt that is a command runs it instead of the model, and its answer is one agent message:
the result's own line (``message``) for ``/compact`` and ``/undo``, the context breakdown and
the memory view as text (:mod:`pseudoclaude.words`) for ``/context`` and ``/memory``, the
status's own text for ``/status``, the hooks by event for ``/hooks``.

``/new`` is not listed: an ACP session is one session log, and the client starts another with
``session/new`` (its own "new thread" action); typed anyway, it answers with that. The folder's
skills follow the commands: ``/review src`` is a prompt (the workspace sends the skill's
instructions).
"""

from __future__ import annotations

import asyncio
import uuid

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    UnstructuredCommandInput,
)

from pseudoclaude.acp.outbox import Outbox
from pseudoclaude.acp.turns import Turn
from pseudoclaude.acp.updates import agent_text
from pseudoclaude.api import commands, methods, views
from pseudoclaude.api import protocol as p
from pseudoclaude.api.commands import Command
from pseudoclaude.errors import EXPECTED_ERRORS, one_line
from pseudoclaude.workspace import SessionBusy, Workspace, WorkspaceBusy

NOT_HERE = frozenset({p.SESSIONS_NEW})
"""Requests a command of ACP does not run (the client has them itself)."""
COMMANDS: tuple[Command, ...] = tuple(c for c in commands.COMMANDS if c.request not in NOT_HERE)
"""The commands ACP lists."""
NEW_SESSION = ("To start a new session, open a new thread with your editor's agent panel (it "
               "sends `session/new`); this one stays in the session list.")
NEEDS_SESSION = frozenset({p.COMPACT, p.COMPACT_UNDO, p.CONTEXT, p.REWIND})
"""Requests that act on the current session: the prompt's session is made current first."""
FAILURES = {p.COMPACT: "Compaction failed", p.COMPACT_UNDO: "Undo failed",
            p.REWIND: "Rewind failed"}
REWIND_USAGE = ("`/rewind N` takes the code and the conversation back to before prompt N; "
                "`/rewind N code` or `/rewind N conversation` only one of them.")
REWOUND_THREAD = ("This thread still shows the messages that were taken back; reopen the "
                  "session to see the conversation as the model now sees it.")


def available_commands(ws: Workspace | None = None) -> AvailableCommandsUpdate:
    """The commands, then the skills of ``ws`` (as last read) the user may run: a skill's
    ``/review src`` is a prompt (the server turns it into the skill's instructions)."""
    listed = [(c.name, c.description, c.hint) for c in COMMANDS] + [
        (s.name, s.description, s.hint if isinstance(s.hint, str) else None)
        for s in (commands.skill_commands(ws.skills.cached().skills) if ws else [])]
    return AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[
            AvailableCommand(name=name, description=description, input=None
                             if hint is None else AvailableCommandInput(
                                 UnstructuredCommandInput(hint=hint)))
            for name, description, hint in listed])


async def run(ws: Workspace, turn: Turn, outbox: Outbox, command: Command,
              argument: str) -> None:
    """Run ``command`` in the turn's session and answer with its text."""
    session_id = turn.session_id
    if command.request in NOT_HERE:
        outbox.post(session_id, agent_text(NEW_SESSION))
        return
    if command.request in NEEDS_SESSION and ws.session_id != session_id:
        ws.keep_current(session_id)
        await ws.resume(session_id)
    if command.request == p.REWIND:
        await rewind(ws, session_id, outbox, argument)
        return
    cid = turn.compaction_id = uuid.uuid4().hex if command.request == p.COMPACT else None
    if cid is not None:
        outbox.compaction_update(session_id, cid, "in_progress")
    try:
        params = commands.params(command, argument)
        if command.request in p.SESSION_SCOPED:
            params = {"sessionId": session_id, **params}
        result = await methods.call(ws, command.request, params)
    except asyncio.CancelledError:
        if cid is not None:
            outbox.compaction_update(session_id, cid, "cancelled")
        raise
    except (WorkspaceBusy, SessionBusy):
        raise
    except EXPECTED_ERRORS as exc:
        if cid is not None:
            outbox.compaction_update(session_id, cid, "failed", error=one_line(exc))
        failed = FAILURES.get(command.request, f"/{command.name} failed")
        outbox.post(session_id, agent_text(f"{failed}: {one_line(exc)}"))
        return
    text = shown(result)
    if cid is not None and not turn.compaction_done:  # no summary (Layer 1 only)
        outbox.compaction_update(session_id, cid, "completed", summary=text)
    outbox.post(session_id, agent_text(text))


async def rewind(ws: Workspace, session_id: str, outbox: Outbox, argument: str) -> None:
    """``/rewind``: the prompts; ``/rewind N [mode]``: the rewind (the command is the
    confirmation), answered with what it did."""
    try:
        number, mode = commands.rewind_arguments(argument)
        if number is None:
            turns = await methods.call(ws, p.SESSIONS_TURNS, {"sessionId": session_id})
            assert isinstance(turns, p.TurnsResult)
            text = fenced(views.describe_turns(turns)) + ("\n\n" + REWIND_USAGE
                                                          if turns.turns else "")
        else:
            done = await methods.call(ws, p.REWIND, {"sessionId": session_id, "turn": number,
                                                     "mode": mode or "both"})
            assert isinstance(done, p.RewindResult)
            text = fenced(views.describe_rewind(done)) + (
                "\n\n" + REWOUND_THREAD if (mode or "both") != "code" else "")
    except (WorkspaceBusy, SessionBusy):
        raise
    except ValueError as exc:  # the argument, or a turn out of range
        text = f"{exc}. {REWIND_USAGE}"
    except EXPECTED_ERRORS as exc:
        text = f"{FAILURES[p.REWIND]}: {one_line(exc)}"
    outbox.post(session_id, agent_text(text))


def shown(result: p.Wire) -> str:
    """A command's result as the text of its answer."""
    if isinstance(result, p.CompactResult | p.UndoResult | p.ModeResult):
        return result.message
    if isinstance(result, p.ContextResult):
        return fenced(views.describe_context(result))
    if isinstance(result, p.MemoryShowResult):
        return fenced(views.describe_memory(result))
    if isinstance(result, p.McpListResult):
        return fenced(views.describe_mcp(result))
    if isinstance(result, p.HooksListResult):
        return fenced(result.text)
    if isinstance(result, p.StatusResult):
        return fenced(result.text)
    raise TypeError(f"no text for a {type(result).__name__}")


def fenced(text: str) -> str:
    """Plain text in a Markdown code block, so a chat keeps its lines and columns."""
    return f"```text\n{text}\n```"
