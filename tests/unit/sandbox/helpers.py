"""Helpers of the sandbox's tests (the fixtures are in conftest.py): a workspace with a data
folder and a fake home folder with secrets, both *outside* ``/tmp`` (the sandbox's ``/tmp`` is
private, so anything under the host's ``/tmp`` would be invisible inside for that reason
alone), and a runner that starts a command as ``run_command`` does."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

OUTSIDE_TMP = ("/var/tmp", str(Path.home()))
"""Where the test folders go: the first of these that is writable."""

Runner = Callable[..., subprocess.CompletedProcess[str]]
"""``sh(script, *, sandbox=, cwd=, env=, writable=, read_only=)`` (the ``sh`` fixture)."""


@dataclass
class Tree:
    base: Path
    workspace: Path
    data: Path
    """``<workspace>/.PseudoClaude`` with ``sessions/s1.jsonl``, ``config.yaml``,
    ``worktrees/``."""
    home: Path
    """A home folder with ``.ssh/id_rsa``, ``.aws/credentials`` and ``.bashrc``."""


def make_tree() -> Tree | None:
    """The folders of one test (``None`` when no folder outside ``/tmp`` is writable)."""
    parent = next((p for p in OUTSIDE_TMP if os.access(p, os.W_OK)), None)
    if parent is None:
        return None
    base = Path(tempfile.mkdtemp(prefix="pc-sandbox-test-", dir=parent)).resolve()
    workspace = base / "ws"
    data = workspace / ".PseudoClaude"
    (data / "sessions").mkdir(parents=True)
    (data / "sessions" / "s1.jsonl").write_text('{"log": 1}\n')
    (data / "config.yaml").write_text("sandbox:\n  enabled: true\n")
    (data / "worktrees").mkdir()
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("print('hi')\n")
    home = base / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("[default]\nkey = secret\n")
    (home / ".bashrc").write_text("# visible\n")
    return Tree(base, workspace, data, home)


def run(argv: Sequence[str], cwd: Path, *, env: Mapping[str, str] | None = None,
        timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """Start ``argv`` as ``run_command`` does (a new session, stdin empty, output combined)."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, text=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, None)
