"""The names the model sees for MCP tools: ``mcp__<server>__<tool>``, valid for every provider.

Anthropic's tool names must match ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI's rule is the same), so
every other character becomes ``_`` and a name longer than 64 characters is cut and ends with
``_`` and a hash of the exact server and tool names (:func:`model_name`). Replacing characters
can make two tools look alike (``a.b`` and ``a_b``): :func:`assign` gives every member of such a
group the hashed form, so a name never depends on the order tools were listed in. Names are
mapped back through the table :func:`assign` returns, never parsed (a server name may contain
``__``). Pure.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

PREFIX = "mcp__"
SEPARATOR = "__"
MAX_LENGTH = 64
HASH_LENGTH = 10
_INVALID = re.compile(r"[^A-Za-z0-9_-]")
VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _digest(server: str, tool: str) -> str:
    data = f"{server}\x00{tool}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:HASH_LENGTH]


def model_name(server: str, tool: str, *, hashed: bool = False) -> str:
    """``mcp__<server>__<tool>`` with other characters replaced by ``_``; cut to 64 characters
    with a hash suffix when longer (or always, with ``hashed``)."""
    name = _INVALID.sub("_", f"{PREFIX}{server}{SEPARATOR}{tool}")
    if len(name) <= MAX_LENGTH and not hashed:
        return name
    suffix = "_" + _digest(server, tool)
    return name[:MAX_LENGTH - len(suffix)] + suffix


def assign(tools: Iterable[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """A unique model name for each ``(server, tool)``: ``{model name: (server, tool)}``, in
    the order given (duplicates of a pair are listed once)."""
    pairs = list(dict.fromkeys(tools))
    plain: dict[str, list[tuple[str, str]]] = {}
    for pair in pairs:
        plain.setdefault(model_name(*pair), []).append(pair)
    out: dict[str, tuple[str, str]] = {}
    for pair in pairs:
        name = model_name(*pair)
        if len(plain[name]) > 1:
            name = model_name(*pair, hashed=True)
        out[name] = pair
    return out
