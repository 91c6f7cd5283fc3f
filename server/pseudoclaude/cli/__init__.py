"""The ``pseudoclaude`` command (SPEC §9, §11 "CLI parity"): the parser and the exit codes.

The commands live beside it: :mod:`.run` (``run``), :mod:`.state` (``context``, ``compact``,
``memory``, ``mcp``, ``permissions``, ``sessions``), :mod:`.status` (``status``),
:mod:`.hooks` (``hooks list``),
:mod:`.rewind` (``rewind``, ``sessions fork``) and :mod:`.approver` (the terminal's
approvals). ``lsp``, ``acp``, ``fake-model`` and ``demo`` are dispatched lazily to the modules
that serve them.

Exit codes: 0 ok, 1 failure (one line on stderr), 2 usage (argparse, bad params such as an
empty prompt or text, a session id that is not one); ``run`` adds 3 (iteration or unknown-tool
limit) and 130 (canceled). A well-formed id of no session, ``memory review`` of an unknown or
stale proposal and ``memory forget`` of no note are failures (1).
Every failure the user can fix is a :class:`~pseudoclaude.errors.PseudoClaudeError` (or an
``OSError``) and is printed as one line.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from pseudoclaude import __version__
from pseudoclaude.api.protocol import PERMISSION_MODES, ParamError
from pseudoclaude.cli import agents as cli_agents
from pseudoclaude.cli import hooks as cli_hooks
from pseudoclaude.cli import rewind as cli_rewind
from pseudoclaude.cli import skills as cli_skills
from pseudoclaude.cli import state as cli_state
from pseudoclaude.cli import status as cli_status
from pseudoclaude.cli import worktree as cli_worktree
from pseudoclaude.cli.state import CliError, run_async, settings_for, workspace_root
from pseudoclaude.config import PROVIDERS, ConfigError
from pseudoclaude.errors import EXPECTED_ERRORS
from pseudoclaude.workspace import REWIND_MODES

EXIT_FAILURE, EXIT_USAGE, EXIT_CANCELED = 1, 2, 130
LEVELS = ("project", "user")


def _cmd_run(args: argparse.Namespace) -> int:
    from pseudoclaude.cli.run import run_command

    root = workspace_root(args.workspace)
    prompt = sys.stdin.read() if args.prompt == ["-"] else " ".join(args.prompt)
    if not prompt.strip():
        raise ParamError("prompt", "must not be empty")
    if args.worktree and args.session != "new":
        raise ParamError("--worktree", "starts a new session: it does not go with --session")
    settings = settings_for(args, root)
    return run_command(root, settings, prompt, args.session, args.json, args.verbose,
                       worktree=args.worktree, mode=args.mode)


def _cmd_lsp(args: argparse.Namespace) -> int:
    if args.port is not None and not args.tcp:
        raise ParamError("--port", "goes with --tcp (the server speaks stdio otherwise)")
    from pseudoclaude.lsp.logs import configure_stderr
    from pseudoclaude.lsp.server import create_server

    configure_stderr()
    server = create_server()
    if args.tcp:
        server.start_tcp("127.0.0.1", args.port or 2087)  # loopback only
    else:
        server.start_io()
    return 0


def _cmd_acp(args: argparse.Namespace) -> int:
    from pseudoclaude.acp.server import run as run_acp

    # A bad flag is a usage error now; a config file's error goes to the session that meets it.
    with contextlib.suppress(ConfigError):
        settings_for(args, Path.cwd())
    return run_acp(lambda root: settings_for(args, root))


def _cmd_fake_model(args: argparse.Namespace) -> int:
    from pseudoclaude.fake_model import main as fake_model_main

    argv = ["--port", str(args.port)]
    if args.script:
        argv += ["--script", args.script]
    return fake_model_main(argv)


def _fake_model_port(text: str) -> int:
    from pseudoclaude.fake_model.command import port_number  # 0 allowed: a free port

    return port_number(text)


def _cmd_demo(args: argparse.Namespace) -> int:
    if args.crash:
        from pseudoclaude.crash_demo import run_demo as run_crash_demo

        return run_crash_demo(clean=args.clean)
    from pseudoclaude.demo import run_demo

    return run_demo(clean=args.clean, offline=args.offline)


class Parser(argparse.ArgumentParser):
    """Usage errors are one line too (exit 2), naming the command's ``--help``."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _async(command: Callable[[argparse.Namespace], Any]) -> Callable[[argparse.Namespace], int]:
    return lambda args: run_async(command, args)


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value[:20]!r}"
                                         ) from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {number}")
    return number


def _port(value: str) -> int:
    number = _positive(value)
    if number > 65535:
        raise argparse.ArgumentTypeError(f"must be a port number (1-65535), got {number}")
    return number


def _common(parser: argparse.ArgumentParser, *, json: bool = True) -> None:
    parser.add_argument("--workspace", metavar="DIR", help="workspace folder (default: .)")
    if json:
        parser.add_argument("--json", action="store_true",
                            help="print the result as one JSON object (the LSP result)")


def _provider_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", choices=PROVIDERS)
    parser.add_argument("--model")
    parser.add_argument("--base-url", metavar="URL", help="provider base URL")
    parser.add_argument("--context-window", type=_positive, metavar="TOKENS")


Subcommands = Any  # argparse's private _SubParsersAction


def _group(commands: Subcommands, name: str, help: str) -> Subcommands:
    """``pseudoclaude NAME SUBCOMMAND``."""
    return commands.add_parser(name, help=help).add_subparsers(
        dest=f"{name}_command", required=True, metavar="SUBCOMMAND")


def _state_command(commands: Subcommands, name: str, help: str,
                   handler: Callable[[argparse.Namespace], Any], *,
                   provider: bool = False) -> argparse.ArgumentParser:
    """A command of :mod:`pseudoclaude.cli.state`: ``--workspace``, ``--json`` (and the
    provider flags)."""
    parser: argparse.ArgumentParser = commands.add_parser(name, help=help)
    _common(parser)
    if provider:
        _provider_flags(parser)
    parser.set_defaults(handler=_async(handler))
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="pseudoclaude",
        description="A coding agent with visible, resumable sessions and memory.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     parser_class=Parser)

    lsp = commands.add_parser("lsp", help="the language server (stdio; what editors start)")
    lsp.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (default)")
    lsp.add_argument("--tcp", action="store_true", help="listen on 127.0.0.1 instead")
    lsp.add_argument("--port", type=_port, help="TCP port with --tcp (default 2087)")
    lsp.set_defaults(handler=_cmd_lsp)

    acp = commands.add_parser(
        "acp", help="the Agent Client Protocol agent (stdio; what Zed, JetBrains and other ACP "
                    "clients start)")
    _provider_flags(acp)
    acp.set_defaults(handler=_cmd_acp)

    run = commands.add_parser("run", help="run the agent on a prompt in a workspace")
    run.add_argument("prompt", nargs="+", metavar="PROMPT", help="the task ('-': read stdin)")
    _common(run, json=False)
    run.add_argument("--session", default="new", metavar="ID|latest|new",
                     help="continue a session (default: a new one)")
    run.add_argument("--worktree", action="store_true",
                     help="a new session in a git worktree of its own (its changes reach the "
                          "folder with: pseudoclaude worktree apply)")
    run.add_argument("--json", action="store_true",
                     help="print events as JSON lines, the result last")
    run.add_argument("-v", "--verbose", action="store_true",
                     help="also show provider retries")
    _provider_flags(run)
    run.add_argument("--max-iterations", type=_positive, metavar="N")
    run.add_argument("--mode", choices=PERMISSION_MODES, metavar="MODE",
                     help="the session's permission mode: " + ", ".join(PERMISSION_MODES))
    run.set_defaults(handler=_cmd_run)

    context = _state_command(commands, "context", "what fills the context of the latest "
                             "session", cli_state.context, provider=True)
    compact = _state_command(commands, "compact", "compact the latest session now",
                             cli_state.compact, provider=True)
    status = _state_command(commands, "status", "the latest session at a glance: its mode, "
                            "model, tokens, sandbox, MCP servers, hooks and skills",
                            cli_status.status)
    for command in (context, compact, status):
        command.add_argument("--session", metavar="ID|latest",
                             help="another session than the latest (the newest one the model "
                                  "answered in)")
    compact.add_argument("--instructions", metavar="TEXT",
                         help="what the summary should focus on")
    what = compact.add_mutually_exclusive_group()
    what.add_argument("--preview", action="store_true",
                      help="say what a compaction would do now (no model call, nothing written)")
    what.add_argument("--undo", action="store_true",
                      help="bring back what the last compaction summarised")

    memory = _group(commands, "memory", "project and user memory")
    _state_command(memory, "show", "the notes and the index the model sees",
                   cli_state.memory_show)
    remember = _state_command(memory, "remember", "save a note now", cli_state.memory_remember)
    remember.add_argument("text", metavar="TEXT")
    remember.add_argument("--level", choices=LEVELS, default="project")
    remember.add_argument("--type", help="user_preference, correction_feedback, "
                                         "project_knowledge or reference_material")
    remember.add_argument("--title")
    forget = _state_command(memory, "forget", "delete a note and its index line",
                            cli_state.memory_forget)
    forget.add_argument("level", choices=LEVELS, metavar="LEVEL")
    forget.add_argument("filename", metavar="FILENAME")
    _state_command(memory, "proposals", "changes background updates proposed (memory.mode: "
                   "confirm), oldest first, with their diffs", cli_state.memory_proposals)
    review = _state_command(memory, "review", "accept or reject a memory proposal",
                            cli_state.memory_review)
    review.add_argument("id", metavar="ID", help="the proposal's id (memory proposals)")
    review.add_argument("decision", choices=("accept", "reject"), metavar="accept|reject")
    review.add_argument("--content", metavar="FILE",
                        help="accept this text instead (a whole note, or a body without front "
                             "matter; '-': standard input)")

    mcp = _group(commands, "mcp", "MCP servers")
    _state_command(mcp, "list", "the MCP servers of the workspace: where each is configured, "
                   "its status and tools", cli_state.mcp_list)
    for name, help, handler in (
            ("approve", "let a server of the folder's .mcp.json (or config.yaml) run, "
                        "remembered until its command changes", cli_state.mcp_approve),
            ("deny", "withdraw that approval: the server does not run until approved again",
             cli_state.mcp_deny)):
        decided = _state_command(mcp, name, help, handler)
        decided.add_argument("name", metavar="NAME", help="the server's name (mcp list)")

    hooks = _group(commands, "hooks", "the hooks of a folder")
    _state_command(hooks, "list", "every hook by event: what it runs, where it is defined, "
                   "whether it runs (or why it cannot be read)", cli_hooks.hooks_list)
    _state_command(hooks, "approve", "let the folder's own .PseudoClaude/hooks.yaml run, "
                   "remembered until it changes", cli_hooks.hooks_approve)

    skills = _group(commands, "skills", "the skills of a folder")
    skills_list = _state_command(skills, "list", "every skill: where it is defined, whether the "
                                 "latest session loaded it, what it does (and the skills that "
                                 "cannot be read, with their file, line and why)",
                                 cli_skills.skills_list)
    skills_list.add_argument("--session", metavar="ID|latest",
                             help="another session than the latest")

    agents = _group(commands, "agents", "the sub-agents of a session")
    agents_list = _state_command(agents, "list", "the latest session's sub-agents: type, name, "
                                 "status, tokens, when each started and what it was asked",
                                 cli_agents.agents_list)
    agents_show = _state_command(agents, "show", "one sub-agent's conversation, as its model "
                                 "saw it", cli_agents.agents_show)
    agents_show.add_argument("agent_id", metavar="AGENT_ID", help="its id (agents list)")
    for one in (agents_list, agents_show):
        one.add_argument("--session", metavar="ID|latest", help="another session than the latest")

    permissions = commands.add_parser(
        "permissions", help="the permission mode, rules and sandbox of a folder, and the "
                            "approval of its own settings and permission files")
    _common(permissions)
    permissions.set_defaults(handler=_async(cli_state.permissions_list))
    permission_commands = permissions.add_subparsers(
        dest="permissions_command", required=False, metavar="SUBCOMMAND")
    _state_command(permission_commands, "list", "the mode, every rule in effect and where it "
                   "comes from, problems, the sandbox (the default)", cli_state.permissions_list)
    check = _state_command(permission_commands, "check", "what a tool call would meet: allow, "
                           "ask or deny, and why (nothing runs)", cli_state.permissions_check)
    check.add_argument("tool", metavar="TOOL",
                       help="the tool as the model calls it: run_command, read_file, "
                            "write_file, edit_file, find_files, search_code, mcp__server__tool")
    check.add_argument("target", nargs="*", metavar="COMMAND|PATH",
                       help="run_command: the command line; a file tool: its path")
    check.add_argument("--arguments", metavar="JSON", help="the call's arguments as JSON")
    _state_command(permission_commands, "approve", "apply what the folder's own settings and "
                   "permission files ask for (where prompts and your key go, what runs "
                   "unasked) until they change", cli_state.permissions_approve)
    _state_command(permission_commands, "revoke", "withdraw that approval",
                   cli_state.permissions_revoke)

    sessions = _group(commands, "sessions", "list and inspect session logs")
    _state_command(sessions, "list", "sessions of a workspace, newest first",
                   cli_state.sessions_list)
    shown = _state_command(sessions, "show", "the restored messages of one session",
                           cli_state.sessions_show)
    shown.add_argument("id", metavar="ID", help="a session id, or 'latest'")
    fork = _state_command(sessions, "fork", "a new session from a session's conversation "
                          "(the source is unchanged)", cli_rewind.sessions_fork)
    fork.add_argument("id", nargs="?", default="latest", metavar="ID",
                      help="the session to fork (default: latest)")
    fork.add_argument("--turn", type=_positive, metavar="N",
                      help="keep the conversation before prompt N (default: all of it)")

    worktree = _group(commands, "worktree", "the git worktree of a worktree session "
                      "(run --worktree)")
    for name, help, handler in (
            ("status", "where the session works and the files it changed", cli_worktree.status),
            ("apply", "write the session's changes into the folder (all or nothing: exit 1 and "
                      "the conflicts listed when you changed one of those files too)",
             cli_worktree.apply),
            ("remove", "remove the worktree and its branch (refused with changes not applied, "
                       "unless --force)", cli_worktree.remove)):
        command = _state_command(worktree, name, help, handler)
        command.add_argument("--session", metavar="ID|latest",
                             help="another session than the latest")
        if name == "remove":
            command.add_argument("--force", action="store_true",
                                 help="remove it even with changes not applied (they are lost)")

    rewind = _state_command(commands, "rewind", "take the code, the conversation or both "
                            "back to before a prompt of the latest session", cli_rewind.rewind)
    rewind.add_argument("--list", action="store_true",
                        help="list the prompts (the default without --turn)")
    rewind.add_argument("--turn", type=_positive, metavar="N",
                        help="go back to before prompt N (see --list)")
    rewind.add_argument("--mode", choices=REWIND_MODES, default="both",
                        help="what to take back (default: both)")
    rewind.add_argument("--force", action="store_true",
                        help="also restore files changed outside the agent since")
    rewind.add_argument("--preview", action="store_true",
                        help="only show what the rewind would do")
    rewind.add_argument("-y", "--yes", action="store_true",
                        help="do not ask on a terminal")
    rewind.add_argument("--session", metavar="ID|latest",
                        help="another session than the latest")

    fake = commands.add_parser(
        "fake-model", help="a scripted model server on 127.0.0.1 (Anthropic and OpenAI formats)")
    fake.add_argument("--port", type=_fake_model_port, default=0,
                      help="port (0: pick a free one)")
    fake.add_argument("--script", metavar="FILE",
                      help="JSON script of turns and rules (default: the built-in demo script)")
    fake.set_defaults(handler=_cmd_fake_model)

    demo = commands.add_parser(
        "demo", help="the whole flow through the real server (offline unless an API key is set)")
    demo.add_argument("--offline", action="store_true",
                      help="always the built-in scripted model: never a provider key from the "
                           "environment")
    demo.add_argument("--clean", action="store_true",
                      help="remove the demo's folder at the end (kept by default)")
    demo.add_argument("--keep", action="store_true", help=argparse.SUPPRESS)  # the default now
    demo.add_argument("--crash", action="store_true",
                      help="instead: a session writer killed with SIGKILL, then resumed")
    demo.set_defaults(handler=_cmd_demo)
    return parser


def _fail(message: str, code: int) -> int:
    if not message.startswith("pseudoclaude"):
        message = f"pseudoclaude: {message}"
    print(" ".join(message.split()), file=sys.stderr)
    return code


def _unknown_option(argv: Sequence[str]) -> str | None:
    """An option before the command that ``pseudoclaude`` itself does not know (``--bogus``):
    argparse would only say that the command is missing."""
    for arg in argv:
        if arg in ("-", "--") or not arg.startswith("-"):
            return None  # the command (argparse checks it)
        name = arg.split("=", 1)[0]
        if name != "-h" and not (name.startswith("--") and len(name) > 2
                                 and any(o.startswith(name) for o in ("--help", "--version"))):
            return arg
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    unknown = _unknown_option(sys.argv[1:] if argv is None else argv)
    if unknown is not None:
        parser.error(f"unknown option {unknown}")
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except ParamError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except BrokenPipeError:  # stdout closed (| head): a quiet end
        from pseudoclaude.cli.run import silence

        silence(sys.stdout)
        return 0
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        return _fail(f"{exc.strerror or exc}{where}", EXIT_FAILURE)
    except EXPECTED_ERRORS as exc:
        return _fail(str(exc), EXIT_FAILURE)
    except KeyboardInterrupt:
        return EXIT_CANCELED


__all__ = ["CliError", "build_parser", "main"]
