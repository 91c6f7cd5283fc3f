"""Checkpoint benchmark: what a checkpoint after a tool call costs, by workspace size.

For workspaces of 1,000, 10,000 and 100,000 files (100 files a folder, ~300 bytes each, a
``.gitignore``d ``node_modules`` of 2,000 more files beside them that must not be read), the
real shadow repository (:class:`pseudoclaude.checkpoints.ShadowRepo`, the ``git`` command) is
timed on:

- ``first``: the first snapshot of the workspace (every file hashed once);
- ``after edit``: the snapshot after a ``write_file`` or ``edit_file`` changed one file (only
  that path is looked at) — the target is a median under 50 ms at 10k files;
- ``after command``: the snapshot after a ``run_command`` that changed one file (the whole
  tree is looked at: one stat walk by git, then only what changed is staged);
- ``conflicts``: what a rewind preview adds to find files changed outside the agent
  (``changed_since``);
- ``turns``: the files-changed counts of 50 turns (``count_changes``, one ``git`` call).

The numbers are wall-clock medians and 95th percentiles of 30 samples; a sample starts after
the file was written, as the checkpoint after a tool call does. Prints a table and writes
``bench/out/checkpoint_bench.json``. ``--sizes 1000,10000`` picks the sizes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pseudoclaude.checkpoints import ShadowRepo, git_available

OUT = Path(__file__).resolve().parent / "out"
SAMPLES = 30
PER_FOLDER = 100
IGNORED = 2000
BODY = "def f{n}(x):\n    return x + {n}\n" * 10


def make_workspace(root: Path, files: int) -> None:
    for n in range(files):
        folder = root / f"pkg{n // PER_FOLDER:04d}"
        if n % PER_FOLDER == 0:
            folder.mkdir(parents=True)
        (folder / f"mod{n % PER_FOLDER:03d}.py").write_text(BODY.format(n=n))
    (root / ".gitignore").write_text("node_modules/\n")
    for n in range(IGNORED):
        folder = root / "node_modules" / f"dep{n // PER_FOLDER}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"index{n % PER_FOLDER}.js").write_text("module.exports = 1;\n")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(samples: list[float], action: object) -> None:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    samples.append((time.perf_counter() - start) * 1000)


def measure(files: int) -> dict[str, object]:
    root = Path(tempfile.mkdtemp(prefix=f"checkpoint-bench-{files}-"))
    try:
        ws = root / "ws"
        ws.mkdir()
        start = time.perf_counter()
        make_workspace(ws, files)
        made = time.perf_counter() - start
        data = ws / ".PseudoClaude"
        repo = ShadowRepo(ws, data / "checkpoints", excluded=[data])
        session = "20261202-000000-beef"
        start = time.perf_counter()
        first = repo.snapshot("first", session)
        first_ms = (time.perf_counter() - start) * 1000
        edit: list[float] = []
        command: list[float] = []
        conflicts: list[float] = []
        refs = [first.ref]
        for i in range(SAMPLES):
            folder = f"pkg{(i * 7) % max(1, files // PER_FOLDER):04d}"
            (ws / folder / "mod001.py").write_text(BODY.format(n=i) + f"# edit {i}\n")
            timed(edit, lambda f=folder: refs.append(  # type: ignore[misc]
                repo.snapshot("after edit_file", session, [f"{f}/mod001.py"]).ref))
            (ws / folder / "mod002.py").write_text(BODY.format(n=i) + f"# command {i}\n")
            timed(command, lambda: repo.snapshot("after run_command", session))
            timed(conflicts, lambda: repo.changed_since(refs[-1]))
        pairs = [(refs[i % len(refs)], refs[(i + 1) % len(refs)]) for i in range(50)]
        turns: list[float] = []
        for _ in range(10):
            timed(turns, lambda: repo.count_changes(pairs))
        tree = repo._git("ls-tree", "-r", "--name-only", refs[-1]).stdout.count(b"\n")
        assert tree == files + 1, f"snapshot has {tree} files, expected {files + 1}"
        return {
            "files": files, "made_s": round(made, 1), "first_ms": round(first_ms),
            **{f"{name}_{stat}": round(fn(values), 1)
               for name, values in (("edit", edit), ("command", command),
                                    ("conflicts", conflicts), ("turns", turns))
               for stat, fn in (("median", statistics.median),
                                ("p95", lambda v: percentile(v, 0.95)))},
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    args = parser.parse_args()
    if not git_available():
        print("checkpoint bench: needs the git command", file=sys.stderr)
        return 1
    rows = [measure(int(size)) for size in args.sizes.split(",")]
    print(f"{'files':>8} {'first':>9} {'after edit':>16} {'after command':>16} "
          f"{'conflicts':>16} {'50 turns':>14}")
    print(f"{'':>8} {'ms':>9} {'median / p95 ms':>16} {'median / p95 ms':>16} "
          f"{'median / p95 ms':>16} {'median ms':>14}")
    for r in rows:
        print(f"{r['files']:>8,} {r['first_ms']:>9,} "
              f"{r['edit_median']:>7} / {r['edit_p95']:<6} "
              f"{r['command_median']:>7} / {r['command_p95']:<6} "
              f"{r['conflicts_median']:>7} / {r['conflicts_p95']:<6} {r['turns_median']:>14}")
    OUT.mkdir(exist_ok=True)
    (OUT / "checkpoint_bench.json").write_text(json.dumps(rows, indent=2) + "\n")
    ten = next((r for r in rows if r["files"] == 10000), None)
    if ten is not None and float(ten["edit_median"]) >= 50:  # type: ignore[arg-type]
        print(f"checkpoint after an edit at 10k files: median {ten['edit_median']} ms, "
              "over the 50 ms target", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
