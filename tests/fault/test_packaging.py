"""The package installs in one step as a wheel and works from anywhere: build the wheel, install
it (its dependencies from the registry) in a fresh venv, and run ``pseudoclaude --version`` and
``pseudoclaude demo`` from an empty folder, with a private HOME and no provider credentials.

Slow (about 1.5 min on a loaded 2-core machine: the isolated build, the dependencies'
download and install, the demo), hence here with the other slow tests.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

from pseudoclaude.redact import without_credentials

ROOT = Path(__file__).resolve().parents[2]
# What the wheel is built from: a copy, so the checkout gets no build/ (and no stale build/lib
# of an earlier build can slip into the wheel).
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "server")


def run(args: list[str | Path], timeout: float, env: dict[str, str],
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=cwd, check=False)
    assert proc.returncode == 0, f"{args}: exit {proc.returncode}\n" + (
        proc.stdout[-3000:] + proc.stderr[-3000:])
    return proc


@pytest.mark.timeout(600)
def test_wheel_installs_and_runs_the_demo_from_an_empty_folder(tmp_path: Path) -> None:
    pytest.importorskip("build", reason="the dev extra's `build` (make venv installs it)")
    source = tmp_path / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.egg-info"))
        else:
            shutil.copy2(ROOT / name, source / name)
    env = without_credentials()
    env.pop("PYTHONPATH", None)  # the installed package, never the checkout's
    run([sys.executable, "-m", "build", "--wheel", "--outdir", tmp_path / "dist", source],
        timeout=300, env=env)
    wheels = list((tmp_path / "dist").glob("pseudoclaude_lsp-*-py3-none-any.whl"))
    assert len(wheels) == 1, wheels

    # A fresh venv; this interpreter's pip installs into it (quicker than ensurepip's own).
    target = tmp_path / "venv"
    venv.create(target, with_pip=False)
    python, command = target / "bin" / "python", target / "bin" / "pseudoclaude"
    run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet",
         "--disable-pip-version-check", wheels[0]], timeout=400, env=env)

    empty, home = tmp_path / "empty", tmp_path / "home"
    empty.mkdir()
    home.mkdir()
    env |= {"HOME": str(home), "TMPDIR": str(tmp_path)}
    where = run([python, "-c", "import pseudoclaude; print(pseudoclaude.__file__)"],
                timeout=60, cwd=empty, env=env).stdout.strip()
    assert Path(where).is_relative_to(target), where

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    shown = run([command, "--version"], timeout=60, cwd=empty, env=env)
    assert shown.stdout == f"pseudoclaude {version}\n", shown.stdout

    demo = run([command, "demo", "--clean"], timeout=300, cwd=empty, env=env)
    assert "Offline: the scripted model" in demo.stdout
    assert "demo: OK" in demo.stdout, demo.stdout[-2000:]
    assert "Traceback" not in demo.stderr, demo.stderr[-2000:]
    assert list(empty.iterdir()) == []  # the demo works in a folder of its own


@pytest.mark.timeout(600)
def test_the_vscode_package_script_builds_the_wheel_without_the_build_module(
        tmp_path: Path) -> None:
    """``npm run package`` in a fresh clone (no ``.venv``, no ``dist/``) on a Python without
    the ``build`` module: its ``bundle-server`` step builds the wheel with pip and bundles it."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on PATH")
    repo = tmp_path / "clone"
    repo.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, repo / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.egg-info"))
        else:
            shutil.copy2(ROOT / name, repo / name)
    script = repo / "editors" / "vscode" / "scripts" / "bundle-server.mjs"
    script.parent.mkdir(parents=True)
    shutil.copy2(ROOT / "editors" / "vscode" / "scripts" / "bundle-server.mjs", script)
    # The only Python on PATH: a fresh venv with pip and without build (a system Python).
    system = tmp_path / "system-python"
    venv.create(system, with_pip=True)
    assert run([system / "bin" / "python", "-c",
                "import importlib.util as u; print(u.find_spec('build') is None)"],
               timeout=60, env=without_credentials(), cwd=tmp_path).stdout.strip() == "True"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for alias in ("python3", "python"):
        (bin_dir / alias).symlink_to(system / "bin" / "python")
    (bin_dir / "node").symlink_to(node)
    env = without_credentials() | {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    shown = run([node, script], timeout=500, env=env, cwd=script.parent.parent)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    wheel = f"pseudoclaude_lsp-{version}-py3-none-any.whl"
    assert "pip wheel" in shown.stdout, shown.stdout
    assert (repo / "editors" / "vscode" / "bundled" / wheel).is_file(), shown.stdout
