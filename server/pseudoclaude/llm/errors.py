"""Typed provider errors (SPEC §7).

Every failure a provider can report is one of the :class:`ProviderError` subclasses below, so
callers branch on types, never on SDK classes or message text. ``retryable`` says whether a
fresh attempt of the same request may succeed (rate limits, overload, 5xx, network trouble).

Messages are built by this project from the HTTP status and the API's own error text and are
passed through :func:`scrub` with the key in use, so an API key never ends up in an error, a
log line or an event, even when a server echoes it back.
"""

from __future__ import annotations

from collections.abc import Iterable

from pseudoclaude.errors import PseudoClaudeError

# Re-exported: the provider adapters and the front ends scrub through here.
from pseudoclaude.redact import REDACTED as REDACTED
from pseudoclaude.redact import scrub as scrub

PROMPT_TOO_LONG_MARKERS: tuple[str, ...] = (
    "prompt is too long",
    "prompt too long",
    "context length",
    "context_length",
    "maximum context",
    "max context",
    "too many tokens",
    "exceeds the context",
    "exceeded context",
)
"""Lower-case fragments by which the Anthropic, OpenAI and OpenAI-compatible APIs say the
request does not fit the model's context window."""

TOOLS_UNSUPPORTED_MARKERS: tuple[str, ...] = (
    "does not support tools",  # Ollama (400): "<model> does not support tools"
    "tools param requires",  # llama.cpp without --jinja (500): "tools param requires --jinja flag"
    "unsupported param: tools",  # older llama.cpp (500)
    "enable-auto-tool-choice",  # vLLM (400): '"auto" tool choice requires
                                # --enable-auto-tool-choice and --tool-call-parser to be set'
)
"""Lower-case fragments by which local OpenAI-compatible servers refuse a request with tools."""



class ProviderError(PseudoClaudeError):
    """Base of every provider failure. ``retryable``: a new attempt may succeed."""

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status = status
        self.retry_after = retry_after
        """Seconds the server asked us to wait (``Retry-After``), when it said so."""

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class PromptTooLong(ProviderError):
    """The request does not fit the model's context window (compact and retry)."""


class AuthenticationFailed(ProviderError):
    """The API key was missing, wrong or not allowed to use the model."""


class RateLimited(ProviderError):
    """HTTP 429: too many requests or tokens per minute."""

    retryable = True


class Overloaded(ProviderError):
    """HTTP 529 (Anthropic ``overloaded_error``), 503, or another temporary server failure."""

    retryable = True


class ServerError(ProviderError):
    """HTTP 5xx other than overload: an internal error on the provider's side."""

    retryable = True


class BadRequest(ProviderError):
    """HTTP 4xx the request itself caused (other than prompt too long and authentication)."""


class NetworkError(ProviderError):
    """The connection failed, was refused, or was cut before the turn ended."""

    retryable = True


class ProviderTimeout(ProviderError):
    """No byte arrived within the configured read timeout (or the connect timeout)."""

    retryable = True


class MaxTokensTruncated(ProviderError):
    """The model hit ``max_tokens`` inside a tool call: the call is incomplete and was dropped.

    ``partial_text`` is the text the model wrote before the cut (already streamed).
    """

    def __init__(self, message: str, *, provider: str = "", partial_text: str = "") -> None:
        super().__init__(message, provider=provider)
        self.partial_text = partial_text


class ToolsUnsupported(BadRequest):
    """The server refuses tool calls for the configured model (a local server whose model or
    chat template has no tool support): retrying cannot help."""


class NoProviderConfigured(ProviderError):
    """No provider could be chosen: the message names the setting or variable to set."""


def is_prompt_too_long(message: str) -> bool:
    """Whether an API error message says the prompt does not fit the context window."""
    lowered = message.lower()
    return any(marker in lowered for marker in PROMPT_TOO_LONG_MARKERS)


def refuses_tools(message: str) -> bool:
    """Whether an API error message says the server or model does not take tools."""
    lowered = message.lower()
    return any(marker in lowered for marker in TOOLS_UNSUPPORTED_MARKERS)


def tools_unsupported(model: str, *, provider: str, detail: str = "",
                      status: int | None = None) -> ToolsUnsupported:
    """The one error for a model its server runs without tool support; ``detail`` is what the
    server said (already scrubbed), when it said something."""
    said = f" (the server said: {detail})" if detail else ""
    return ToolsUnsupported(
        f"{provider}: the model {model} does not support tool calls on this server{said}; "
        "choose a model with tool support, or start the server with a chat template that has "
        "tools (llama-server: --jinja)", provider=provider, status=status)


def from_status(
    status: int | None,
    message: str,
    *,
    provider: str,
    error_type: str | None = None,
    error_code: str | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """Map an HTTP status and the API's error text/type/code to a typed error.

    ``message`` must already be scrubbed. ``error_type``/``error_code`` are the body's
    ``error.type`` / ``error.code`` (Anthropic ``overloaded_error``, OpenAI
    ``context_length_exceeded``, ...); an error event inside a stream has no real status
    (``None`` or 200) and is classified by them alone.
    """
    kind = (error_type or "").lower()
    code = (error_code or "").lower()
    label = f"{provider} API error" + (f" {status}" if status and status != 200 else "")
    text = f"{label}: {message}" if message else label
    if (
        "context_length" in code
        or (status in (None, 200, 400, 413, 422) and is_prompt_too_long(message))
        or kind == "request_too_large"
    ):
        return PromptTooLong(text, provider=provider, status=status, retry_after=retry_after)
    if status in (401, 403) or kind in ("authentication_error", "permission_error"):
        return AuthenticationFailed(text, provider=provider, status=status, retry_after=retry_after)
    if status == 429 or kind == "rate_limit_error" or "rate_limit" in code:
        return RateLimited(text, provider=provider, status=status, retry_after=retry_after)
    if status in (503, 529) or kind == "overloaded_error" or "overloaded" in code:
        return Overloaded(text, provider=provider, status=status, retry_after=retry_after)
    if (status is not None and status >= 500) or kind in ("api_error", "server_error"):
        return ServerError(text, provider=provider, status=status, retry_after=retry_after)
    if status == 408:
        return ProviderTimeout(text, provider=provider, status=status, retry_after=retry_after)
    return BadRequest(text, provider=provider, status=status, retry_after=retry_after)


def _class_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__ if cls.__module__.startswith("httpx")}


def from_transport(exc: BaseException, *, provider: str, secrets: Iterable[str | None] = ()
                   ) -> ProviderError | None:
    """Map an HTTP-client transport exception (``httpx``/``httpx2``, which both SDKs use and
    which escape them while a stream is being read) to a typed error; ``None`` for anything
    else. Matched by class name so this module needs neither SDK nor HTTP client imported."""
    names = _class_names(exc)
    if not names & {"TransportError", "TimeoutException", "RequestError", "StreamError"}:
        return None
    detail = scrub(f"{type(exc).__name__}: {exc}".rstrip(": "), secrets)
    if "TimeoutException" in names:
        return ProviderTimeout(f"{provider}: timed out{_to(exc, secrets)} ({detail})",
                               provider=provider)
    return NetworkError(f"{provider}: connection failed{_to(exc, secrets)} ({detail})",
                        provider=provider)


def _to(exc: BaseException, secrets: Iterable[str | None]) -> str:
    """`` to <url>``: the URL the failed request went to (without its query), when the
    exception knows it (``httpx`` errors and the SDKs' connection errors carry the request)."""
    try:
        request = getattr(exc, "request", None)  # httpx: a RuntimeError when it has none
        url = str(request.url) if request is not None else ""
    except (AttributeError, RuntimeError):
        return ""
    return f" to {scrub(url.partition('?')[0], secrets)}" if url else ""


def connection_failed(exc: BaseException, *, provider: str,
                      secrets: Iterable[str | None] = ()) -> NetworkError:
    """An SDK's connection error (the provider unreachable): names the URL it tried and the
    cause (``anthropic: connection failed to http://127.0.0.1:9/v1/messages
    (ConnectError)``)."""
    cause = exc.__cause__ or exc.__context__
    detail = f" ({type(cause).__name__})" if cause else ""
    return NetworkError(f"{provider}: connection failed{_to(exc, secrets)}{detail}",
                        provider=provider)
