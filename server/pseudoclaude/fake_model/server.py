"""The fake model's HTTP server on 127.0.0.1 and its facade, :class:`FakeModelServer`: routes,
recorded requests, the ``limit`` mode, injected failures, streams (cut, stalled, delayed)."""

from __future__ import annotations

import copy
import json
import select
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any

from pseudoclaude.fake_model import anthropic_wire, openai_wire
from pseudoclaude.fake_model.cache import PrefixCache
from pseudoclaude.fake_model.errors import error_body, limit_error
from pseudoclaude.fake_model.reply import Reply
from pseudoclaude.fake_model.script import Script, ScriptError, request_facts
from pseudoclaude.fake_model.tokens import prompt_tokens

if TYPE_CHECKING:
    from pseudoclaude.llm.provider import Provider

HOST = "127.0.0.1"
MAX_PORT = 65_535


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read stdout
        return

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/_requests":
            self.send_json(200, self.server.owner.requests)
        else:
            self.server.owner.answer_local(self, "GET", self.path, None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/_script":
            try:
                self.server.owner.script = Script(json.loads(raw or b"{}"))
            except (ValueError, ScriptError) as exc:
                self.send_json(400, {"error": {"message": str(exc)}})
                return
            self.send_json(200, {"ok": True})
            return
        protocol = {"/v1/messages": "anthropic", "/messages": "anthropic",
                    "/v1/chat/completions": "openai", "/chat/completions": "openai"}.get(path)
        if protocol is None:
            self.server.owner.answer_local(self, "POST", path, raw)
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self.send_json(400, {"error": {"type": "invalid_request_error",
                                       "message": "body is not JSON"}})
            return
        self.server.owner.serve(self, protocol, path, body)

    # --- streaming helpers (used by FakeModelServer.serve) ----------------------------------

    def peer_gone(self) -> bool:
        """Whether the client closed its end (EOF waiting on our socket)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            return bool(self.connection.recv(1, socket.MSG_PEEK) == b"")
        except OSError:
            return True

    def send_chunk(self, data: bytes) -> bool:
        """Write one HTTP chunk; ``False`` when the client is gone."""
        if self.peer_gone():
            return False
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except OSError:
            return False
        return True

    def cut(self) -> None:
        """Close the connection abruptly (no terminating chunk)."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: FakeModelServer


class FakeModelServer:
    """The scripted model server, on a background thread; a context manager for tests.

    ``base_url`` works for both SDKs (``http://127.0.0.1:PORT``); ``requests`` are the recorded
    requests (``{"id", "path", "protocol", "stream", "body", "reply", "status",
    "disconnected", "completed"}``), oldest first.
    """

    def __init__(self, script: Any = None, *, port: int = 0) -> None:
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= MAX_PORT:
            raise ValueError(f"fake-model: port must be 0-{MAX_PORT}, got {port!r}")
        self.script = script if isinstance(script, Script) else Script(script)
        self._records: list[dict[str, Any]] = []
        self._probes: list[dict[str, Any]] = []
        self.cache = PrefixCache()
        """The prompt cache of the ``"cache": true`` mode (all models; keys name the model)."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._holds: dict[str, threading.Event] = {}
        self._httpd = _HTTPServer((HOST, port), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._records)

    @property
    def probes(self) -> list[dict[str, Any]]:
        """The requests to other paths (``{"method", "path", "body", "status"}``: what a
        client asked a local server about itself), oldest first; not in :attr:`requests`."""
        with self._lock:
            return copy.deepcopy(self._probes)

    def answer_local(self, handler: _Handler, method: str, path: str, raw: bytes | None
                     ) -> None:
        """A request to another path than the two APIs: the script's ``local`` answer for
        it (a local server's ``/props``, ``/v1/models``, ``/api/show``), else 404."""
        path = path.split("?", 1)[0].rstrip("/")
        payload = self.script.local.get(path)
        status = 404 if payload is None else 200
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._lock:
            self._probes.append({"method": method, "path": path, "body": body,
                                 "status": status})
        handler.send_json(status, payload if payload is not None else {
            "error": {"message": f"no route {path}"}})

    def add_turns(self, *turns: dict[str, Any]) -> None:
        self.script.add_turns(*turns)

    def provider_source(self, protocol: str = "anthropic", model: str = "fake-model",
                        read_timeout: float = 30.0) -> Callable[[], Awaitable[Provider]]:
        """A provider source (what ``CompactRuntime`` and ``MemoryManager`` take) on this
        server through the real SDK of ``protocol``: created on first use, then reused."""
        from pseudoclaude.config import Secret
        from pseudoclaude.llm.provider import ProviderOptions, create_provider

        cache: list[Provider] = []

        async def source() -> Provider:
            if not cache:
                cache.append(await create_provider(ProviderOptions(
                    provider=protocol, model=model, api_key=Secret("sk-fake-model"),
                    base_url=self.base_url, max_retries=0, read_timeout=read_timeout)))
            return cache[0]

        return source

    def start(self) -> FakeModelServer:
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,),
                                            name="fake-model", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def wait_for(self, predicate: Callable[[list[dict[str, Any]]], bool],
                 timeout: float = 5.0) -> bool:
        """Poll ``predicate(requests)`` until it holds (``True``) or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self.requests):
                return True
            time.sleep(0.01)
        return predicate(self.requests)

    # --- serving -----------------------------------------------------------------------------

    def _update(self, record: dict[str, Any], **changes: Any) -> None:
        with self._lock:
            record.update(changes)

    def _hold(self, name: str) -> threading.Event:
        with self._lock:
            return self._holds.setdefault(name, threading.Event())

    def release(self, name: str) -> None:
        """Let the replies that ``hold`` ``name`` go on (those to come too)."""
        self._hold(name).set()

    def _wait_release(self, name: str, timeout: float = 60.0) -> None:
        """A reply's ``hold``: wait (before answering) until :meth:`release` or the stop."""
        gate = self._hold(name)
        deadline = time.monotonic() + timeout
        while not gate.is_set() and not self._stop.is_set() and time.monotonic() < deadline:
            gate.wait(0.05)

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stop.wait(seconds)

    def serve(self, handler: _Handler, protocol: str, path: str, body: dict[str, Any]) -> None:
        script = self.script
        stream = bool(body.get("stream"))
        if script.max_tokens is not None:
            tokens = prompt_tokens(body)
            if tokens > script.max_tokens:
                status, payload = limit_error(protocol, tokens, script.max_tokens)
                with self._lock:
                    self._records.append({
                        "id": len(self._records), "path": path, "protocol": protocol,
                        "stream": stream, "body": body, "reply": "limit", "status": status,
                        "disconnected": False, "completed": True})
                handler.send_json(status, payload)
                return
        origin, spec = script.choose(request_facts(protocol, body))
        with self._lock:
            record: dict[str, Any] = {
                "id": len(self._records), "path": path, "protocol": protocol, "stream": stream,
                "body": body, "reply": origin, "status": 200, "disconnected": False,
                "completed": False}
            self._records.append(record)
        if spec.get("error") is not None and spec.get("error_after") is None:
            status, payload = error_body(protocol, spec["error"])
            headers = ({"retry-after": str(spec["retry_after"])}
                       if spec.get("retry_after") is not None else None)
            self._sleep(float(spec.get("stall", 0)))
            handler.send_json(status, payload, headers)
            self._update(record, status=status, completed=True)
            return
        if spec.get("hold"):
            self._wait_release(str(spec["hold"]))
        billed = self.cache.bill(protocol, body) if script.cache else None
        reply = Reply(spec, body, billed)
        if billed is not None:
            self._update(record, usage={"input": reply.input, "cache_read": reply.cache_read,
                                        "cache_write": reply.cache_write,
                                        "output": reply.output})
        if not stream:
            self._sleep(float(spec.get("stall", 0)))
            if spec.get("cut_after") is not None:
                handler.cut()
                self._update(record, status=0)
                return
            handler.send_json(200, anthropic_wire.anthropic_message(reply)
                              if protocol == "anthropic" else openai_wire.openai_completion(reply))
            self._update(record, completed=True)
            return
        self._stream(handler, protocol, body, spec, reply, record)

    def _frames(self, protocol: str, body: dict[str, Any], spec: dict[str, Any],
                reply: Reply) -> Iterator[bytes]:
        if protocol == "anthropic":
            return anthropic_wire.frames(reply)
        options = body.get("stream_options") or {}
        return openai_wire.frames(
            reply, include_usage=bool(options.get("include_usage")) and not spec.get("omit_usage"),
            finish=not spec.get("omit_finish"), done=not spec.get("omit_done"))

    def _stream(self, handler: _Handler, protocol: str, body: dict[str, Any],
                spec: dict[str, Any], reply: Reply, record: dict[str, Any]) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        cut_after = spec.get("cut_after")
        error_after = spec.get("error_after")
        stall_after = int(spec.get("stall_after", 0))
        delay = float(spec.get("delay", 0))
        for sent, frame in enumerate(self._frames(protocol, body, spec, reply)):
            if sent == stall_after:
                self._sleep(float(spec.get("stall", 0)))
            if cut_after is not None and sent >= int(cut_after):
                handler.cut()
                return
            if error_after is not None and sent >= int(error_after):
                _, payload = error_body(protocol, spec["error"])
                frame = (anthropic_wire.error_frame(payload) if protocol == "anthropic"
                         else openai_wire.error_frame(payload))
                handler.send_chunk(frame)
                break
            self._sleep(delay)
            if self._stop.is_set() or not handler.send_chunk(frame):
                self._update(record, disconnected=True)
                return
        else:
            if cut_after is not None:  # cut_after beyond the last event: cut at the end
                handler.cut()
                return
        try:
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except OSError:
            self._update(record, disconnected=True)
            return
        self._update(record, completed=True)
