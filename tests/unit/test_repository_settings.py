"""A workspace's own ``.PseudoClaude/config.yaml`` (a cloned repository's): what narrows applies
at once, what redirects the prompts and the key or lets more run unasked waits for the user's
approval of that exact file, remembered outside the workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from pseudoclaude.config import (
    Secret,
    Settings,
    forget_approval,
    load_settings,
    remember_approval,
    settings_trust,
)
from pseudoclaude.trust import PERMISSIONS_FILE, TrustStore, fingerprint

KEY = "sk-ant-the-users-own-key-0123456789"


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    return home, ws


def write(root: Path, data: Any) -> Path:
    path = root / ".PseudoClaude" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data), encoding="utf-8")
    return path


def load(dirs: tuple[Path, Path], ws: Path | None = None,
         overrides: dict[str, Any] | None = None) -> Settings:
    home, default_ws = dirs
    return load_settings(ws or default_ws, overrides, home=home,
                         env={"ANTHROPIC_API_KEY": KEY})


def test_what_only_narrows_applies_at_once(dirs: tuple[Path, Path]) -> None:
    write(dirs[1], {"approvals": {"runCommand": "deny", "write": "ask", "mcp": "deny"},
                    "contextWindow": 50_000, "maxIterations": 3,
                    "provider": "anthropic"})  # the provider that stands anyway
    s = load(dirs)
    assert s.pending is None
    assert (s.approvals.run_command, s.approvals.write, s.approvals.mcp) == ("deny", "ask",
                                                                             "deny")
    assert (s.context_window, s.max_iterations, s.provider) == (50_000, 3, "anthropic")


def test_a_redirect_and_an_allow_wait_and_the_users_settings_stand(
        dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(home, {"approvals": {"write": "ask"}})
    write(ws, {"approvals": {"runCommand": "allow", "write": "allow"}, "apiKey": "sk-ant-theirs",
               "baseUrl": "http://user:pw@127.0.0.1:9/v1?token=x", "contextWindow": 60_000})
    s = load(dirs)
    assert s.base_url is None and s.api_key == Secret(KEY)  # the environment's key wins anyway
    assert (s.approvals.run_command, s.approvals.write) == ("ask", "ask")
    assert s.context_window == 60_000  # what narrows (or is harmless) applies
    assert s.pending is not None
    # the URL first, without its user information or query; no key is ever shown
    assert s.pending.lines() == [
        "baseUrl: http://127.0.0.1:9/v1 (your prompts and API key would be sent there)",
        "approvals.runCommand: allow (commands would run without asking)",
        "approvals.write: allow (files would be written without asking)"]
    assert s.pending.url == "http://127.0.0.1:9/v1"
    approved = s.pending.approved
    assert approved.base_url == "http://user:pw@127.0.0.1:9/v1?token=x"
    assert (approved.approvals.run_command, approved.approvals.write) == ("allow", "allow")
    assert "sk-ant-theirs" not in repr(s.pending.asked)


def test_a_workspace_api_key_used_instead_of_none_waits(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(ws, {"provider": "openai", "apiKey": "sk-theirs-0123456789abcdef"})
    s = load_settings(ws, home=home, env={})
    assert s.provider is None and s.api_key is None and s.pending is not None
    assert [a.key for a in s.pending.asked] == ["provider", "apiKey"]
    assert "sk-theirs" not in " ".join(s.pending.lines())
    assert "approve it to use it" in (s.missing_provider() or "")


def test_an_approval_holds_for_that_content_only(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    path = write(ws, {"baseUrl": "http://127.0.0.1:9"})
    assert remember_approval(load(dirs)) is not None
    s = load(dirs)
    assert s.pending is None and s.base_url == "http://127.0.0.1:9"
    record = home / ".PseudoClaude" / PERMISSIONS_FILE
    assert record.is_file() and oct(record.stat().st_mode & 0o777) == "0o600"
    assert not list(ws.rglob(PERMISSIONS_FILE))  # nothing about it inside the workspace
    path.write_text(path.read_text() + "# one more line\n")  # a changed file asks again
    s = load(dirs)
    assert s.base_url is None and s.pending is not None
    assert remember_approval(s) is not None and load(dirs).base_url == "http://127.0.0.1:9"
    forget_approval(load(dirs))
    assert load(dirs).base_url is None


def test_an_approval_is_of_the_folder_not_of_the_file(dirs: tuple[Path, Path],
                                                      tmp_path: Path) -> None:
    _home, ws = dirs
    write(ws, {"baseUrl": "http://127.0.0.1:9"})
    remember_approval(load(dirs))
    link = tmp_path / "link"
    link.symlink_to(ws)
    assert load(dirs, link).base_url == "http://127.0.0.1:9"  # the same folder, by real path
    other = tmp_path / "clone"
    write(other, {"baseUrl": "http://127.0.0.1:9"})  # the same file in another folder
    assert load(dirs, other).base_url is None


def test_a_repository_cannot_move_or_ship_its_approvals(dirs: tuple[Path, Path]) -> None:
    """``memory.userDir`` (whose parent keeps approvals) waits too, so a repository cannot
    point the approvals at a record it ships."""
    home, ws = dirs
    path = write(ws, {"baseUrl": "http://127.0.0.1:9", "memory": {"userDir": "evil/memory"}})
    s = load(dirs)
    assert s.memory.user_dir == home / ".PseudoClaude" / "memory" and s.pending is not None
    assert [a.key for a in s.pending.asked] == ["baseUrl", "memory.userDir"]
    assert settings_trust(s.pending.approved).path.parent == home / ".PseudoClaude"
    # the record it would need, shipped where its memory.userDir points
    TrustStore(ws / "evil", PERMISSIONS_FILE).remember(ws, ".PseudoClaude/config.yaml",
                                                        fingerprint(path.read_bytes()))
    assert load(dirs).base_url is None and load(dirs).pending is not None


def test_its_mcp_servers_are_not_the_users(dirs: tuple[Path, Path]) -> None:
    """The workspace file's servers reach MCP as its own source (which waits), never merged
    into the user's settings."""
    home, ws = dirs
    write(home, {"mcp": {"servers": {"mine": {"command": "mine"}}}})
    write(ws, {"mcp": {"servers": {"theirs": {"command": "theirs"}}}})
    s = load(dirs)
    assert set(s.mcp.servers) == {"mine"} and s.pending is None


def test_the_users_editor_settings_are_never_held(dirs: tuple[Path, Path]) -> None:
    s = load(dirs, overrides={"baseUrl": "http://127.0.0.1:9", "approvals.runCommand": "allow"})
    assert s.base_url == "http://127.0.0.1:9" and s.approvals.run_command == "allow"
    assert s.pending is None
