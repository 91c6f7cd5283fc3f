"""Validation of custom-request params (SPEC §8). Pure: no pygls.

Missing params, ``null`` and an empty array (what Neovim sends for an empty Lua table) all mean
an empty object. Every problem raises :class:`ParamError` naming the field; the handlers turn
it into ``InvalidParams`` (-32602).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pseudoclaude.llm.types import clean_value
from pseudoclaude.session import is_session_id

LEVELS = ("project", "user")


class ParamError(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field


def as_object(params: Any) -> dict[str, Any]:
    if params is None or params == [] or params == ():
        return {}
    if isinstance(params, Mapping):
        return dict(params)
    raise ParamError("params", f"expected an object, got {_kind(params)}")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "an array", tuple: "an array", dict: "an object"}.get(
        type(value), type(value).__name__)


def string(params: dict[str, Any], field: str, *, required: bool = False,
           allow_empty: bool = True) -> str | None:
    value = params.get(field)
    if value is None:
        if required:
            raise ParamError(field, "is required")
        return None
    if not isinstance(value, str):
        raise ParamError(field, f"must be a string, got {_kind(value)}")
    if not allow_empty and not value.strip():
        raise ParamError(field, "must not be empty")
    return str(clean_value(value))  # lone surrogates (legal in JSON) become U+FFFD


def integer(params: dict[str, Any], field: str, *, minimum: int = 0) -> int | None:
    value = params.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ParamError(field, f"must be an integer, got {_kind(value)}")
    if value < minimum:
        raise ParamError(field, f"must be at least {minimum}, got {int(value)}")
    return int(value)


def level(params: dict[str, Any]) -> str:
    value = string(params, "level", required=True)
    if value not in LEVELS:
        raise ParamError("level", f"must be 'project' or 'user', got {value!r}")
    return value


def session_ref(params: dict[str, Any], field: str = "sessionId", *, required: bool = False,
                allow_new: bool = False, allow_latest: bool = True) -> str | None:
    value = string(params, field, required=required, allow_empty=False)
    if value is None:
        return None
    if (allow_new and value == "new") or (allow_latest and value == "latest"):
        return value
    if not is_session_id(value):
        choices = ["a session id (YYYYMMDD-HHMMSS-xxxx)"]
        if allow_latest:
            choices.append("'latest'")
        if allow_new:
            choices.append("'new'")
        raise ParamError(field, f"must be {' or '.join(choices)}, got {value!r}")
    return value
