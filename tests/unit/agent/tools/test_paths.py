"""Workspace confinement: nothing outside the workspace is read or written (SPEC §6)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.agent.tools import ToolError, ToolRegistry
from pseudoclaude.agent.tools.files import atomic_write, read_lines
from pseudoclaude.agent.tools.paths import Confinement

SECRET = "TOP-SECRET-CONTENT"


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file (and symlink) under root with its bytes and mtime."""
    out: dict[str, tuple[bytes, int]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            out[str(path)] = (os.readlink(path).encode(), 0)
        elif path.is_file():
            out[str(path)] = (path.read_bytes(), path.stat().st_mtime_ns)
        else:
            out[str(path)] = (b"<dir>", 0)
    return out


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with symlinks pointing out, and an outside folder holding a secret."""
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    (ws / "inside.txt").write_text("inside\n")
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    (ws / "linkdir").symlink_to(outside, target_is_directory=True)
    (ws / "dangling.txt").symlink_to(outside / "created-by-tool.txt")
    (ws / "sub").mkdir()
    (ws / "sub" / "up").symlink_to("../..", target_is_directory=True)
    return ws, outside


READ_ESCAPES = [
    "../outside/secret.txt",
    "sub/../../outside/secret.txt",
    "link.txt",
    "linkdir/secret.txt",
    "sub/up/outside/secret.txt",
    "/etc/passwd",
    "/proc/self/root/etc/passwd",
]


@pytest.mark.parametrize("path", READ_ESCAPES)
def test_read_escapes_are_refused(layout: tuple[Path, Path], path: str,
                                  call: Callable[..., dict[str, Any]]) -> None:
    ws, outside = layout
    before = snapshot(outside)
    body = call(ToolRegistry(ws), "read_file", path=path)
    assert body["ok"] is False
    assert body["error_type"] == "outside_workspace"
    assert SECRET not in body["content"] and "root:" not in body["content"]
    assert snapshot(outside) == before


def test_absolute_path_outside_is_refused(layout: tuple[Path, Path],
                                          call: Callable[..., dict[str, Any]]) -> None:
    ws, outside = layout
    body = call(ToolRegistry(ws), "read_file", path=str(outside / "secret.txt"))
    assert body["error_type"] == "outside_workspace"
    assert SECRET not in json.dumps(body)


def test_absolute_path_inside_is_allowed(layout: tuple[Path, Path],
                                         call: Callable[..., dict[str, Any]]) -> None:
    ws, _ = layout
    body = call(ToolRegistry(ws), "read_file", path=str(ws / "inside.txt"))
    assert body["ok"] is True
    assert body["content"] == "inside\n"
    assert body["metadata"]["path"] == "inside.txt"


WRITE_ESCAPES = [
    "../outside/new.txt",
    "link.txt",
    "dangling.txt",
    "linkdir/secret.txt",
    "linkdir/new.txt",
    "linkdir/deeper/new.txt",
    "sub/up/outside/new.txt",
    "/proc/self/root/tmp/pseudoclaude-escape.txt",
]


@pytest.mark.parametrize("path", WRITE_ESCAPES)
def test_write_escapes_are_refused(layout: tuple[Path, Path], path: str,
                                   call: Callable[..., dict[str, Any]]) -> None:
    ws, outside = layout
    before = snapshot(outside)
    body = call(ToolRegistry(ws), "write_file", path=path, content="PWNED")
    assert body["ok"] is False
    assert body["error_type"] == "outside_workspace"
    assert snapshot(outside) == before
    assert not Path("/tmp/pseudoclaude-escape.txt").exists()


@pytest.mark.parametrize("path", ["link.txt", "linkdir/secret.txt", "../outside/secret.txt"])
def test_edit_escapes_are_refused(layout: tuple[Path, Path], path: str,
                                  call: Callable[..., dict[str, Any]]) -> None:
    ws, outside = layout
    before = snapshot(outside)
    body = call(ToolRegistry(ws), "edit_file", path=path, old_text="TOP", new_text="PWNED")
    assert body["error_type"] == "outside_workspace"
    assert snapshot(outside) == before


def test_write_absolute_outside_is_refused(layout: tuple[Path, Path],
                                           call: Callable[..., dict[str, Any]]) -> None:
    ws, outside = layout
    before = snapshot(outside)
    body = call(ToolRegistry(ws), "write_file", path=str(outside / "x.txt"), content="x")
    assert body["error_type"] == "outside_workspace"
    assert snapshot(outside) == before


def test_search_and_find_stay_inside(layout: tuple[Path, Path],
                                     call: Callable[..., dict[str, Any]]) -> None:
    ws, outside = layout
    registry = ToolRegistry(ws)
    for path in ("../outside", "linkdir", str(outside), "/etc"):
        body = call(registry, "search_code", pattern="SECRET", path=path)
        assert body["error_type"] == "outside_workspace", path
    for pattern in ("../outside/*", "/etc/*", str(outside) + "/*", "sub/../../outside/*"):
        body = call(registry, "find_files", pattern=pattern)
        assert body["error_type"] == "outside_workspace", pattern
    # the whole workspace: symlinked files are not read, symlinked folders not descended
    body = call(registry, "search_code", pattern="SECRET")
    assert body["ok"] is True and SECRET not in body["content"]
    body = call(registry, "find_files", pattern="**/*")
    assert "secret.txt" not in body["content"]
    assert "linkdir/" not in body["content"]


def test_a_symlink_swapped_in_after_the_check_is_not_followed(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "sub").mkdir(parents=True)
    outside.mkdir()
    (ws / "sub" / "f.txt").write_text("mine\n")
    (outside / "f.txt").write_text(SECRET + "\n")
    paths = Confinement(ws)
    located = paths.locate("sub/f.txt", write=True)
    # the race: the folder becomes a symlink pointing out between the check and the open
    os.rename(ws / "sub", ws / "old-sub")
    (ws / "sub").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    with pytest.raises(ToolError) as read_error:
        read_lines(located, 1, None)
    assert read_error.value.error_type == "outside_workspace"
    with pytest.raises(ToolError) as write_error:
        atomic_write(located, b"PWNED")
    assert write_error.value.error_type == "outside_workspace"
    assert snapshot(outside) == before


def test_extra_read_roots_are_read_only_and_replaceable(
        tmp_path: Path, call: Callable[..., dict[str, Any]]) -> None:
    ws, spill = tmp_path / "ws", tmp_path / "data" / "tool-results"
    ws.mkdir()
    spill.mkdir(parents=True)
    (spill / "call_1.txt").write_text("spilled\n")
    registry = ToolRegistry(ws, extra_read_roots=[spill])
    target = str(spill / "call_1.txt")
    body = call(registry, "read_file", path=target)
    assert body["ok"] is True and body["content"] == "spilled\n"
    assert body["metadata"]["path"] == str((spill / "call_1.txt").resolve())
    body = call(registry, "search_code", pattern="spilled", path=str(spill))
    assert body["ok"] is True and "call_1.txt:1: spilled" in body["content"]
    body = call(registry, "write_file", path=str(spill / "call_2.txt"), content="x")
    assert body["error_type"] == "outside_workspace"
    body = call(registry, "edit_file", path=target, old_text="spilled", new_text="x")
    assert body["error_type"] == "outside_workspace"
    assert (spill / "call_1.txt").read_text() == "spilled\n"
    assert not (spill / "call_2.txt").exists()
    registry.set_extra_read_roots([])
    assert call(registry, "read_file", path=target)["error_type"] == "outside_workspace"


def test_bad_path_arguments(tmp_path: Path, call: Callable[..., dict[str, Any]]) -> None:
    registry = ToolRegistry(tmp_path)
    assert call(registry, "read_file", path="")["error_type"] == "invalid_arguments"
    assert call(registry, "read_file", path="a\x00b")["error_type"] == "invalid_arguments"
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    body = call(registry, "read_file", path="loop")
    assert body["ok"] is False and body["error_type"] in ("invalid_arguments", "not_found")


def test_a_sibling_folder_sharing_the_prefix_is_outside(
        tmp_path: Path, call: Callable[..., dict[str, Any]]) -> None:
    """``/x/ws-evil`` starts with the string ``/x/ws`` but is not inside ``/x/ws``: a check by
    string prefix would let every tool through to it."""
    ws = tmp_path / "ws"
    evil = tmp_path / "ws-evil"
    ws.mkdir()
    evil.mkdir()
    (evil / "secret.txt").write_text(SECRET + "\n")
    (ws / "to-evil").symlink_to(evil, target_is_directory=True)
    registry = ToolRegistry(ws)
    for path in (str(evil / "secret.txt"), "../ws-evil/secret.txt", "to-evil/secret.txt"):
        body = call(registry, "read_file", path=path)
        assert body["error_type"] == "outside_workspace", (path, body)
        assert SECRET not in json.dumps(body)
        wrote = call(registry, "write_file", path=path.replace("secret", "new"), content="x")
        assert wrote["error_type"] == "outside_workspace", (path, wrote)
    assert sorted(p.name for p in evil.iterdir()) == ["secret.txt"]
    with pytest.raises(ToolError):
        Confinement(ws).locate(str(evil / "secret.txt"))
