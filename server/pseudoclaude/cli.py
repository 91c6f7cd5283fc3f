"""The ``pseudoclaude`` command (SPEC §9).

Exit codes: 0 ok, 1 failure (one line on stderr), 2 usage; ``run`` adds 3 (iteration or
unknown-tool limit) and 130 (canceled).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pseudoclaude.config import ConfigError, load_settings
from pseudoclaude.llm.errors import ProviderError
from pseudoclaude.session import (
    SessionError,
    SessionInfo,
    SessionStore,
    list_sessions,
    load_session,
)
from pseudoclaude.session.format import describe_age, describe_size, message_to_json, render_message
from pseudoclaude.workspace import WorkspaceError


class CliError(Exception):
    """A failure reported as one line on stderr with exit code 1."""


def _store(workspace: str | None) -> SessionStore:
    """The sessions of a workspace, where its settings (``dataDir``) put them."""
    root = Path(workspace or ".").expanduser()
    if not root.is_dir():
        raise CliError(f"workspace is not a folder: {root}")
    settings = load_settings(root.resolve())
    assert settings.data_dir is not None  # always set when a workspace is given
    return SessionStore(settings.data_dir)


def _cmd_sessions_list(args: argparse.Namespace) -> int:
    store = _store(args.workspace)
    sessions = list_sessions(store)
    if args.json:
        print(json.dumps({"sessions": [s.to_json() for s in sessions]}, ensure_ascii=False))
        return 0
    if not sessions:
        print(f"no sessions in {store.sessions_dir}")
        return 0
    for s in sessions:
        print(_session_line(s))
    return 0


def _session_line(s: SessionInfo) -> str:
    meta = [describe_age(s.updated), f"{s.message_count} messages", describe_size(s.bytes)]
    if s.model:
        meta.append(s.model)
    return f"{s.id}  {s.title}\n    {' · '.join(meta)}"


def _cmd_sessions_show(args: argparse.Namespace) -> int:
    store = _store(args.workspace)
    loaded = load_session(store, args.id)
    if args.json:
        print(json.dumps({
            "id": loaded.session_id,
            "messages": [message_to_json(m) for m in loaded.messages],
            "bad_lines": loaded.bad_lines,
            "repaired": loaded.repaired,
        }, ensure_ascii=False))
        return 0
    print(f"session {loaded.session_id}: {len(loaded.messages)} messages, "
          f"{loaded.bad_lines} bad lines skipped, {loaded.repaired} repairs")
    for m in loaded.messages:
        print(render_message(m))
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from pseudoclaude.cli_run import run_command

    root = Path(args.workspace or ".").expanduser()
    if not root.is_dir():
        raise CliError(f"workspace is not a folder: {root}")
    overrides = {key: value for key, value in (
        ("provider", args.provider), ("model", args.model), ("baseUrl", args.base_url),
        ("contextWindow", args.context_window), ("maxIterations", args.max_iterations),
    ) if value is not None}
    settings = load_settings(root.resolve(), overrides)
    prompt = " ".join(args.prompt)
    if args.prompt == ["-"]:
        prompt = sys.stdin.read()
    if not prompt.strip():
        raise CliError("the prompt is empty")
    return run_command(root.resolve(), settings, prompt, args.session, args.json)


def _cmd_lsp(args: argparse.Namespace) -> int:
    from pseudoclaude.lsp.logs import configure_stderr
    from pseudoclaude.lsp.server import create_server

    configure_stderr()
    server = create_server()
    if args.tcp:
        server.start_tcp("127.0.0.1", args.port)  # loopback only, never another interface
    else:
        server.start_io()
    return 0


def _cmd_fake_model(args: argparse.Namespace) -> int:
    from pseudoclaude.fake_model import main as fake_model_main

    argv = ["--port", str(args.port)]
    if args.script:
        argv += ["--script", args.script]
    return fake_model_main(argv)


def _cmd_demo(args: argparse.Namespace) -> int:
    if args.crash:
        from pseudoclaude.crash_demo import run_demo as run_crash_demo

        return run_crash_demo(keep=args.keep)
    from pseudoclaude.demo import run_demo

    return run_demo(keep=args.keep)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pseudoclaude",
        description="A coding agent with visible, resumable sessions and memory.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    lsp = commands.add_parser("lsp", help="the language server (stdio; what editors start)")
    lsp.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (default)")
    lsp.add_argument("--tcp", action="store_true", help="listen on 127.0.0.1 instead")
    lsp.add_argument("--port", type=int, default=2087, help="TCP port (default 2087)")
    lsp.set_defaults(handler=_cmd_lsp)

    run = commands.add_parser("run", help="run the agent on a prompt in a workspace")
    run.add_argument("prompt", nargs="+", metavar="PROMPT", help="the task ('-': read stdin)")
    run.add_argument("--workspace", metavar="DIR", help="workspace folder (default: .)")
    run.add_argument("--session", default="new", metavar="ID|latest|new",
                     help="continue a session (default: a new one)")
    run.add_argument("--json", action="store_true", help="print events as JSON lines")
    run.add_argument("--provider", choices=("anthropic", "openai"))
    run.add_argument("--model")
    run.add_argument("--base-url", metavar="URL", help="provider base URL")
    run.add_argument("--context-window", type=int, metavar="TOKENS")
    run.add_argument("--max-iterations", type=int, metavar="N")
    run.set_defaults(handler=_cmd_run)

    sessions = commands.add_parser("sessions", help="list and inspect session logs")
    sessions_cmds = sessions.add_subparsers(dest="sessions_command", required=True,
                                            metavar="SUBCOMMAND")
    listing = sessions_cmds.add_parser("list", help="sessions of a workspace, newest first")
    listing.add_argument("--workspace", metavar="DIR", help="workspace folder (default: .)")
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    listing.set_defaults(handler=_cmd_sessions_list)
    show = sessions_cmds.add_parser("show", help="the restored messages of one session")
    show.add_argument("id", metavar="ID", help="a session id, or 'latest'")
    show.add_argument("--workspace", metavar="DIR", help="workspace folder (default: .)")
    show.add_argument("--json", action="store_true", help="print one JSON object")
    show.set_defaults(handler=_cmd_sessions_show)

    fake = commands.add_parser(
        "fake-model", help="a scripted model server on 127.0.0.1 (Anthropic and OpenAI formats)")
    fake.add_argument("--port", type=int, default=0, help="port (0: pick a free one)")
    fake.add_argument("--script", metavar="FILE",
                      help="JSON script of turns and rules (default: the built-in demo script)")
    fake.set_defaults(handler=_cmd_fake_model)

    demo = commands.add_parser(
        "demo", help="the whole flow through the real server (offline unless an API key is set)")
    demo.add_argument("--keep", action="store_true", help="keep the demo workspace")
    demo.add_argument("--crash", action="store_true",
                      help="instead: a session writer killed with SIGKILL, then resumed")
    demo.set_defaults(handler=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except (CliError, SessionError, ConfigError, WorkspaceError, ProviderError) as exc:
        message = str(exc)
        if not message.startswith("pseudoclaude"):
            message = f"pseudoclaude: {message}"
        print(message, file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        print(f"pseudoclaude: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
