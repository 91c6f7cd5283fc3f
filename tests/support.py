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
