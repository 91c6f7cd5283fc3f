"""The MCP manager against real servers over stdio (tests/fixtures/mcp, built with the SDK).

Most tests share one manager (one echo server, plus two that cannot start) to keep the set
fast; the manager runs on its own thread, so it serves every test's event loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pseudoclaude.mcp import McpManager, McpOptions, ServerInfo, TrustStore, parse_entry

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mcp"
ECHO = str(FIXTURES / "echo_server.py")
HANG = str(FIXTURES / "hang_server.py")
ENVIRON = {**os.environ, "GREETING": "hello",
           "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key-0000000000"}
CHANGES: list[tuple[str, list[ServerInfo]]] = []
"""What the shared manager's change hook saw: (the thread it ran on, the listing)."""


def record_change(listing: list[ServerInfo]) -> None:
    CHANGES.append((threading.current_thread().name, listing))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def pids(marker: Path) -> list[int]:
    return [int(x) for x in marker.read_text().split()] if marker.exists() else []


def status(manager: McpManager, name: str) -> ServerInfo:
    return next(i for i in manager.listing() if i.name == name)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpManager]:
    root = tmp_path_factory.mktemp("mcp")
    manager = McpManager(root, TrustStore(root / "home"), environ=ENVIRON,
                         on_change=record_change,
                         options=McpOptions(start_timeout=15, tool_timeout=2))
    servers = [
        parse_entry("echo", {"command": sys.executable, "args": [ECHO],
                             "env": {"GREETING_COPY": "${GREETING}"}}, "user", ENVIRON),
        parse_entry("missing", {"command": "pseudoclaude-no-such-server", "args": ["-x"]},
                    "user", ENVIRON),
        parse_entry("broken", {"args": ["no command"]}, "user", ENVIRON),
        parse_entry("exits", {"command": sys.executable, "args": [
            "-c", "import sys; print('bad config file', file=sys.stderr); sys.exit(2)"]},
            "user", ENVIRON),
    ]
    asyncio.run(manager.configure(servers))
    yield manager
    manager.close_blocking()


async def test_tools_are_offered_with_names_and_schemas(shared: McpManager) -> None:
    tools = {t.name: t for t in await shared.tools()}
    assert {"mcp__echo__echo", "mcp__echo__big", "mcp__echo__dotted_name"} <= set(tools)
    echo = tools["mcp__echo__echo"]
    assert (echo.server, echo.tool, echo.description) == ("echo", "echo",
                                                          "Return the text unchanged.")
    schema = echo.spec().input_schema
    assert schema["type"] == "object" and schema["required"] == ["text"]
    assert schema["properties"] == {"text": {"title": "Text", "type": "string"}}
    assert shared.resolve("mcp__echo__dotted_name") == ("echo", "dotted.name")
    result = await tools["mcp__echo__dotted_name"].call({"text": "x"})
    assert result.text == "dotted:x"


async def test_servers_that_cannot_start_fail_alone(shared: McpManager) -> None:
    await shared.tools()
    missing, broken, echo = (status(shared, n) for n in ("missing", "broken", "echo"))
    assert missing.status == "failed"
    assert "pseudoclaude-no-such-server" in (missing.error or "")
    assert "no such file" in (missing.error or "")
    assert broken.status == "failed" and "no `command`" in (broken.error or "")
    exits = status(shared, "exits")
    assert exits.status == "failed" and "exited before it answered" in (exits.error or "")
    assert "bad config file" in (exits.error or "")
    assert echo.status == "ready" and "echo" in echo.tools
    result = await shared.call("missing", "anything", {})
    assert result.error_type == "unavailable" and "pseudoclaude-no-such-server" in result.text


async def test_call_results(shared: McpManager) -> None:
    text = await shared.call_tool("mcp__echo__echo", {"text": "héllo"})
    assert (text.text, text.is_error) == ("héllo", False)
    big = await shared.call("echo", "big", {})
    assert len(big.text.encode()) == 100 * 1024 and not big.is_error
    image = await shared.call("echo", "image", {})
    assert image.text == "a picture\n[image: image/png, 8 bytes]"
    mixed = await shared.call("echo", "mixed", {})
    assert mixed.text == "resource text\n[resource link: file:///linked.txt (linked)]"
    failed = await shared.call("echo", "fail", {"message": "no luck"})
    assert failed.is_error and failed.error_type == "tool_error" and "no luck" in failed.text


async def test_environment_of_a_local_server(shared: McpManager) -> None:
    assert (await shared.call("echo", "env", {"name": "GREETING_COPY"})).text == "hello"
    assert (await shared.call("echo", "env", {"name": "GREETING"})).text == "hello"
    assert (await shared.call("echo", "env", {"name": "ANTHROPIC_API_KEY"})).text == "<unset>"


async def test_bad_calls(shared: McpManager) -> None:
    assert (await shared.call_tool("mcp__nope__x", {})).error_type == "unknown_tool"
    raw = await shared.call("echo", "echo", '{"text": ')
    assert raw.error_type == "invalid_arguments"
    unknown = await shared.call("echo", "no_such_tool", {})
    assert unknown.is_error and "no_such_tool" in unknown.text
    wrong = await shared.call("echo", "echo", {"txt": "x"})
    assert wrong.is_error


async def test_stderr_goes_to_the_log(shared: McpManager, caplog: pytest.LogCaptureFixture,
                                      capfd: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.INFO, logger="pseudoclaude.mcp.server")
    assert (await shared.call("echo", "shout", {"text": "to-the-log-42"})).text == "ok"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and "to-the-log-42" not in caplog.text:
        await asyncio.sleep(0.05)
    assert "[echo] to-the-log-42" in caplog.text
    out, err = capfd.readouterr()
    assert "to-the-log-42" not in out and "to-the-log-42" not in err


async def test_call_timeout_leaves_the_server_usable(shared: McpManager) -> None:
    before = (await shared.call("echo", "pid", {})).text
    start = time.monotonic()
    result = await shared.call("echo", "sleep", {"seconds": 30})
    assert time.monotonic() - start < 6
    assert result.error_type == "timeout" and "2 s" in result.text
    assert (await shared.call("echo", "pid", {})).text == before


async def test_cancelling_the_caller_cancels_the_call(shared: McpManager) -> None:
    before = (await shared.call("echo", "pid", {})).text
    task = asyncio.create_task(shared.call("echo", "sleep", {"seconds": 30}))
    await asyncio.sleep(0.5)
    start = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - start < 1
    again = await shared.call("echo", "echo", {"text": "still here"})
    assert again.text == "still here"
    assert (await shared.call("echo", "pid", {})).text == before


async def test_changed_tools_reach_the_listing_and_the_hook(shared: McpManager) -> None:
    await shared.tools()
    CHANGES.clear()
    assert (await shared.call("echo", "grow", {})).text == "grown"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and "extra" not in status(shared, "echo").tools:
        await asyncio.sleep(0.05)
    assert "extra" in status(shared, "echo").tools
    assert "mcp__echo__extra" in {t.name for t in await shared.tools()}
    assert (await shared.call_tool("mcp__echo__extra", {})).text == "extra"
    thread, listing = CHANGES[-1]
    assert thread == "pseudoclaude-mcp"  # the hook runs on the MCP thread
    assert "extra" in next(i for i in listing if i.name == "echo").tools


async def test_crash_mid_call_then_restart(shared: McpManager) -> None:
    first = int((await shared.call("echo", "pid", {})).text)
    crashed = await shared.call("echo", "crash", {})
    assert crashed.is_error and crashed.error_type == "connection_lost"
    assert "stopped during the call" in crashed.text and "`echo`" in crashed.text
    after = await shared.call("echo", "echo", {"text": "back"})
    assert after.text == "back" and not after.is_error
    second = int((await shared.call("echo", "pid", {})).text)
    assert second != first
    assert status(shared, "echo").status == "ready"
    assert "mcp__echo__echo" in {t.name for t in await shared.tools()}


async def test_nothing_starts_before_it_is_needed(tmp_path: Path) -> None:
    marker = tmp_path / "echo.pids"
    changes: list[list[ServerInfo]] = []
    manager = McpManager(tmp_path, TrustStore(tmp_path / "home"), on_change=changes.append)
    try:
        listing = await manager.configure([parse_entry(
            "echo", {"command": sys.executable, "args": [ECHO, "--marker", str(marker)]},
            "user")])  # (a repository's own server would wait for an approval first)
        assert [(i.name, i.status) for i in listing] == [("echo", "starting")]
        await asyncio.sleep(0.3)
        assert not marker.exists()
        assert [[i.status for i in c] for c in changes] == [["starting"]]
    finally:
        await manager.close()
    assert not marker.exists()
    after = await manager.call("echo", "echo", {"text": "x"})
    assert after.error_type == "unavailable"
    assert await manager.tools() == []


async def test_a_server_that_never_answers_fails_within_the_timeout(tmp_path: Path) -> None:
    marker = tmp_path / "hang.pids"
    failed_at: list[float] = []

    def on_change(listing: list[ServerInfo]) -> None:
        if listing[0].status == "failed" and not failed_at:
            failed_at.append(time.monotonic())

    manager = McpManager(tmp_path, TrustStore(tmp_path / "home"), on_change=on_change,
                         options=McpOptions(start_timeout=1.0))
    await manager.configure([parse_entry(
        "hang", {"command": sys.executable, "args": [HANG, "--marker", str(marker)]}, "user")])
    start = time.monotonic()
    try:
        assert await manager.tools() == []
        elapsed = time.monotonic() - start
        assert elapsed < 2.5
        assert failed_at and failed_at[0] - start < 2.5
        info = status(manager, "hang")
        assert info.status == "failed" and "did not answer within 1 s" in (info.error or "")
        result = await manager.call("hang", "x", {})
        assert result.error_type == "unavailable"
        assert time.monotonic() - start < 3  # a failed start is not retried by itself
        [pid] = pids(marker)
    finally:
        await manager.close()
    assert not alive(pid)



async def test_warm_starts_only_the_servers_not_started_that_may_start(tmp_path: Path) -> None:
    """``warm()`` (an open folder): the user's server starts in the background and is
    ``ready`` without a run; a repository's server waiting for an approval does not start;
    a server whose start failed, or that stopped, is not started again by a later ``warm()``
    (it waits until it is next needed, as after any stop)."""
    echo_marker, project_marker = tmp_path / "echo.pids", tmp_path / "project.pids"
    manager = McpManager(tmp_path, TrustStore(tmp_path / "home"),
                         options=McpOptions(start_timeout=15))
    try:
        await manager.configure([
            parse_entry("echo", {"command": sys.executable,
                                 "args": [ECHO, "--marker", str(echo_marker)]}, "user"),
            parse_entry("proj", {"command": sys.executable,
                                 "args": [ECHO, "--marker", str(project_marker)]}, "project"),
            parse_entry("missing", {"command": "pseudoclaude-no-such-server"}, "user"),
        ])
        manager.warm()
        deadline = time.monotonic() + 20
        while {status(manager, n).status for n in ("echo", "missing")} & {"starting"}:
            assert time.monotonic() < deadline, manager.listing()
            await asyncio.sleep(0.05)
        assert status(manager, "echo").status == "ready" and status(manager, "echo").tools
        assert status(manager, "missing").status == "failed"
        assert status(manager, "proj").status == "needsApproval"
        crashed = await manager.call("echo", "crash", {})
        assert crashed.error_type == "connection_lost"
        assert status(manager, "echo").status == "failed"
        manager.warm()
        await asyncio.sleep(1.0)
        assert len(pids(echo_marker)) == 1 and not project_marker.exists()
        assert [status(manager, n).status for n in ("echo", "missing", "proj")] == [
            "failed", "failed", "needsApproval"]
    finally:
        await manager.close()
