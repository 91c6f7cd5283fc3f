"""Failures of ACP requests as JSON-RPC errors (SPEC §11 "ACP").

Bad params ``-32602`` (from the package's validation, with the fields named, or ours: ``cwd``,
prompt content); an unknown session ``-32002`` (resource not found); a busy workspace or
session :data:`BUSY` (``-32001``); any other failure ``-32603`` with a one-line message (a run
that ends with our stop reason ``error``: the provider's error, with
``data.stopReason = "error"``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from acp import RequestError

from pseudoclaude.acp.updates import UnsupportedContent
from pseudoclaude.api.protocol import ParamError
from pseudoclaude.errors import EXPECTED_ERRORS, one_line
from pseudoclaude.workspace import SessionBusy, SessionNotFound, WorkspaceBusy

log = logging.getLogger("pseudoclaude.acp")

INVALID_PARAMS, NOT_FOUND, BUSY, FAILED = -32602, -32002, -32001, -32603
P = ParamSpec("P")
R = TypeVar("R")


def invalid(field_name: str, message: str) -> RequestError:
    return RequestError(INVALID_PARAMS, f"Invalid params: {field_name}: {message}",
                        {"errors": [{"field": field_name, "message": message}]})


def busy(message: str) -> RequestError:
    return RequestError(BUSY, message, {"reason": "busy"})


def unknown_session(message: str, session_id: str) -> RequestError:
    return RequestError(NOT_FOUND, message, {"sessionId": session_id[:100]})


def as_request_error(exc: Exception) -> RequestError:
    """The JSON-RPC error for a failure of a request (see the module docstring)."""
    if isinstance(exc, RequestError):
        return exc
    if isinstance(exc, SessionBusy):
        return RequestError(BUSY, one_line(exc), {"reason": "busy", "sessionId": exc.session_id,
                                                  "pid": exc.pid})
    if isinstance(exc, WorkspaceBusy):
        return busy(one_line(exc))
    if isinstance(exc, SessionNotFound):
        return RequestError(NOT_FOUND, one_line(exc), None)
    if isinstance(exc, UnsupportedContent):
        return invalid("prompt", one_line(exc).removeprefix("prompt: "))
    if isinstance(exc, ParamError):
        return invalid(exc.field or "params", one_line(exc).removeprefix(f"{exc.field}: "))
    if isinstance(exc, EXPECTED_ERRORS):
        return RequestError(FAILED, one_line(exc), None)
    log.error("internal error", exc_info=exc)
    return RequestError(FAILED, f"internal error: {one_line(exc)}", None)


def answers(handler: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Map a handler's failures to JSON-RPC errors (:func:`as_request_error`)."""
    @functools.wraps(handler)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await handler(*args, **kwargs)
        except Exception as exc:
            raise as_request_error(exc) from None
    return wrapper
