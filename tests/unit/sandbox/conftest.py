"""Fixtures of the sandbox's tests (helpers.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from pseudoclaude.sandbox import Sandbox, SandboxStatus, probe
from unit.sandbox.helpers import Runner, Tree, make_tree, run


@pytest.fixture(scope="session")
def bwrap_status() -> SandboxStatus:
    return probe()


@pytest.fixture
def usable(bwrap_status: SandboxStatus) -> SandboxStatus:
    """Skip unless bwrap can sandbox here (with the probe's reason)."""
    if not bwrap_status.enabled:
        pytest.skip(f"bwrap cannot sandbox here: {bwrap_status.reason}")
    return bwrap_status


@pytest.fixture
def tree() -> Iterator[Tree]:
    made = make_tree()
    if made is None:  # pragma: no cover - every test machine has /var/tmp
        pytest.skip("no writable folder outside /tmp for the sandbox's tests")
    try:
        yield made
    finally:
        shutil.rmtree(made.base, ignore_errors=True)


@pytest.fixture
def sandbox(tree: Tree, usable: SandboxStatus) -> Sandbox:
    """``sandbox.enabled: true`` with the fake home folder."""
    return Sandbox(True, home=tree.home)


@pytest.fixture
def sh(tree: Tree, sandbox: Sandbox) -> Runner:
    """A shell line run in a sandbox (default: the ``sandbox`` fixture) rooted at ``cwd``
    (default: the workspace)."""

    def runner(script: str, *, sandbox: Sandbox = sandbox, cwd: Path | None = None,
               env: Mapping[str, str] | None = None, **kwargs: Sequence[Path]
               ) -> subprocess.CompletedProcess[str]:
        root = tree.workspace if cwd is None else cwd
        environment = dict(os.environ if env is None else env)
        argv = sandbox.command(script, root, env=environment, **kwargs)
        return run(argv, root, env=environment)

    return runner
