"""Two processes on one folder (two editors) snapshot into its one shadow repository at the same
time: they take turns (a lock file beside it), so no snapshot fails and none is lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pseudoclaude.checkpoints import git_available

WORKER = """
import sys
from pathlib import Path
from pseudoclaude.checkpoints import ShadowRepo

root, folder, name, count = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
repo = ShadowRepo(root, folder)
sys.stdout.write("ready\\n")
sys.stdout.flush()
sys.stdin.readline()  # both start together
for i in range(count):
    (root / f"{name}.txt").write_text(f"{name} {i}\\n")
    repo.snapshot(f"prompt {i}", name)
"""


@pytest.mark.skipif(not git_available(), reason="needs the git command")
def test_two_processes_snapshot_one_repository_at_once(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(3000):  # enough files that a snapshot takes a while
        (root / f"f{i}.txt").write_text(f"file {i}\n")
    folder = tmp_path / "data" / "checkpoints"
    count = 30
    workers = [subprocess.Popen(
        [sys.executable, "-c", WORKER, str(root), str(folder), name, str(count)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in ("one", "two")]
    for w in workers:
        assert w.stdout is not None and w.stdout.readline() == "ready\n"
    for w in workers:
        assert w.stdin is not None
        w.stdin.write("go\n")
        w.stdin.flush()
    for w in workers:
        _, err = w.communicate(timeout=120)
        assert w.returncode == 0, err
    git = ["git", f"--git-dir={folder / 'shadow.git'}"]
    for name in ("one", "two"):
        chain = subprocess.run([*git, "rev-list", f"refs/pseudoclaude/sessions/{name}"],
                               check=True, capture_output=True, text=True).stdout.split()
        assert len(chain) == count
        last = subprocess.run([*git, "show", f"refs/pseudoclaude/sessions/{name}:{name}.txt"],
                              check=True, capture_output=True, text=True).stdout
        assert last == f"{name} {count - 1}\n"
