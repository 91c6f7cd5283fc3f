"""MCP over the network: streamable HTTP and SSE against the echo server started as a process
on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pseudoclaude.mcp import McpManager, McpOptions, TrustStore, parse_entry

ECHO = str(Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "echo_server.py")
ENVIRON = {"TOKEN": "tok-abcdef-123456", "PROBE": "probe-value"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_listening(port: int, process: subprocess.Popen[bytes], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the echo server exited with {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


@pytest.fixture(scope="module")
def ports() -> Iterator[dict[str, int]]:
    out: dict[str, int] = {}
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for kind in ("http", "sse"):
            port = free_port()
            processes.append(subprocess.Popen(
                [sys.executable, ECHO, f"--{kind}", str(port)], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            out[kind] = port
        for process, port in zip(processes, out.values(), strict=True):
            wait_listening(port, process)
        yield out
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()


async def test_http_and_sse_tools_and_calls(ports: dict[str, int], tmp_path: Path) -> None:
    headers = {"Authorization": "Bearer ${TOKEN}", "X-Probe": "${PROBE}"}
    servers = [
        parse_entry("web", {"type": "http", "url": f"http://127.0.0.1:{ports['http']}/mcp",
                            "headers": headers}, "user", ENVIRON),
        parse_entry("events", {"type": "sse", "url": f"http://127.0.0.1:{ports['sse']}/sse"},
                    "user", ENVIRON),
        parse_entry("nobody", {"type": "http", "url": f"http://127.0.0.1:{free_port()}/mcp"},
                    "user", ENVIRON),
    ]
    manager = McpManager(tmp_path, TrustStore(tmp_path / "home"),
                         options=McpOptions(start_timeout=10, tool_timeout=5))
    try:
        await manager.configure(servers)
        names = {t.name for t in await manager.tools()}
        assert {"mcp__web__echo", "mcp__events__echo"} <= names
        statuses = {i.name: (i.status, i.error) for i in manager.listing()}
        assert statuses["web"] == ("ready", None) and statuses["events"] == ("ready", None)
        status, error = statuses["nobody"]
        assert status == "failed" and "127.0.0.1" in (error or "")

        result = await manager.call_tool("mcp__web__echo", {"text": "over http"})
        assert (result.text, result.is_error) == ("over http", False)
        probe = await manager.call("web", "header", {"name": "x-probe"})
        assert probe.text == "probe-value"
        auth = await manager.call("web", "header", {"name": "authorization"})
        assert auth.text == "Bearer tok-abcdef-123456"
        big = await manager.call("web", "big", {})
        assert len(big.text) == 100 * 1024
        sse = await manager.call_tool("mcp__events__echo", {"text": "over sse"})
        assert sse.text == "over sse"

        task = asyncio.create_task(manager.call("web", "sleep", {"seconds": 30}))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await manager.call("web", "echo", {"text": "after"})).text == "after"
    finally:
        await manager.close()


async def test_secrets_stay_out_of_messages(tmp_path: Path,
                                            caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG", logger="pseudoclaude.mcp")
    url = f"http://user:pw-{os.getpid()}@127.0.0.1:{free_port()}/mcp?key=${{TOKEN}}"
    entry = parse_entry("leaky", {"type": "http", "url": url,
                                  "headers": {"Authorization": "Bearer ${TOKEN}"}},
                        "user", ENVIRON)
    manager = McpManager(tmp_path, TrustStore(tmp_path / "home"),
                         options=McpOptions(start_timeout=5))
    try:
        await manager.configure([entry])
        assert await manager.tools() == []
        [listed] = manager.listing()
        assert listed.status == "failed"
        for text in (listed.error or "", caplog.text, entry.summary()):
            assert "tok-abcdef-123456" not in text and f"pw-{os.getpid()}" not in text
    finally:
        await manager.close()
