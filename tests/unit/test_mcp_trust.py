"""Approvals of project MCP servers: a ``.mcp.json`` server runs only once the user approved it,
the record lives outside the workspace, and a changed command asks again."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

from pseudoclaude.mcp import (
    APPROVALS_FILE,
    McpManager,
    McpOptions,
    ServerInfo,
    TrustStore,
    collect,
    parse_entry,
    workspace_key,
)

ECHO = str(Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "echo_server.py")


def write_project(ws: Path, servers: dict[str, object]) -> None:
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def echo_entry(marker: Path, *extra: str) -> dict[str, object]:
    return {"command": sys.executable, "args": [ECHO, "--marker", str(marker), *extra]}


def info(manager: McpManager, name: str) -> ServerInfo:
    return next(i for i in manager.listing() if i.name == name)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def test_store_once_and_remembered(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home" / ".PseudoClaude"
    store = TrustStore(home)
    assert not store.is_approved(ws, "s", "f1")
    store.approve_once(ws, "s", "f1")
    assert store.is_approved(ws, "s", "f1")
    assert not TrustStore(home).is_approved(ws, "s", "f1")  # once: this process only
    store.remember(ws, "s", "f1")
    later = TrustStore(home)
    assert later.is_approved(ws, "s", "f1")
    assert not later.is_approved(ws, "s", "f2")  # a changed command asks again
    assert not later.is_approved(ws, "t", "f1")
    assert not later.is_approved(tmp_path / "other", "s", "f1")
    path = home / APPROVALS_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text())
    assert data["workspaces"][workspace_key(ws)]["s"]["fingerprint"] == "f1"
    later.forget(ws, "s")
    assert not TrustStore(home).is_approved(ws, "s", "f1")


def test_store_keys_the_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    store = TrustStore(tmp_path / "home")
    store.remember(link, "s", "f")
    assert TrustStore(tmp_path / "home").is_approved(real, "s", "f")


def test_unreadable_record_counts_as_empty(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / APPROVALS_FILE).write_text("{broken", encoding="utf-8")
    store = TrustStore(home)
    assert not store.is_approved(tmp_path, "s", "f")
    store.remember(tmp_path, "s", "f")
    assert TrustStore(home).is_approved(tmp_path, "s", "f")


async def test_project_server_waits_for_approval(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    marker = tmp_path / "started.pids"
    write_project(ws, {"echo": echo_entry(marker)})
    # a record shipped inside the workspace (the same shape, the right key) is never read
    fake = {"version": 1, "workspaces": {workspace_key(ws): {"echo": {
        "fingerprint": collect(ws)[0].fingerprint, "approvedAt": 0}}}}
    for place in (ws / APPROVALS_FILE, ws / ".PseudoClaude" / APPROVALS_FILE):
        place.parent.mkdir(exist_ok=True)
        place.write_text(json.dumps(fake), encoding="utf-8")

    manager = McpManager(ws, TrustStore(home), options=McpOptions(start_timeout=15))
    try:
        await manager.configure(collect(ws))
        assert info(manager, "echo").status == "needsApproval"
        assert await manager.tools() == []
        refused = await manager.call("echo", "echo", {"text": "x"})
        assert refused.error_type == "unavailable" and "not been approved" in refused.text
        assert not marker.exists()  # the server never ran
        [request] = manager.pending_approvals()
        assert request.name == "echo" and request.source == "project"
        assert ECHO in request.summary

        assert (await manager.approve("echo", "allow_session")) is not None
        tools = await manager.tools()
        assert "mcp__echo__echo" in {t.name for t in tools}
        assert info(manager, "echo").status == "ready"
        assert marker.exists()
        assert manager.pending_approvals() == []
        assert TrustStore(home).is_approved(ws, "echo", collect(ws)[0].fingerprint)

        [pid] = [int(x) for x in marker.read_text().split()]
        assert alive(pid)

        write_project(ws, {"echo": echo_entry(marker, "--changed")})
        await manager.configure(collect(ws))
        assert info(manager, "echo").status == "needsApproval"  # a changed command asks again
    finally:
        start = time.monotonic()
        await manager.close()
        assert time.monotonic() - start < 7
    assert not alive(pid)  # close() (and the reconfiguration) left no process behind


async def test_approval_overrides_and_denial(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = tmp_path / "never.pids"
    write_project(ws, {
        "self-approved": {**echo_entry(marker), "approval": "allow"},
        "denied": {**echo_entry(marker), "approval": "deny"},
        "off": {**echo_entry(marker), "disabled": True},
        "later-denied": echo_entry(marker),
    })
    settings = {"mcp": {"servers": {"asks": {**echo_entry(marker), "approval": "ask"}}}}
    manager = McpManager(ws, TrustStore(tmp_path / "home"))
    try:
        await manager.configure(collect(ws, settings=settings))
        statuses = {i.name: i.status for i in manager.listing()}
        assert statuses == {"asks": "needsApproval", "self-approved": "needsApproval",
                            "denied": "disabled", "off": "disabled",
                            "later-denied": "needsApproval"}
        assert "approval: deny" in (info(manager, "denied").error or "")
        denied = await manager.approve("later-denied", "deny")
        assert denied is not None and denied.status == "disabled"
        assert await manager.approve("nope", "allow_once") is None
        assert await manager.tools() == []
        assert not marker.exists()
    finally:
        await manager.close()


async def test_allow_once_lasts_for_the_process(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    entry = parse_entry("s", {"command": "pseudoclaude-no-such-server"}, "project")
    trust = TrustStore(tmp_path / "home")
    manager = McpManager(ws, trust)
    try:
        await manager.configure([entry])
        assert info(manager, "s").status == "needsApproval"
        await manager.approve("s", "allow_once")
        assert trust.is_approved(ws, "s", entry.fingerprint)
        assert not (tmp_path / "home" / APPROVALS_FILE).exists()
        assert not TrustStore(tmp_path / "home").is_approved(ws, "s", entry.fingerprint)
    finally:
        await manager.close()
    assert not os.listdir(ws)
