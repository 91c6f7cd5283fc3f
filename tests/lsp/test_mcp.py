"""MCP servers through a real language server: real MCP servers written with the SDK's server
API (``tests/fixtures/mcp/echo_server.py`` over stdio) give the model their tools; calls pass
the approval gate; a large result is spilled whole; a project server (``.mcp.json``) starts
only after the user approved it; a server that does not exist, hangs or crashes never breaks a
run; a cancelled run cancels its call; ``pseudoclaude/mcp/list`` and ``mcpChanged``."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import (
    INVALID_PARAMS,
    MCP_APPROVE,
    MCP_LIST,
    MCP_RESTART,
    REQUEST_CANCELLED,
    RUN,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mcp"
ECHO = str(FIXTURES / "echo_server.py")
HANG = str(FIXTURES / "hang_server.py")
F = TypeVar("F", bound=Callable[..., Any])


def mcp(*, settings: dict[str, Any] | None = None,
        project: Callable[[Path], dict[str, Any]] | None = None,
        answer: str | None = "allowOnce") -> Callable[[F], F]:
    """The MCP configuration of a test: ``mcp`` settings, a ``.mcp.json`` (made from the
    test's folder) and the answer to approvals (``None``: the user dismisses the question of
    a client without the approvals capability)."""
    def mark(test: F) -> F:
        test.mcp = {"settings": settings or {}, "project": project,  # type: ignore[attr-defined]
                    "answer": answer}
        return test
    return mark


@pytest.fixture
def env(env: Any, request: Any) -> Any:
    config = getattr(request.function, "mcp", {})
    env.mcp_settings = config.get("settings", {})
    project = config.get("project")
    env.mcp_json = project(env.tmp) if project is not None else None
    answer = config.get("answer", "allowOnce")
    env.approve_answer = {"decision": answer}
    if answer is None:
        env.approval_answer = None
    return env


def echo(marker: Path | None = None) -> dict[str, Any]:
    return {"command": sys.executable,
            "args": [ECHO, *(["--marker", str(marker)] if marker else [])]}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def servers(env: Any, client: LanguageClient) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in (await env.call(client, MCP_LIST))["servers"]}


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["name"] for t in request["body"].get("tools", [])]


@mcp(settings={"servers": {"echo": echo(), "missing": {"command": "pseudoclaude-no-such-mcp"},
                           "broken": {"args": ["no command"]}},
               "startTimeout": 20})
async def test_tools_are_offered_called_and_listed(approving: LanguageClient, env: Any) -> None:
    """The model sees the server's tools with their schemas (and only the ready servers');
    an approved call returns the server's answer; servers that cannot start are listed with
    why, and the run is not broken by them."""
    env.fake.add_turns(call("mcp__echo__echo", text="hello from MCP"), {"text": "done"})
    result = await env.call(approving, RUN, {"prompt": "use the echo tool"})
    assert result["stopReason"] == "completed"
    first = next(r for r in env.fake.requests if r["body"].get("tools"))
    names = tool_names(first)
    assert "mcp__echo__echo" in names and "read_file" in names
    assert not any(n.startswith(("mcp__missing", "mcp__broken")) for n in names)
    schema = next(t for t in first["body"]["tools"] if t["name"] == "mcp__echo__echo")
    assert schema["input_schema"]["properties"]["text"]["type"] == "string"
    [asked] = [a for a in env.approve_requests if a["kind"] == "mcp"]
    assert (asked["server"], asked["tool"], asked["arguments"]) == (
        "echo", "echo", {"text": "hello from MCP"})
    [envelope] = env.envelopes()
    assert envelope["ok"] and envelope["content"] == "hello from MCP"
    listed = await servers(env, approving)
    assert listed["echo"]["status"] == "ready" and "echo" in listed["echo"]["tools"]
    assert listed["echo"]["source"] == "user"
    assert listed["missing"]["status"] == "failed"
    assert "pseudoclaude-no-such-mcp" in listed["missing"]["error"]
    assert listed["broken"]["status"] == "failed" and "command" in listed["broken"]["error"]


@mcp(settings={"servers": {"echo": echo()}})
async def test_a_denied_call_never_reaches_the_server(approving: LanguageClient,
                                                      env: Any) -> None:
    env.approve_answer = {"decision": "deny"}
    env.fake.add_turns(call("mcp__echo__crash"), {"text": "it was denied"})
    await env.call(approving, RUN, {"prompt": "crash it"})
    [envelope] = env.envelopes()
    assert (envelope["error_type"], envelope["error"], envelope["metadata"]) == (
        "permission_denied", "mcp__echo__crash was denied by the user", {"source": "user"})
    env.approve_answer = {"decision": "allowOnce"}
    env.fake.add_turns(call("mcp__echo__pid"), {"text": "same process"})
    await env.call(approving, RUN, {"prompt": "which process?"})
    # the crash tool would have killed it: still the first process, never restarted
    assert (await servers(env, approving))["echo"]["status"] == "ready"
    assert env.envelopes()[-1]["ok"]


@mcp(settings={"servers": {"echo": echo()}})
async def test_a_large_result_is_spilled_whole(approving: LanguageClient, env: Any) -> None:
    env.approve_answer = {"decision": "allowSession"}
    env.fake.add_turns(call("mcp__echo__big"), {"text": "read it"})
    await env.call(approving, RUN, {"prompt": "get the big text"})
    [result] = [m["tool_result"] for m in env.log_messages() if m.get("tool_result")]
    assert result["content"].startswith("[content offloaded] original size:")
    spilled = list((env.folders[0] / ".PseudoClaude" / "sessions").glob("*/tool-results/*"))
    [path] = spilled
    spilled_text = path.read_text()
    assert len(spilled_text) >= 100 * 1024 and "...[truncated]" not in spilled_text


def project_echo(tmp: Path) -> dict[str, Any]:
    return {"mcpServers": {"proj": echo(tmp / "proj-started")}}


@mcp(project=project_echo, answer="deny")
async def test_a_denied_project_server_never_runs(approving: LanguageClient, env: Any) -> None:
    """Asked once after the folder opens (``mcpServer``, with its command line); denied, it
    never runs and its tools are not offered."""
    await env.until(lambda: any(a["kind"] == "mcpServer" for a in env.approve_requests))
    [asked] = [a for a in env.approve_requests if a["kind"] == "mcpServer"]
    assert asked["server"] == "proj" and ECHO in asked["command"]
    await env.until(lambda: True)
    env.fake.add_turns({"text": "hi"})
    await env.call(approving, RUN, {"prompt": "hello"})
    listed = await servers(env, approving)
    assert listed["proj"]["source"] == "project" and listed["proj"]["status"] == "disabled"
    assert not any(n.startswith("mcp__proj") for r in env.fake.requests for n in tool_names(r))
    assert not (env.tmp / "proj-started").exists()
    # the user changes their mind (the chat's menu): allowed once, it runs for this process
    approved = await env.call(approving, MCP_APPROVE, {"server": "proj",
                                                        "decision": "allowOnce"})
    assert approved["server"]["name"] == "proj"
    assert approved["server"]["status"] in ("starting", "ready")
    env.fake.add_turns({"text": "hi again"})
    before = len(env.fake.requests)
    await env.call(approving, RUN, {"prompt": "hello again"})
    assert any("mcp__proj__echo" in tool_names(r) for r in env.fake.requests[before:])
    assert (env.tmp / "proj-started").exists()
    with pytest.raises(JsonRpcException) as unknown:
        await env.call(approving, MCP_RESTART, {"server": "nope"})
    assert unknown.value.code == INVALID_PARAMS and "server" in unknown.value.message


@mcp(project=project_echo, answer="allowSession")
async def test_an_approved_project_server_is_remembered_outside_the_workspace(
        approving: LanguageClient, env: Any) -> None:
    await env.until(lambda: any(a["kind"] == "mcpServer" for a in env.approve_requests))
    env.fake.add_turns({"text": "hi"})
    await env.until(lambda: True)
    for _ in range(50):  # the answer is applied in the background
        if (await servers(env, approving))["proj"]["status"] != "needsApproval":
            break
        await asyncio.sleep(0.1)
    await env.call(approving, RUN, {"prompt": "hello"})
    assert "mcp__proj__echo" in tool_names(next(r for r in env.fake.requests
                                                 if r["body"].get("tools")))
    assert (env.tmp / "proj-started").exists()
    record = env.tmp / "mcp-approvals.json"  # the user's data folder, not the workspace's
    assert record.exists() and str(env.folders[0]) not in str(record.parent)
    assert not list(env.folders[0].rglob("mcp-approvals.json"))


@mcp(settings={"servers": {"echo": echo()}, "toolTimeout": 60}, answer="allowSession")
async def test_a_crash_mid_call_then_the_next_call_restarts_it(approving: LanguageClient,
                                                               env: Any) -> None:
    env.fake.add_turns(call("mcp__echo__crash"), call("mcp__echo__echo", text="back"),
                       {"text": "recovered"})
    result = await env.call(approving, RUN, {"prompt": "crash, then echo"})
    assert result["stopReason"] == "completed"
    crashed, again = env.envelopes()
    assert not crashed["ok"] and again["ok"] and again["content"] == "back"


@mcp(settings={"servers": {"echo": echo()}}, answer="allowSession")
async def test_a_cancelled_run_cancels_its_call(approving: LanguageClient, env: Any) -> None:
    env.fake.add_turns(call("mcp__echo__sleep", seconds=60))
    running = asyncio.ensure_future(approving.protocol.send_request_async(
        RUN, {"prompt": "sleep"}, msg_id="run-with-mcp"))
    await env.until(lambda: any(e.get("kind") == "toolCall" for e in env.events), 30)
    await asyncio.sleep(0.5)
    start = time.monotonic()
    approving.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-with-mcp"))
    with pytest.raises(JsonRpcException) as canceled:
        await asyncio.wait_for(running, 20)
    assert canceled.value.code == REQUEST_CANCELLED and time.monotonic() - start < 10
    [envelope] = env.envelopes()
    assert envelope["error_type"] == "canceled"
    env.fake.add_turns(call("mcp__echo__echo", text="still there"), {"text": "ok"})
    await env.call(approving, RUN, {"prompt": "echo"})
    assert env.envelopes()[-1]["content"] == "still there", env.envelopes()


@mcp(settings={"servers": {"hang": {"command": sys.executable, "args": [HANG]},
                           "echo": echo()}, "startTimeout": 3})
async def test_a_hanging_server_fails_within_the_start_timeout(approving: LanguageClient,
                                                               env: Any) -> None:
    env.fake.add_turns({"text": "answered anyway"})
    start = time.monotonic()
    result = await env.call(approving, RUN, {"prompt": "hello"})
    assert result["stopReason"] == "completed" and time.monotonic() - start < 20
    listed = await servers(env, approving)
    assert listed["hang"]["status"] == "failed" and listed["echo"]["status"] == "ready"


@mcp(settings={"servers": {"hang": {"command": sys.executable, "args": [HANG]}},
               "startTimeout": 1})
async def test_the_start_timeout_setting_reaches_the_servers(approving: LanguageClient,
                                                             env: Any) -> None:
    """``mcp.startTimeout: 1``: a server that never answers is given up after one second,
    not after the default ten (a restart answers once the start is over)."""
    start = time.monotonic()
    server = (await env.call(approving, MCP_RESTART, {"server": "hang"}))["server"]
    elapsed = time.monotonic() - start
    assert server["status"] == "failed" and "within 1 s" in server["error"], server
    assert 0.9 < elapsed < 5, elapsed  # the default (10 s) would take twice this bound
    assert (await servers(env, approving))["hang"]["status"] == "failed"


async def settled(env: Any, client: LanguageClient, timeout: float
                  ) -> tuple[dict[str, dict[str, Any]], float]:
    """``pseudoclaude/mcp/list`` once no server is ``starting`` (and how long that took)."""
    start = time.monotonic()
    while True:
        listed = await servers(env, client)
        if listed and all(s["status"] != "starting" for s in listed.values()):
            return listed, time.monotonic() - start
        assert time.monotonic() - start < timeout, f"still starting: {listed}"
        await asyncio.sleep(0.1)


@mcp(settings={"servers": {"echo": echo()}, "startTimeout": 20}, project=project_echo,
     answer=None)
async def test_an_open_folders_servers_start_without_a_run(not_approving: LanguageClient,
                                                           env: Any) -> None:
    """The user's own servers start in the background once the folder is open: the listing
    settles to ``ready`` (with the tools) before any run; the repository's server, waiting
    for an approval (the user dismissed the question), does not start."""
    listed, _ = await settled(env, not_approving, 30)
    assert listed["echo"]["status"] == "ready" and "echo" in listed["echo"]["tools"]
    assert listed["proj"]["status"] == "needsApproval"
    assert not env.fake.requests  # no run, no model request
    await asyncio.sleep(0.5)
    assert not (env.tmp / "proj-started").exists()


@mcp(settings={"servers": {"hang": {"command": sys.executable, "args": [HANG]}},
               "startTimeout": 1})
async def test_a_hanging_server_fails_without_a_run(approving: LanguageClient,
                                                    env: Any) -> None:
    """A server that never answers is ``failed`` about ``mcp.startTimeout`` after the folder
    opened, without a run, and says why."""
    listed, elapsed = await settled(env, approving, 10)
    assert listed["hang"]["status"] == "failed", listed
    assert "within 1 s" in listed["hang"]["error"]
    assert elapsed < 5, elapsed
    assert not env.fake.requests
