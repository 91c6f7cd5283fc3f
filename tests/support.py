"""Helpers every test folder uses (``pythonpath = ["tests"]`` makes this importable as
``support``; conftest files are not importable under ``--import-mode=importlib``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pseudoclaude.fake_model.script import request_facts
from pseudoclaude.redact import without_credentials


def server_env(home: Path | str) -> dict[str, str]:
    """The environment of a server or CLI a test starts: no real provider credentials, and a
    private HOME (so the user's own memory and config stay out of it)."""
    return without_credentials() | {"HOME": str(home)}


async def until(predicate: Callable[[], Any], timeout: float = 20.0, what: str = "") -> None:
    """Wait for ``predicate()`` (a notification to arrive, a request to reach the model)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting{' for ' + what if what else ''}")
        await asyncio.sleep(0.02)


def is_summary_request(record: dict[str, Any]) -> bool:
    """Whether a request the fake model recorded is a compaction's summary request (either
    form: the transcript with its own system prompt, or the cache-friendly one)."""
    return bool(request_facts(record["protocol"], record["body"])["summary"])


class Listener:
    """A plain HTTP server on 127.0.0.1 standing in for someone else's server (the address a
    cloned repository's settings point at): it records every request it gets (method, path,
    headers) and answers 500, so a client fails fast. A context manager."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.requests: list[dict[str, Any]] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _record(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                owner.requests.append({"method": self.command, "path": self.path,
                                       "headers": {k.lower(): v for k, v in self.headers.items()},
                                       "body": body})
                data = b'{"error": {"type": "api_error", "message": "listener"}}'
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _record

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Listener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def policy_gate(approvals: Any, approver: Any, root: Path | str | None = None,
                **options: Any) -> Any:
    """A gate whose engine has no rules: ``default`` mode with these ``approvals.*`` (what the
    settings alone decide), confined to ``root`` (default: the current folder)."""
    from pseudoclaude.agent.approvals import Gate
    from pseudoclaude.permissions import PermissionEngine

    engine = PermissionEngine(Path.cwd() if root is None else root, approvals=approvals)
    return Gate(engine, approver, **options)
