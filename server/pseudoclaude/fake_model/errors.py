"""The failures the fake model injects, in each API's own error shape: the scripted ``error``
names (:data:`ERRORS`), an injected failure's answer (:func:`error_body`) and the ``limit``
mode's prompt-too-long answer (:func:`limit_error`)."""

from __future__ import annotations

from typing import Any

ERRORS: dict[str, tuple[int, str, str, int, str, str | None, str]] = {
    "rate_limit": (429, "rate_limit_error",
                   "Number of request tokens has exceeded your per-minute rate limit",
                   429, "requests", "rate_limit_exceeded",
                   "Rate limit reached for requests per min. Please try again in 1s."),
    "overloaded": (529, "overloaded_error", "Overloaded",
                   503, "server_error", None,
                   "The engine is currently overloaded, please try again later."),
    "server_error": (500, "api_error", "Internal server error",
                     500, "server_error", None,
                     "The server had an error while processing your request."),
    "prompt_too_long": (400, "invalid_request_error",
                        "prompt is too long: 215000 tokens > 200000 maximum",
                        400, "invalid_request_error", "context_length_exceeded",
                        "This model's maximum context length is 128000 tokens. However, your "
                        "messages resulted in 131000 tokens. Please reduce the length of the "
                        "messages."),
    "auth": (401, "authentication_error", "invalid x-api-key",
             401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
}



def limit_error(protocol: str, tokens: int, maximum: int) -> tuple[int, dict[str, Any]]:
    """The provider's own prompt-too-long answer (HTTP 400) for a ``tokens``-token prompt."""
    if protocol == "anthropic":
        return 400, {"type": "error", "error": {
            "type": "invalid_request_error",
            "message": f"prompt is too long: {tokens} tokens > {maximum} maximum"}}
    return 400, {"error": {
        "message": f"This model's maximum context length is {maximum} tokens. However, your "
                   f"messages resulted in {tokens} tokens. Please reduce the length of the "
                   "messages.",
        "type": "invalid_request_error", "param": "messages",
        "code": "context_length_exceeded"}}



def error_body(protocol: str, error: Any) -> tuple[int, dict[str, Any]]:
    """HTTP status and JSON body of an injected failure, in the API's own error shape."""
    if isinstance(error, str):
        status, a_type, a_msg, o_status, o_type, code, o_msg = ERRORS[error]
    else:
        status = o_status = int(error.get("status", 500))
        a_type = o_type = str(error.get("type", "api_error"))
        a_msg = o_msg = str(error.get("message", "injected failure"))
        code = error.get("code")
    if protocol == "anthropic":
        return status, {"type": "error", "error": {"type": a_type, "message": a_msg}}
    return o_status, {"error": {"message": o_msg, "type": o_type, "param": None, "code": code}}
