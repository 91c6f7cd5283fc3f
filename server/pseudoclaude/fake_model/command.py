"""``pseudoclaude fake-model``: the command line of the fake model server."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import NoReturn

from pseudoclaude.fake_model.script import DEMO_SCRIPT, Script, ScriptError
from pseudoclaude.fake_model.server import HOST, MAX_PORT, FakeModelServer


def port_number(text: str) -> int:
    """``--port``'s type: a TCP port, 0 to 65535 (0: the system picks a free one)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)") from None
    if not 0 <= port <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0-65535)")
    return port


class _Parser(argparse.ArgumentParser):
    """A usage error is one line (exit 2), naming ``--help``."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    """``pseudoclaude fake-model [--port N] [--script FILE]``: serve until interrupted.

    Prints the base URL (``http://127.0.0.1:PORT``) as the first line on stdout.
    """
    parser = _Parser(
        prog="pseudoclaude fake-model",
        description="Scripted model server on 127.0.0.1 (Anthropic and OpenAI wire formats).")
    parser.add_argument("--port", type=port_number, default=0,
                        help="port (0: pick a free one)")
    parser.add_argument("--script", type=Path,
                        help="JSON script of turns/rules (default: the built-in demo script)")
    args = parser.parse_args(argv)
    try:
        script = Script(args.script if args.script else DEMO_SCRIPT)
    except ScriptError as exc:
        print(f"pseudoclaude {exc}", file=sys.stderr)
        return 2
    except json.JSONDecodeError as exc:
        print(f"pseudoclaude fake-model: {args.script} is not valid JSON: {exc}",
              file=sys.stderr)
        return 2
    except (OSError, UnicodeDecodeError) as exc:
        print(f"pseudoclaude fake-model: cannot read {args.script}: {exc}", file=sys.stderr)
        return 2
    try:
        server = FakeModelServer(script, port=args.port)
    except OSError as exc:
        print(f"pseudoclaude fake-model: cannot listen on {HOST}:{args.port}: {exc}",
              file=sys.stderr)
        return 1
    done = threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: done.set())
    with server:
        print(server.base_url, flush=True)
        try:
            while not done.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    return 0
