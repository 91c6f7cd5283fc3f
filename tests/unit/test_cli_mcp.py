"""`pseudoclaude mcp list` as a user runs it: a real process, real MCP servers (the SDK's own,
``tests/fixtures/mcp/echo_server.py``); without a terminal a server the repository brings
(``.mcp.json``, its ``config.yaml``) is not asked about and never runs."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from pseudoclaude.fake_model import FakeModelServer
from support import server_env

ECHO = str(Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "echo_server.py")


def test_mcp_list_starts_the_servers_and_leaves_a_project_server_waiting(tmp_path: Path
                                                                         ) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (home / ".PseudoClaude").mkdir(parents=True)  # the user's own server runs
    (home / ".PseudoClaude" / "config.yaml").write_text(json.dumps(
        {"mcp": {"servers": {"echo": {"command": sys.executable, "args": [ECHO]}}}}))
    marker, ws_marker = tmp_path / "project-started", tmp_path / "workspace-started"
    (ws / ".PseudoClaude").mkdir(parents=True)  # the repository's own servers wait
    (ws / ".PseudoClaude" / "config.yaml").write_text(json.dumps(
        {"mcp": {"servers": {"wsecho": {"command": sys.executable, "approval": "allow",
                                        "args": [ECHO, "--marker", str(ws_marker)]}}}}))
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {
        "command": sys.executable, "args": [ECHO, "--marker", str(marker)]}}}))
    env = server_env(home)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pseudoclaude", "mcp", "list",
                               "--workspace", str(ws), *args], capture_output=True,
                              text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)

    listed = cli("--json")
    assert listed.returncode == 0, listed.stderr
    servers = {s["name"]: s for s in json.loads(listed.stdout)["servers"]}
    assert servers["echo"]["status"] == "ready" and servers["echo"]["source"] == "user"
    assert "echo" in servers["echo"]["tools"]
    assert servers["proj"]["status"] == "needsApproval" and servers["proj"]["tools"] == []
    assert servers["wsecho"]["status"] == "needsApproval" and servers["wsecho"]["tools"] == []
    assert servers["wsecho"]["source"] == "workspace"
    assert not marker.exists() and not ws_marker.exists()  # never ran
    text = cli().stdout
    assert "proj (.mcp.json): waits for your approval" in text
    assert "wsecho (config.yaml): waits for your approval" in text


def offered(fake: FakeModelServer) -> list[str]:
    """The tools offered in the first model request."""
    return [t["name"] for t in fake.requests[0]["body"].get("tools", [])]


def test_run_asks_about_a_project_server_before_it_streams(tmp_path: Path) -> None:
    """``run`` on a terminal asks about a ``.mcp.json`` server first and waits; "once" starts
    it for this run. Without a terminal it says, in one line, how to approve it; ``mcp
    approve`` remembers the approval, ``mcp deny`` withdraws it."""
    ws, marker = tmp_path / "ws", tmp_path / "started"
    ws.mkdir()
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {
        "command": sys.executable, "args": [ECHO, "--marker", str(marker)]}}}))
    env = server_env(tmp_path / "home") | {"ANTHROPIC_API_KEY": "sk-test-cli"}
    script = {"turns": [{"text": "done"}],
              "rules": [{"when": {"has_tools": False}, "reply": {"text": "[]"}}]}

    def run(stdin: int) -> tuple[subprocess.CompletedProcess[str], list[str]]:
        with FakeModelServer(script) as fake:
            done = subprocess.run(  # a session of its own: no /dev/tty
                [sys.executable, "-m", "pseudoclaude", "run", "--workspace", str(ws),
                 "--base-url", fake.base_url, "hi"], capture_output=True, text=True,
                timeout=120, env=env, stdin=stdin, start_new_session=True)
            return done, offered(fake)

    done, tools = run(subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n" and "mcp__proj__echo" not in tools
    [line] = [x for x in done.stderr.splitlines() if "proj" in x]
    assert line == (f"pseudoclaude: MCP server proj (.mcp.json) waits for your approval and "
                    f"does not run: there is no terminal to ask (approve it: pseudoclaude mcp "
                    f"approve proj --workspace {ws})"), line
    assert not marker.exists()

    master, slave = pty.openpty()
    try:
        os.write(master, b"o\n")  # answered before the question is asked: it waits for it
        done, tools = run(slave)
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0, done.stderr
    assert "PseudoClaude wants to start the MCP server proj of this project" in done.stderr
    assert "waits for your approval" not in done.stderr
    assert done.stdout == "done\n" and "mcp__proj__echo" in tools, done.stderr
    assert marker.exists()

    def mcp(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pseudoclaude", "mcp", *args,
                               "--workspace", str(ws)], capture_output=True, text=True,
                              timeout=120, env=env, stdin=subprocess.DEVNULL,
                              start_new_session=True)

    approved = mcp("approve", "proj")
    assert approved.returncode == 0 and "approved MCP server proj" in approved.stdout
    done, tools = run(subprocess.DEVNULL)
    assert "mcp__proj__echo" in tools and "waits for your approval" not in done.stderr
    denied = mcp("deny", "proj", "--json")
    assert denied.returncode == 0 and json.loads(denied.stdout)["server"]["name"] == "proj"
    done, tools = run(subprocess.DEVNULL)
    assert "mcp__proj__echo" not in tools and "mcp approve proj" in done.stderr
    unknown = mcp("approve", "nope")
    assert unknown.returncode == 1 and "no MCP server named 'nope'" in unknown.stderr
