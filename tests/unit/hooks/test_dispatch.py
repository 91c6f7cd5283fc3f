"""Firing hooks for real: shell commands in their own process group, an HTTP endpoint, prompt
texts; their answers combined; failures, timeouts and garbled output reported, never
deciding."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.hooks import Dispatcher, SessionHooks, parse_entries
from pseudoclaude.hooks.model import Hook
from pseudoclaude.llm.types import ToolCall, ToolResult
from support import until


def hooks(*entries: dict[str, Any]) -> list[Hook]:
    loaded = parse_entries(list(entries), "settings", "settings")
    assert not loaded.problems, loaded.problems
    return list(loaded.hooks)


def shell(name: str, event: str, command: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "event": event, "action": {"type": "shell", "command": command},
            **more}


class Env:
    def __init__(self, tmp: Path, defined: list[Hook]) -> None:
        self.warnings: list[str] = []
        self.dispatcher = Dispatcher(self.warnings.append)
        self.defined = defined
        self.session = SessionHooks(self.dispatcher, lambda: self.defined,
                                    session_id="20260101-000000-abcd",
                                    transcript_path=tmp / "conversation.jsonl",
                                    cwd=lambda: tmp, mode=lambda: "default")


CALL = ToolCall("call-1", "run_command", {"command": "git status"})


async def test_exit_2_blocks_with_standard_error_as_the_reason(tmp_path: Path) -> None:
    env = Env(tmp_path, hooks(shell("guard", "PreToolUse", 'echo "not here" >&2; exit 2')))
    done = await env.session.pre_tool_use(CALL)
    assert done.decided is not None and done.decided.decision == "deny"
    assert done.decided.message() == "[hook guard] not here"
    assert env.warnings == []


async def test_the_payload_on_standard_input(tmp_path: Path) -> None:
    out = tmp_path / "payload.json"
    env = Env(tmp_path, hooks(shell("record", "PreToolUse", f"cat > {out}; pwd >> {out}.cwd; "
                                    f'echo "$CLAUDE_PROJECT_DIR" >> {out}.cwd')))
    await env.session.pre_tool_use(CALL)
    text = out.read_text()
    assert text.endswith("\n") and text.count("\n") == 1  # one line, sorted keys
    payload = json.loads(text)
    assert list(payload) == sorted(payload)
    assert payload == {
        "event": "PreToolUse", "hook_event_name": "PreToolUse",
        "session_id": "20260101-000000-abcd",
        "transcript_path": str(tmp_path / "conversation.jsonl"), "cwd": str(tmp_path),
        "mode": "default", "permission_mode": "default", "tool_name": "run_command",
        "tool_input": {"command": "git status"}, "tool_use_id": "call-1"}
    assert Path(f"{out}.cwd").read_text().split() == [str(tmp_path)] * 2


async def test_json_answers_in_file_order(tmp_path: Path) -> None:
    ask = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                             "permissionDecision": "ask",
                                             "permissionDecisionReason": "check it"}})
    allow = json.dumps({"decision": "approve", "reason": "fine",
                        "hookSpecificOutput": {"updatedInput": {"command": "git status -s"},
                                               "additionalContext": "ran the guard"}})
    env = Env(tmp_path, hooks(shell("allows", "PreToolUse", f"echo '{allow}'"),
                              shell("asks", "PreToolUse", f"echo '{ask}'")))
    done = await env.session.pre_tool_use(CALL)
    assert done.decided is not None
    assert (done.decided.decision, done.decided.hook, done.decided.reason) == \
        ("ask", "asks", "check it")  # ask beats allow
    assert done.updated_input == {"command": "git status -s"} and done.updated_by == "allows"
    assert env.session.take_context() == "[hook allows] ran the guard"
    assert env.session.take_context() is None  # taken once


async def test_a_deny_beats_everything_and_drops_the_updated_input(tmp_path: Path) -> None:
    deny = json.dumps({"decision": "block", "reason": "no pushing"})
    change = json.dumps({"hookSpecificOutput": {"updatedInput": {"command": "ls"}}})
    env = Env(tmp_path, hooks(shell("changes", "PreToolUse", f"echo '{change}'"),
                              shell("denies", "PreToolUse", f"echo '{deny}'")))
    done = await env.session.pre_tool_use(CALL)
    assert done.decided is not None and done.decided.message() == "[hook denies] no pushing"
    assert done.updated_input is None


async def test_failures_and_garbage_are_warnings_that_decide_nothing(tmp_path: Path) -> None:
    env = Env(tmp_path, hooks(shell("broken", "PreToolUse", "echo oops >&2; exit 1"),
                              shell("garbage", "PreToolUse", "echo '{\"decision\": deny'")))
    done = await env.session.pre_tool_use(CALL)
    assert done.decided is None
    assert env.warnings == [
        "hook broken (PreToolUse) failed: exit status 1: oops; it did not block",
        "hook garbage (PreToolUse) printed output that is not valid JSON: "
        '{"decision": deny; it is taken as plain text']


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_a_timeout_kills_the_process_group_and_does_not_block(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = f"sleep 60 & echo $! > {pids}; echo $$ >> {pids}; wait; exit 2"
    env = Env(tmp_path, hooks(shell("slow", "PreToolUse", command, timeout="300ms")))
    started = time.monotonic()
    done = await env.session.pre_tool_use(CALL)
    assert time.monotonic() - started < 10
    assert done.decided is None  # it would have blocked: it did not finish
    assert env.warnings == ["hook slow (PreToolUse) timed out after 0.3s and was stopped; "
                            "it did not block"]
    child, shell_pid = (int(x) for x in pids.read_text().split())
    await until(lambda: not _alive(child) and not _alive(shell_pid), 10, "the group killed")


async def test_cancelling_what_waits_kills_the_hook(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    env = Env(tmp_path, hooks(shell("slow", "PreToolUse",
                                    f"sleep 60 & echo $! > {pids}; wait")))
    task = asyncio.ensure_future(env.session.pre_tool_use(CALL))
    await until(lambda: pids.exists() and pids.read_text().strip(), 10, "the hook started")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    child = int(pids.read_text())
    await until(lambda: not _alive(child), 10, "the hook's child killed")


async def test_only_once_per_session_and_again_after_a_resume(tmp_path: Path) -> None:
    count = tmp_path / "count"
    env = Env(tmp_path, hooks(shell("once", "Stop", f"echo x >> {count}", only_once=True),
                              shell("always", "Stop", f"echo y >> {count}")))
    for _ in range(3):
        await env.session.stop("completed", 1, "done")
    assert sorted(count.read_text().split()) == ["x", "y", "y", "y"]
    env.session.resumed()
    await env.session.stop("completed", 1, "done")
    assert count.read_text().split().count("x") == 2


async def test_async_hooks_run_in_the_background_and_never_block(tmp_path: Path) -> None:
    flag, gate = tmp_path / "flag", tmp_path / "gate"
    env = Env(tmp_path, hooks(
        shell("background", "PostToolUse",
              f"while [ ! -e {gate} ]; do sleep 0.02; done; touch {flag}; exit 2",
              **{"async": True})))
    started = time.monotonic()
    await env.session.post_tool_use(CALL, ToolResult("call-1", "run_command", "ok"))
    assert time.monotonic() - started < 5 and not flag.exists()  # nobody waited for it
    gate.touch()
    await until(flag.exists, 10, "the background hook to finish")
    await env.dispatcher.aclose()
    assert env.session.take_context() is None  # its answer is ignored


async def test_post_tool_use_carries_the_result_and_gives_feedback(tmp_path: Path) -> None:
    out = tmp_path / "payload.json"
    env = Env(tmp_path, hooks(shell("lint", "PostToolUse",
                                    f"cat > {out}; echo 'lint: 2 problems' >&2; exit 2")))
    await env.session.post_tool_use(CALL, ToolResult("call-1", "run_command", "x" * 900, True))
    payload = json.loads(out.read_text())
    assert payload["tool_result"] == "x" * 500 and payload["is_error"] is True
    assert env.session.take_context() == "[hook lint] lint: 2 problems"


async def test_prompt_texts_and_plain_output_become_context(tmp_path: Path) -> None:
    env = Env(tmp_path, hooks(
        {"name": "style", "event": "UserPromptSubmit",
         "action": {"type": "prompt", "text": "Use tabs."}},
        shell("time", "UserPromptSubmit", "echo 'Current time: noon'"),
        shell("ignored", "Stop", "echo 'plain output of a Stop hook'")))
    assert await env.session.user_prompt_submit("hello") is None
    await env.session.stop("completed", 1, "")
    assert env.session.take_context() == "[hook style] Use tabs.\n\n[hook time] Current " \
        "time: noon"


async def test_conditions_choose_the_hooks(tmp_path: Path) -> None:
    env = Env(tmp_path, hooks(shell("only-writes", "PreToolUse", "exit 2", **{"if": {
        "all_of": [{"field": "tool_name", "match": {"type": "exact", "value": "write_file"}}]}})))
    assert (await env.session.pre_tool_use(CALL)).decided is None
    write = ToolCall("c2", "write_file", {"path": "a.json", "content": "{}"})
    assert (await env.session.pre_tool_use(write)).decided is not None


async def test_hooks_of_one_event_run_at_the_same_time(tmp_path: Path) -> None:
    env = Env(tmp_path, hooks(*(shell(f"h{i}", "Stop", "sleep 0.5") for i in range(4))))
    started = time.monotonic()
    await env.session.stop("completed", 1, "")
    assert time.monotonic() - started < 1.6


class Endpoint:
    """An HTTP hook's server: records the bodies it gets and answers ``answer``."""

    def __init__(self, answer: bytes, status: int = 200) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                owner.bodies.append(json.loads(self.rfile.read(length)))
                owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    served = Endpoint(b'{"decision": "block", "reason": "the server says no"}')
    yield served
    served.server.shutdown()


async def test_an_http_hook_gets_the_payload_and_may_block(tmp_path: Path,
                                                           endpoint: Endpoint) -> None:
    env = Env(tmp_path, hooks(
        {"name": "remote", "event": "PreToolUse",
         "action": {"type": "http", "url": endpoint.url, "headers": {"X-Team": "core"}}},
        {"name": "templated", "event": "PreToolUse",
         "action": {"type": "http", "url": endpoint.url,
                    "body": '{"tool": "{{.tool_name}}", "cmd": "{{ .tool_input.command }}"}'}}))
    done = await env.session.pre_tool_use(CALL)
    assert done.decided is not None and done.decided.message() == \
        "[hook remote] the server says no"
    whole = next(b for b in endpoint.bodies if "tool_use_id" in b)
    assert whole["tool_input"] == {"command": "git status"}
    assert {"tool": "run_command", "cmd": "git status"} in endpoint.bodies
    assert any(h.get("x-team") == "core" and h["content-type"] == "application/json"
               for h in endpoint.headers)


async def test_an_http_error_is_a_warning(tmp_path: Path) -> None:
    served = Endpoint(b"nope", status=500)
    try:
        env = Env(tmp_path, hooks({"name": "remote", "event": "PreToolUse",
                                   "action": {"type": "http", "url": served.url}}))
        assert (await env.session.pre_tool_use(CALL)).decided is None
        assert env.warnings == [f"hook remote (PreToolUse) failed: POST {served.url} answered "
                                "500; it did not block"]
    finally:
        served.server.shutdown()


async def test_nothing_runs_for_events_without_hooks(tmp_path: Path) -> None:
    env = Env(tmp_path, [])
    assert (await env.session.pre_tool_use(CALL)).decided is None
    assert os.listdir(tmp_path) == []
