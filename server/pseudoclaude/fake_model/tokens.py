"""Token counting of the ``limit`` mode: the estimated prompt size of a request."""

from __future__ import annotations

import json
import math
from typing import Any

BYTES_PER_TOKEN = 3.5


def prompt_tokens(body: dict[str, Any]) -> int:
    """The estimated prompt size of a request (the ``limit`` mode's X): the UTF-8 bytes of the
    JSON of its ``system``, ``messages`` and ``tools`` (compact separators) ÷ 3.5, rounded up.
    """
    prompt = {key: body[key] for key in ("system", "messages", "tools") if key in body}
    size = len(json.dumps(prompt, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"))
    return math.ceil(size / BYTES_PER_TOKEN)
