"""JSON-RPC messages over stdio for ``pseudoclaude acp`` (one JSON object per line).

:class:`StdioTransport` is the ``Transport`` of the ``agent-client-protocol`` package (decoded
messages in and out: ``send``, ``receive``, ``close``), written here rather than taken from
the package's stdio helpers so that:

- the process never dies on input: a line that is not JSON gets a ``-32700`` error, one that is
  not a request, notification or response gets ``-32600`` (id ``null`` when it has none), an
  oversized line (over :data:`MAX_LINE_BYTES`) is skipped with ``-32600``;
- stdout carries the protocol only: it is duplicated for the protocol and fd 1 then points at
  stderr, so a stray ``print`` or a library's output can never corrupt a message;
- nothing written contains an API key: every outgoing line is checked against the keys the
  process knows (:attr:`StdioTransport.secrets`) and any occurrence becomes ``[redacted]``;
- a parameter error from the package's validation says which field and why in its message
  (``Invalid params: sessionId: Field required``) instead of only ``Invalid params``;
- session updates are written in emission order: :meth:`StdioTransport.post` writes at once,
  so every update of a turn is on the wire before the turn's response;
- ACP requests the package does not route (``session/delete`` in 0.12) reach the agent: they
  are handed to the connection as extension methods (:meth:`StdioTransport.route_as_extensions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any, BinaryIO, Protocol

from pseudoclaude.errors import one_line
from pseudoclaude.redact import scrub

log = logging.getLogger("pseudoclaude.acp")

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32602, -32603
MAX_LINE_BYTES = 64 * 1024 * 1024
"""A longer line is dropped (and answered with ``-32600``) instead of filling the memory."""
_VALIDATION_DETAILS = 5


class Output(Protocol):
    """Where the protocol's bytes go: ``write`` buffers at once, ``drain`` waits for room."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


class _PipeOutput(asyncio.Protocol):
    """A write pipe with flow control (``drain`` waits while the client does not read)."""

    def __init__(self) -> None:
        self._writable = asyncio.Event()
        self._writable.set()
        self._transport: asyncio.WriteTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        self._transport = transport

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self._writable.set()
        self._transport = None

    def write(self, data: bytes) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)

    async def drain(self) -> None:
        await self._writable.wait()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


class _FileOutput:
    """Blocking writes, for a stdout that is a regular file (``pseudoclaude acp > out``)."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file

    def write(self, data: bytes) -> None:
        try:
            self._file.write(data)
            self._file.flush()
        except OSError as exc:
            log.warning("cannot write to stdout: %s", exc)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()


class StdioTransport:
    """Newline-delimited JSON-RPC over a reader and an :class:`Output`."""

    def __init__(self, reader: asyncio.StreamReader, output: Output) -> None:
        self._reader = reader
        self._output = output
        self._closed = False
        self.secrets: set[str] = set()
        """Strings never written as they are (API keys); each becomes ``[redacted]``."""
        self.on_message: Callable[[dict[str, Any]], None] | None = None
        """Called with every valid incoming message before the connection handles it."""
        self.on_sent: Callable[[dict[str, Any]], None] | None = None
        """Called after each message is written (it may :meth:`post` more)."""
        self._as_extensions: frozenset[str] = frozenset()

    # -- out ---------------------------------------------------------------------------------
    def post(self, message: dict[str, Any]) -> None:
        """Write one message now (no waiting: callers keep their order)."""
        if self._closed:
            return
        _explain_invalid_params(message)
        try:
            text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str)
        except (ValueError, TypeError, RecursionError) as exc:  # e.g. an echo nested too deep
            log.error("cannot encode a message: %s", one_line(exc))
            if "id" not in message or "method" in message:
                return
            text = json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": INTERNAL_ERROR, "message": "Internal error: the answer could not be "
                                                   "encoded"}})
        text = scrub(text, self.secrets)
        self._output.write(text.encode("utf-8", "replace") + b"\n")
        if self.on_sent is not None:
            try:
                self.on_sent(message)
            except Exception:  # a listener must never break the connection
                log.exception("on_sent failed")

    async def send(self, message: dict[str, Any]) -> None:
        self.post(message)
        await self._output.drain()

    def route_as_extensions(self, methods: Iterable[str]) -> None:
        """Hand incoming requests of ``methods`` to the connection as ``_<method>``: the
        package routes an extension method to the agent's ``ext_method`` (with ``<method>``)
        where it has no route of its own for ``<method>``."""
        self._as_extensions = frozenset(methods)

    def add_secret(self, secret: str | None) -> None:
        if secret and len(secret.strip()) >= 8:
            self.secrets.add(secret.strip())

    # -- in ----------------------------------------------------------------------------------
    async def receive(self) -> dict[str, Any] | None:
        """The next valid message, or None at the end of input. Invalid lines are answered
        (when JSON-RPC says to) and skipped."""
        while True:
            line = await self._read_line()
            if line is None:
                return None
            if isinstance(line, int):
                self._reply_error(None, INVALID_REQUEST,
                                  f"Invalid request: a message of more than {line} bytes")
                continue
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
                self._reply_error(None, PARSE_ERROR, f"Parse error: {one_line(exc)}")
                continue
            problem, request_id = _check(message)
            if problem is not None:
                if problem:  # an empty problem: a bad response, which gets no answer
                    self._reply_error(request_id, INVALID_REQUEST, f"Invalid request: {problem}")
                else:
                    log.warning("ignored an invalid response: %.200s", line)
                continue
            assert isinstance(message, dict)
            if self.on_message is not None:
                try:
                    self.on_message(message)
                except Exception:
                    log.exception("on_message failed")
            if message.get("method") in self._as_extensions:
                message["method"] = f"_{message['method']}"
            return message

    async def _read_line(self) -> bytes | int | None:
        """A line (without the limit), :data:`MAX_LINE_BYTES` for a skipped oversized line,
        None at the end of input."""
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                chunk = await self._reader.readuntil(b"\n")
            except asyncio.LimitOverrunError as exc:
                chunk = await self._reader.readexactly(exc.consumed)
                size += len(chunk)
                if size <= MAX_LINE_BYTES:
                    chunks.append(chunk)
                continue
            except asyncio.IncompleteReadError as exc:
                if not exc.partial and not chunks:
                    return None
                chunk = exc.partial
            size += len(chunk)
            if size > MAX_LINE_BYTES:
                return MAX_LINE_BYTES
            chunks.append(chunk)
            return b"".join(chunks)

    def _reply_error(self, request_id: Any, code: int, message: str) -> None:
        log.warning("%s", message)
        self.post({"jsonrpc": "2.0", "id": request_id,
                   "error": {"code": code, "message": message}})

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._output.close()


def _check(message: Any) -> tuple[str | None, Any]:
    """``(problem, id)``: None when ``message`` is a request, notification or response the
    connection can handle; ``""`` for a bad response (never answered)."""
    if not isinstance(message, dict):
        return f"expected a JSON object, got {type(message).__name__}", None
    request_id = message.get("id")
    valid_id = request_id is None or (isinstance(request_id, str | int | float)
                                      and not isinstance(request_id, bool))
    if "method" in message:
        if not valid_id:
            return "id must be a string or a number", None
        if not isinstance(message["method"], str):
            return "method must be a string", request_id
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return "params must be an object", request_id
        return None, request_id
    if "id" in message:
        if not valid_id or request_id is None:
            return "", None
        error = message.get("error")
        if "error" in message and not (isinstance(error, dict)
                                       and isinstance(error.get("code"), int)):
            # an error the connection could not read: still an error for the request
            message["error"] = {"code": INTERNAL_ERROR,
                                "message": f"the client answered with an invalid error: "
                                           f"{str(error)[:200]}"}
        elif isinstance(error, dict) and not isinstance(error.get("message"), str):
            error["message"] = str(error.get("message", "Error"))
        return None, request_id
    return "neither a request (method) nor a response (id)", None


def _explain_invalid_params(message: dict[str, Any]) -> None:
    """Name the fields in the package's ``Invalid params`` errors (from its validation)."""
    error = message.get("error")
    if not isinstance(error, dict) or error.get("code") != INVALID_PARAMS:
        return
    data = error.get("data")
    errors = data.get("errors") if isinstance(data, dict) else None
    if error.get("message") != "Invalid params" or not isinstance(errors, list):
        return
    details = []
    for item in errors:
        if isinstance(item, dict):
            where = ".".join(str(part) for part in item.get("loc", ()))
            details.append({"field": where or "params", "message": str(item.get("msg", ""))})
    if details:
        shown = "; ".join(f"{d['field']}: {d['message']}" for d in details[:_VALIDATION_DETAILS])
        more = len(details) - _VALIDATION_DETAILS
        error["message"] = f"Invalid params: {shown}" + (f" (and {more} more)" if more > 0 else "")
        error["data"] = {"errors": details}


async def open_stdio(limit: int = 1024 * 1024) -> StdioTransport:
    """The transport over this process's stdin and stdout; fd 1 then points at stderr."""
    loop = asyncio.get_running_loop()
    out_fd = os.dup(sys.stdout.fileno())
    with contextlib.suppress(OSError):
        sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    out_file = os.fdopen(out_fd, "wb", buffering=0)
    output: Output
    try:
        _, pipe = await loop.connect_write_pipe(_PipeOutput, out_file)
        output = pipe
    except ValueError:  # a regular file
        output = _FileOutput(out_file)

    reader = asyncio.StreamReader(limit=limit)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    except ValueError:  # a regular file: read it in a thread
        _feed_from_thread(loop, reader)
    return StdioTransport(reader, output)


def _feed_from_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader) -> None:
    def work() -> None:
        try:
            while data := os.read(sys.stdin.fileno(), 65536):
                loop.call_soon_threadsafe(reader.feed_data, data)
        except (OSError, ValueError) as exc:
            log.warning("cannot read stdin: %s", exc)
        finally:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=work, name="pseudoclaude-acp-stdin", daemon=True).start()
