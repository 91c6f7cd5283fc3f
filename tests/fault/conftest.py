"""Helpers shared by the fault tests, as fixtures.

- ``call``: ``await call(client, method, params)``, a custom request to a real server, answered
  within 60 s;
- ``until``: ``await until(predicate, timeout=30.0)``, poll until a condition holds;
- ``allow``: an approver that allows every gated call once;
- ``bench_module``: ``bench_module("load_bench")``, a script of ``bench/`` loaded as a module.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from pseudoclaude.agent.approvals import ApprovalRequest, Decision

ANSWER_TIMEOUT = 60.0  # a request's answer, on a loaded machine
BENCH = Path(__file__).resolve().parents[2] / "bench"


async def send_request(client: LanguageClient, method: str, params: Any = None) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async(method, params),
                                  ANSWER_TIMEOUT)


async def wait_until(predicate: Callable[[], Any], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.02)


class AllowAll:
    async def ask(self, request: ApprovalRequest) -> Decision | None:
        return "allow_once"


def load_bench(name: str) -> ModuleType:
    """``bench/<name>.py`` as the module ``pseudoclaude_bench_<name>`` (loaded once)."""
    module_name = f"pseudoclaude_bench_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


# Session-scoped: they hold no state, and module-scoped fixtures (and hypothesis tests) use them.

@pytest.fixture(scope="session")
def call() -> Callable[..., Awaitable[Any]]:
    return send_request


@pytest.fixture(scope="session")
def until() -> Callable[..., Awaitable[None]]:
    return wait_until


@pytest.fixture(scope="session")
def allow() -> AllowAll:
    return AllowAll()


@pytest.fixture(scope="session")
def bench_module() -> Callable[[str], ModuleType]:
    return load_bench
