"""`pseudoclaude mcp list` as a user runs it: a real process, real MCP servers (the SDK's own,
``tests/fixtures/mcp/echo_server.py``); without a terminal a project server is not asked about
and never runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support import server_env

ECHO = str(Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "echo_server.py")


def test_mcp_list_starts_the_servers_and_leaves_a_project_server_waiting(tmp_path: Path
                                                                         ) -> None:
    ws = tmp_path / "ws"
    (ws / ".PseudoClaude").mkdir(parents=True)
    (ws / ".PseudoClaude" / "config.yaml").write_text(json.dumps(
        {"mcp": {"servers": {"echo": {"command": sys.executable, "args": [ECHO]}}}}))
    marker = tmp_path / "project-started"
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {
        "command": sys.executable, "args": [ECHO, "--marker", str(marker)]}}}))
    env = server_env(tmp_path / "home")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pseudoclaude", "mcp", "list",
                               "--workspace", str(ws), *args], capture_output=True,
                              text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)

    listed = cli("--json")
    assert listed.returncode == 0, listed.stderr
    servers = {s["name"]: s for s in json.loads(listed.stdout)["servers"]}
    assert servers["echo"]["status"] == "ready" and servers["echo"]["source"] == "workspace"
    assert "echo" in servers["echo"]["tools"]
    assert servers["proj"]["status"] == "needsApproval" and servers["proj"]["tools"] == []
    assert not marker.exists()  # never ran
    text = cli().stdout
    assert "echo (config.yaml): ready, 13 tools" in text
    assert "proj (.mcp.json): waits for your approval" in text
