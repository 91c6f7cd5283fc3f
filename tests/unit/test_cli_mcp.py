"""`pseudoclaude mcp list` as a user runs it: a real process, real MCP servers (the SDK's own,
``tests/fixtures/mcp/echo_server.py``); without a terminal a server the repository brings
(``.mcp.json``, its ``config.yaml``) is not asked about and never runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
