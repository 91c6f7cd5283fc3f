"""``pseudoclaude fake-model``: the command line of the fake model server."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from pseudoclaude.fake_model.script import DEMO_SCRIPT, Script, ScriptError
from pseudoclaude.fake_model.server import HOST, FakeModelServer


def main(argv: list[str] | None = None) -> int:
    """``pseudoclaude fake-model [--port N] [--script FILE]``: serve until interrupted.

    Prints the base URL (``http://127.0.0.1:PORT``) as the first line on stdout.
    """
    parser = argparse.ArgumentParser(
        prog="pseudoclaude fake-model",
        description="Scripted model server on 127.0.0.1 (Anthropic and OpenAI wire formats).")
    parser.add_argument("--port", type=int, default=0, help="port (0: pick a free one)")
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
