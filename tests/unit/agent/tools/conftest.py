"""What the tool tests share, as fixtures.

- ``call(registry, name, **arguments)``: execute one call (id ``c1``) and return its JSON
  envelope, checking that the result's ``is_error`` agrees with the envelope's ``ok``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from pseudoclaude.agent.tools import ToolRegistry
from pseudoclaude.llm.types import ToolCall


def execute(registry: ToolRegistry, name: str, **args: Any) -> dict[str, Any]:
    result = asyncio.run(registry.execute(ToolCall("c1", name, args)))
    body: dict[str, Any] = json.loads(result.content)
    assert result.is_error == (not body["ok"])
    return body


@pytest.fixture
def call() -> Callable[..., dict[str, Any]]:
    return execute
