"""The CLI's state commands: ``context``, ``compact``, ``memory ...``, ``sessions ...``
(SPEC §9, §11 "CLI parity").

Each goes through a :class:`~pseudoclaude.workspace.Workspace`, as the LSP server does, and
calls the server's own request handlers (:mod:`pseudoclaude.api.methods`), so ``--json``
prints exactly the LSP result object. Commands that need a session act on the latest one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import difflib
import json
import shlex
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from pseudoclaude.api import methods, views
from pseudoclaude.api import protocol as p
from pseudoclaude.api.protocol import ParamError
from pseudoclaude.cli.approver import TerminalApprover
from pseudoclaude.config import (
    APPROVAL_NAME,
    KEYS,
    PREFIX,
    ConfigError,
    Settings,
    forget_approval,
    load_settings,
    remember_approval,
)
from pseudoclaude.errors import PseudoClaudeError
from pseudoclaude.events import Event
from pseudoclaude.names import snake
from pseudoclaude.words import plural
from pseudoclaude.workspace import (
    ApprovalRequest,
    ApprovalUnavailable,
    Approver,
    Decision,
    Hooks,
    SessionInfo,
    Workspace,
    describe_age,
    describe_size,
    is_session_id,
    message_to_json,
    render_message,
)

EXIT_OK, EXIT_FAILURE = 0, 1
W = TypeVar("W", bound=p.Wire)


class CliError(PseudoClaudeError):
    """A failure reported as one line on stderr with exit code 1."""


def workspace_root(value: str | None) -> Path:
    root = Path(value or ".").expanduser()
    if not root.is_dir():
        raise CliError(f"workspace is not a folder: {root}")
    return root.resolve()


FLAG_KEYS = {key.name: snake(key.name)
             for key in KEYS.values() if "cli" in key.sources}
"""Setting key -> argparse attribute of its flag (the keys ``config.KEYS`` lets the CLI set:
``provider``, ``model``, ``baseUrl``, ``contextWindow``, ``maxIterations``)."""
FLAG_LABELS = {key: "--" + attr.replace("_", "-") for key, attr in FLAG_KEYS.items()}


def settings_for(args: argparse.Namespace, root: Path) -> Settings:
    """The workspace's settings with the provider flags (when the command has them) on top;
    a bad flag value is reported by its flag (``--base-url must be ...``)."""
    flags = {key: getattr(args, attr, None) for key, attr in FLAG_KEYS.items()}
    try:
        return load_settings(root, {k: v for k, v in flags.items() if v is not None},
                             overrides_source="command line", override_labels=FLAG_LABELS)
    except ConfigError as exc:
        if exc.label:  # a bad flag value: a usage error (exit 2)
            raise ParamError("", str(exc).removeprefix(PREFIX)) from None
        raise


def session_params(value: str | None, label: str = "--session") -> dict[str, Any]:
    """``--session`` (or the argument ``label``): an id (checked), or the latest session (no
    params)."""
    if value is None or value == "latest":
        return {}
    if not is_session_id(value):
        raise ParamError(label, f"must be {p.SESSION_ID_HINT} or 'latest', got {value[:60]!r}")
    return {"sessionId": value}


def print_event(session_id: str, event: Event) -> None:
    """Events of commands other than ``run`` (compaction warnings): one line on stderr."""
    from pseudoclaude.cli.run import TerminalPrinter

    line = TerminalPrinter.line(event)
    if line is not None:
        print(line, file=sys.stderr)


class NoQuestions:
    """The approver of a command that asks nothing (``mcp approve``: the answer is the
    command)."""

    async def ask(self, request: ApprovalRequest) -> Decision | None:
        raise ApprovalUnavailable("this command asks nothing")


@contextlib.asynccontextmanager
async def open_workspace(args: argparse.Namespace, *, session: bool,
                         approver: Approver | None = None) -> AsyncIterator[Workspace]:
    """The workspace of ``--workspace``; with ``session``, its latest session resumed (when
    there is one: see :func:`~pseudoclaude.session.resume.latest_id`). ``approver``: the
    terminal's by default."""
    root = workspace_root(args.workspace)
    ws = Workspace(root, settings_for(args, root), approver=approver or TerminalApprover(),
                   hooks=Hooks(events=print_event))
    try:
        if session and await ws.has_latest():
            await ws.resume("latest")
        yield ws
    finally:
        await ws.close()


def emit(result: Any, as_json: bool, text: Callable[[], str]) -> None:
    if as_json:
        print(p.encode_line(result))
    else:
        print(text())


def run_async(command: Callable[[argparse.Namespace], Coroutine[Any, Any, int]],
              args: argparse.Namespace) -> int:
    return asyncio.run(command(args))


# -- context and compact ------------------------------------------------------------------------


async def ask(args: argparse.Namespace, method: str, params: dict[str, Any], shape: type[W],
              *, session: bool) -> W:
    """One request of the server's handlers on ``--workspace`` (its latest session resumed
    when ``session``)."""
    named = "sessionId" in params  # --session ID: that session, not the latest
    async with open_workspace(args, session=session and not named) as ws:
        if method == p.COMPACT and ws.session_id is None and not named:
            raise CliError(f"no session to compact in {ws.root}")
        if method == p.COMPACT_UNDO and ws.session_id is None and not named:
            raise CliError(f"no session to undo a compaction in: {ws.root} has no session yet")
        result = await methods.call(ws, method, params)
    assert isinstance(result, shape)
    return result


async def context(args: argparse.Namespace) -> int:
    result = await ask(args, p.CONTEXT, session_params(args.session), p.ContextResult,
                       session=True)
    emit(result, args.json, lambda: views.describe_context(result))
    return EXIT_OK


async def compact(args: argparse.Namespace) -> int:
    session = session_params(args.session)
    params = {**session, **({"instructions": args.instructions} if args.instructions else {})}
    if args.preview:
        plan = await ask(args, p.COMPACT_PREVIEW, params, p.CompactPreviewResult, session=True)
        emit(plan, args.json, lambda: plan.message)
        return EXIT_OK
    if args.undo:
        undone = await ask(args, p.COMPACT_UNDO, session, p.UndoResult, session=True)
        if args.json or undone.restored:
            emit(undone, args.json, lambda: undone.message)
        if not undone.restored:  # a failure: one line on stderr
            raise CliError(undone.message)
        return EXIT_OK
    result = await ask(args, p.COMPACT, params, p.CompactResult, session=True)
    emit(result, args.json, lambda: result.message)
    return EXIT_OK


# -- memory -------------------------------------------------------------------------------------


async def memory_show(args: argparse.Namespace) -> int:
    result = await ask(args, p.MEMORY_SHOW, {}, p.MemoryShowResult, session=False)
    emit(result, args.json, lambda: views.describe_memory(result))
    return EXIT_OK


async def memory_remember(args: argparse.Namespace) -> int:
    params = {"text": args.text, "level": args.level, "type": args.type, "title": args.title}
    result = await ask(args, p.MEMORY_REMEMBER, {k: v for k, v in params.items() if v is not None},
                       p.RememberResult, session=True)
    emit(result, args.json, lambda: f"remembered ({args.level}): {result.filename}")
    return EXIT_OK


async def memory_forget(args: argparse.Namespace) -> int:
    result = await ask(args, p.MEMORY_FORGET, {"level": args.level, "filename": args.filename},
                       p.ForgetResult, session=False)
    if args.json or result.removed:
        emit(result, args.json, lambda: f"forgot {args.level}/{args.filename}")
    if not result.removed:  # a failure: one line on stderr
        raise CliError(f"no note {args.filename} in {args.level} memory")
    return EXIT_OK


async def memory_proposals(args: argparse.Namespace) -> int:
    result = await ask(args, p.MEMORY_PROPOSALS, {}, p.ProposalsResult, session=False)
    emit(result, args.json, lambda: describe_proposals(result))
    return EXIT_OK


def describe_proposals(r: p.ProposalsResult) -> str:
    """The queue, oldest first: one header per proposal and the unified diff of its note."""
    if not r.proposals:
        return "no memory proposals are waiting for review"
    lines = [f"{plural(len(r.proposals), 'memory proposal')} waiting for review, oldest first:"]
    for x in r.proposals:
        name = f"{x.level}/{x.filename}"
        lines += ["", f"{x.id}  {x.action} {name}  [{x.type}] {x.title}",
                  f"  {x.summary or '(no summary)'} · proposed {x.created_at} in session "
                  f"{x.session_id}"]
        diff = difflib.unified_diff(x.before.splitlines(keepends=True),
                                    x.after.splitlines(keepends=True),
                                    fromfile=f"{name} (now)" if x.before else "/dev/null",
                                    tofile=f"{name} (proposed)" if x.after else "/dev/null")
        lines += ["  " + line.rstrip("\n") for line in diff]
    lines += ["", "review: pseudoclaude memory review ID accept|reject [--content FILE]"]
    return "\n".join(lines)


def read_content(name: str) -> str:
    """The text of ``--content FILE`` (``-``: standard input)."""
    try:
        if name == "-":
            return sys.stdin.read()
        return Path(name).expanduser().read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CliError(f"--content {name}: not UTF-8 text") from None


async def memory_review(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"id": args.id, "decision": args.decision}
    if args.content is not None:
        if args.decision != "accept":
            raise ParamError("--content", "goes with accept (the text to accept instead)")
        params["content"] = read_content(args.content)
    try:
        result = await ask(args, p.MEMORY_REVIEW, params, p.ReviewResult, session=False)
    except ParamError as exc:
        if exc.field == "id":  # no such proposal: a failure (1), not a usage error
            raise CliError(str(exc).removeprefix("id: ")) from None
        raise
    emit(result, args.json, lambda: result.message)
    return EXIT_OK


# -- MCP servers --------------------------------------------------------------------------------


async def mcp_list(args: argparse.Namespace) -> int:
    """The MCP servers of the workspace, each started to list its tools (a project server
    waiting for an approval is asked about on a terminal)."""
    async with open_workspace(args, session=False) as ws:
        await ws.mcp.settle_approvals()
        await ws.mcp.tools()
        result = await methods.call(ws, p.MCP_LIST, {})
    assert isinstance(result, p.McpListResult)
    emit(result, args.json, lambda: views.describe_mcp(result))
    return EXIT_OK


def approve_command(name: str, root: Path) -> str:
    """The command that approves MCP server ``name`` of the folder ``root``."""
    where = "" if root == Path.cwd().resolve() else f" --workspace {shlex.quote(str(root))}"
    return f"pseudoclaude mcp approve {shlex.quote(name)}{where}"


async def settle_mcp_approvals(ws: Workspace) -> None:
    """Before a run streams: ask about every MCP server waiting for an approval (on the
    terminal) and wait for the answers, so a server allowed now starts for the run; then one
    line on stderr for each server still waiting (no terminal to ask, or no answer), naming
    the command that approves it."""
    for waiting in await ws.mcp.settle_approvals():
        where = views.MCP_SOURCE.get(waiting.source, waiting.source)
        why = ("there is no terminal to ask" if waiting.name in ws.mcp.unasked
               else "it was not approved")
        sys.stderr.write(f"pseudoclaude: MCP server {waiting.name} ({where}) waits for your "
                         f"approval and does not run: {why} (approve it: "
                         f"{approve_command(waiting.name, ws.root)})\n")
    sys.stderr.flush()


async def mcp_decide(args: argparse.Namespace, decision: str) -> int:
    """``mcp approve NAME`` (remembered outside the workspace, as an editor's "Allow for this
    session") and ``mcp deny NAME`` (a remembered approval withdrawn: the server does not start
    until approved again), through ``pseudoclaude/mcp/approve``."""
    async with open_workspace(args, session=False, approver=NoQuestions()) as ws:
        await ws.mcp.ready()
        config = next((c for c in ws.mcp.configs if c.name == args.name), None)
        try:
            result = await methods.call(ws, p.MCP_APPROVE, {"server": args.name,
                                                            "decision": decision})
        except ParamError as exc:
            if exc.field == "server":  # no such server: a failure (1), not a usage error
                raise CliError(str(exc).removeprefix("server: ")) from None
            raise
    assert isinstance(result, p.McpServerResult)
    server = result.server
    label = f"MCP server {server.name} ({views.MCP_SOURCE.get(server.source, server.source)})"
    asks = config is None or config.needs_approval
    if decision == "deny":
        text = (f"{label} is not approved in {ws.root}: it does not run until you approve it "
                f"({approve_command(server.name, ws.root)})" if asks else
                f"{label} does not wait for approvals: to keep it from running, write "
                "`disabled: true` in its entry")
    else:
        text = (f"approved {label} in {ws.root} (remembered until its command changes; "
                "withdraw it: pseudoclaude mcp deny NAME)".replace("NAME",
                                                                   shlex.quote(server.name))
                if asks else f"{label} needs no approval: it runs without one")
    emit(result, args.json, lambda: text)
    return EXIT_OK


async def mcp_approve(args: argparse.Namespace) -> int:
    return await mcp_decide(args, "allowSession")


async def mcp_deny(args: argparse.Namespace) -> int:
    return await mcp_decide(args, "deny")


# -- the folder's own settings -------------------------------------------------------------------


async def permissions_approve(args: argparse.Namespace) -> int:
    """Approve what the folder's own files ask for — its ``.PseudoClaude/config.yaml`` (where
    the prompts and the key go, what runs unasked) and the allow rules of its permission files
    — remembered for this folder until a file changes."""
    root = workspace_root(args.workspace)
    settings = settings_for(args, root)
    approved = await asyncio.to_thread(remember_approval, settings)
    async with open_workspace(args, session=False, approver=NoQuestions()) as ws:
        files = await asyncio.to_thread(ws.permissions.remember_waiting)
    lines = approved.lines() if approved else []
    if args.json:
        print(p.encode_line({"approved": lines, "files": files}))
    elif approved is None and not files:
        print(f"nothing waits for an approval in {root}")
    else:
        if approved is not None:
            print(f"approved this folder's {approved.name} (until it changes):")
            for line in lines:
                print(f"  - {line}")
        for name in files:
            print(f"approved the allow rules of this folder's {name} (until it changes)")
    return EXIT_OK


async def permissions_revoke(args: argparse.Namespace) -> int:
    """Withdraw those approvals: the folder's own settings and rules wait again."""
    root = workspace_root(args.workspace)
    settings = settings_for(args, root)
    await asyncio.to_thread(forget_approval, settings)
    async with open_workspace(args, session=False, approver=NoQuestions()) as ws:
        await asyncio.to_thread(ws.permissions.forget_files)
    if args.json:
        print(p.encode_line({"revoked": True}))
    else:
        print(f"this folder's {APPROVAL_NAME} and permission files wait for your approval "
              "again (if they ask for anything that needs one)")
    return EXIT_OK


async def permissions_list(args: argparse.Namespace) -> int:
    """The mode, the rules in effect, their problems, the sandbox, what waits."""
    async with open_workspace(args, session=True, approver=NoQuestions()) as ws:
        result = await methods.call(ws, p.PERMISSIONS, {})
    assert isinstance(result, p.PermissionsResult)
    emit(result, args.json, lambda: views.permissions_text(result))
    return EXIT_OK


async def permissions_check(args: argparse.Namespace) -> int:
    """What the engine decides about one call (a dry run: nothing runs or is asked)."""
    arguments: dict[str, Any]
    if args.arguments is not None:
        try:
            parsed = json.loads(args.arguments)
        except ValueError as exc:
            raise ParamError("--arguments", f"is not JSON ({exc})") from None
        if not isinstance(parsed, dict):
            raise ParamError("--arguments", "must be a JSON object")
        arguments = parsed
    elif args.tool == "run_command" and args.target:
        arguments = {"command": " ".join(args.target)}
    elif args.target:
        arguments = {"pattern" if args.tool == "find_files" else "path": args.target[0]}
    else:
        arguments = {}
    async with open_workspace(args, session=True, approver=NoQuestions()) as ws:
        result = await methods.call(ws, p.PERMISSIONS_CHECK,
                                    {"tool": args.tool, "arguments": arguments})
    assert isinstance(result, p.PermissionsCheckResult)
    emit(result, args.json, lambda: f"{result.decision}: {result.reason}")
    return EXIT_OK


# -- sessions -----------------------------------------------------------------------------------


async def sessions_list(args: argparse.Namespace) -> int:
    async with open_workspace(args, session=False) as ws:
        if args.json:
            result = await methods.call(ws, p.SESSIONS_LIST, {})
            print(p.encode_line(result))  # the LSP result (camelCase), as everywhere
            return EXIT_OK
        sessions = await ws.sessions()
        if not sessions:
            print(f"no sessions in {ws.sessions_dir}")
        for info in sessions:
            print(session_line(info))
    return EXIT_OK


NO_ANSWER = "(no answer)"
"""After the title of a session the model never answered in (its first run failed, or a fork
nobody prompted yet): it is not ``latest``, but resumes by its id."""


def session_line(s: SessionInfo) -> str:
    meta = [describe_age(s.updated), plural(s.message_count, "message"), describe_size(s.bytes)]
    if s.model:
        meta.append(s.model)
    mark = "" if s.answered else f"  {NO_ANSWER}"
    return f"{s.id}  {s.title}{mark}\n    {' · '.join(meta)}"


async def sessions_show(args: argparse.Namespace) -> int:
    """The restored history, as the model would see it next; never writes to the log."""
    if args.id != "latest" and not is_session_id(args.id):  # usage (2), as for run --session
        raise ParamError("ID", f"must be {p.SESSION_ID_HINT} or 'latest', got {args.id[:60]!r}")
    async with open_workspace(args, session=False) as ws:
        loaded = await ws.load(args.id)
    if args.json:
        print(p.encode_line({"id": loaded.session_id,
                             "messages": [message_to_json(m) for m in loaded.messages],
                             "bad_lines": loaded.bad_lines, "repaired": loaded.repaired}))
        return EXIT_OK
    print(f"session {loaded.session_id}: {plural(len(loaded.messages), 'message')}, "
          f"{plural(loaded.bad_lines, 'bad line')} skipped, "
          f"{plural(loaded.repaired, 'repair')}")
    for m in loaded.messages:
        print(render_message(m))
    return EXIT_OK
