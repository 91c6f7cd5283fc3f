"""Secrets (issue 9, SPEC §3 and §7): the API key never lands in a file or a message, and the
session and memory files are private.

With a key set (``ANTHROPIC_API_KEY`` for ``pseudoclaude run``, ``apiKey`` in
``initializationOptions`` for the LSP server), the fake model as the provider, and runs with
tool calls (a command included), a Layer-1 spill, an automatic and a manual compaction, a
memory update, and a run whose provider answers 401 with the key echoed back: no file under
the workspace, the data folder, the user memory folder or ``HOME`` contains the key; neither
does anything the LSP client received (results, notifications, ``window/logMessage``,
approvals, progress) nor the server's stderr (at debug level). Both processes run with umask
000, so the 0600/0700 modes are the server's own doing.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import stat
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from lsprotocol.converters import get_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from pseudoclaude.fake_model import FakeModelServer
from support import is_summary_request, server_env

CLI_KEY = "sk-ant-api03-cliSECRETkey-5f2a9e0c7b1d4e3f"
LSP_KEY = "sk-ant-api03-lspSECRETkey-9a8b7c6d5e4f3a2b"
MEMORY_SYSTEM = "long-term memory"
NOTE = {"action": "create", "level": "project", "type": "project_knowledge",
        "title": "Build steps", "summary": "how to build",
        "content": "Run `make build`; tests with `make test`."}
USER_NOTE = {"action": "create", "level": "user", "type": "user_preference",
             "title": "Style", "summary": "short answers", "content": "Prefers short answers."}


def read(path: str) -> dict[str, Any]:
    return {"name": "read_file", "arguments": {"path": path}}


def rules() -> list[dict[str, Any]]:
    return [
        {"when": {"summary": True},
         "reply": {"text": "<analysis>a</analysis><summary>The user asked to read the big "
                           "files; they were read.</summary>"}},
        {"when": {"has_tools": False, "system_contains": MEMORY_SYSTEM},
         "reply": {"text": json.dumps([NOTE, USER_NOTE])}},
    ]


def work_turns(command: dict[str, Any]) -> list[dict[str, Any]]:
    """One run: a spill (80 KB read), a write, a command, enough reads to pass the
    threshold of a 30,000-token window (automatic compaction), then an answer."""
    return [
        {"tool_calls": [read("big.txt")]},
        {"tool_calls": [{"name": "write_file",
                         "arguments": {"path": "notes.md", "content": "# Notes\n"}}]},
        {"tool_calls": [{"name": "run_command", "arguments": command}]},
        *({"tool_calls": [read(f"part{i}.txt")]} for i in range(5)),
        {"text": "All done."},
    ]


def auth_failure(key: str) -> dict[str, Any]:
    return {"error": {"status": 401, "type": "authentication_error",
                      "message": f"invalid x-api-key: {key} (Authorization: Bearer {key})"}}


def make_workspace(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "big.txt").write_text("a line of the big file\n" * 3_600)  # ~80 KB: spilled
    for i in range(5):
        (root / f"part{i}.txt").write_text(f"part {i} line\n" * 1_200)  # ~16 KB each


def leaks(key: str, *roots: Path) -> list[Path]:
    found = []
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink() and key.encode() in path.read_bytes():
                found.append(path)
    return found


def check_private(data_dir: Path, *memory_dirs: Path) -> int:
    """Session folders/files and memory folders/files are 0700/0600; returns how many were
    checked."""
    checked = 0
    to_check: list[Path] = [data_dir, *memory_dirs]
    if (data_dir / ".gitignore").exists():  # see test_the_data_folder_always_gets_its_gitignore
        to_check.append(data_dir / ".gitignore")
    to_check += [data_dir / "sessions", *(data_dir / "sessions").rglob("*")]
    for memory in memory_dirs:
        to_check += list(memory.iterdir())
    for path in to_check:
        mode = stat.S_IMODE(path.lstat().st_mode)
        want = 0o700 if path.is_dir() else 0o600
        assert mode == want, f"{path} is {oct(mode)}, expected {oct(want)}"
        checked += 1
    return checked


# -- the CLI: the key from the environment ---------------------------------------------------

def cli_run(root: Path, home: Path, fake: FakeModelServer, *args: str,
            key: str = CLI_KEY) -> subprocess.CompletedProcess[str]:
    env = server_env(home) | {"ANTHROPIC_API_KEY": key}
    command = [sys.executable, "-m", "pseudoclaude", "run", "--workspace", str(root),
               "--base-url", fake.base_url, "--context-window", "30000", *args]
    return subprocess.run(["sh", "-c", 'umask 000 && exec "$@"', "sh", *command],
                          capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture
def cli_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".PseudoClaude").mkdir(parents=True)
    (home / ".PseudoClaude" / "config.yaml").write_text(
        "approvals:\n  runCommand: allow\nmaxRetries: 0\nsandbox:\n  enabled: false\n")
    return home


def test_cli_run_never_writes_or_prints_the_key(tmp_path: Path, cli_home: Path) -> None:
    root = tmp_path / "ws"
    make_workspace(root)
    turns = [*work_turns({"command": "env"}), auth_failure(CLI_KEY)]
    with FakeModelServer({"rules": rules(), "turns": turns}) as fake:
        ok = cli_run(root, cli_home, fake, "--json", "read the big files and build")
        assert ok.returncode == 0, ok.stderr[-2000:]
        failed = cli_run(root, cli_home, fake, "this one fails")
        requests = fake.requests
    assert failed.returncode == 1
    last = [line for line in failed.stderr.splitlines() if line.startswith("pseudoclaude:")
            or line.startswith("error:")]
    assert last and "401" in last[-1] and "[redacted]" in last[-1]
    events = [json.loads(line) for line in ok.stdout.splitlines()]
    kinds = {e["kind"] for e in events}
    assert {"toolCall", "toolResult", "compact", "memory", "result"} <= kinds, kinds
    assert any(e["kind"] == "compact" and e["layer"] == 1 for e in events)  # the spill
    assert any(e["kind"] == "compact" and e["layer"] == 2 for e in events)  # the summary
    assert [e["status"] for e in events if e["kind"] == "memory"] == ["updated"]
    command = next(e for e in events if e["kind"] == "toolResult"
                   and e["name"] == "run_command")
    assert not command["isError"]
    assert any(is_summary_request(r) for r in requests)

    for text in (ok.stdout, ok.stderr, failed.stdout, failed.stderr):
        assert CLI_KEY not in text
    assert CLI_KEY not in json.dumps(requests)  # bodies: the key travels only in a header
    data_dir = root / ".PseudoClaude"
    user_memory = cli_home / ".PseudoClaude" / "memory"
    assert (user_memory / "MEMORY.md").is_file() and (data_dir / "memory" / "MEMORY.md").is_file()
    assert leaks(CLI_KEY, root, data_dir, user_memory, cli_home, tmp_path) == []
    spills = list((data_dir / "sessions").glob("*/tool-results/*.txt"))
    assert spills, "a result was spilled"
    assert "sessions/" in (data_dir / ".gitignore").read_text()
    assert check_private(data_dir, data_dir / "memory", user_memory) >= 10


def test_a_command_cannot_read_the_key_from_the_server_environment(tmp_path: Path,
                                                                    cli_home: Path) -> None:
    """``env`` in a command does not show the key (the child's environment is scrubbed), but
    the server's own environment is readable by its children at ``/proc/$PPID/environ``:
    whatever a command prints must not carry the key into the session log, the events or
    the next request."""
    root = tmp_path / "ws"
    make_workspace(root)
    script = "tr '\\0' '\\n' < /proc/$PPID/environ | grep -i api_key; echo done"
    turns = [{"tool_calls": [{"name": "run_command",
                              "arguments": {"command": "sh", "args": ["-c", script]}}]},
             {"text": "ok"}]
    with FakeModelServer({"rules": rules(), "turns": turns}) as fake:
        ran = cli_run(root, cli_home, fake, "--json", "look around")
        requests = json.dumps(fake.requests)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert CLI_KEY not in ran.stdout, "the key reached the events"
    assert CLI_KEY not in requests, "the key was sent back to the model"
    assert leaks(CLI_KEY, root) == [], "the key reached the session log"


def test_the_data_folder_always_gets_its_gitignore(tmp_path: Path, allow: Any) -> None:
    """SPEC §3: the server writes ``<dataDir>/.gitignore`` (ignoring ``sessions/``) when it
    creates the folder, so session logs stay out of git. The LSP server starts the memory
    watcher first (``PseudoClaudeServer.workspace_for``), which creates ``<dataDir>/memory``
    and with it ``<dataDir>``; the session store then finds the folder there and writes no
    ``.gitignore``."""
    from pseudoclaude.config import load_settings
    from pseudoclaude.workspace import Workspace

    root = tmp_path / "ws"
    root.mkdir()
    with FakeModelServer({"turns": [{"text": "hi"}]}) as fake:
        settings = load_settings(root, {
            "provider": "anthropic", "apiKey": "sk-gitignore-0123456789",
            "baseUrl": fake.base_url, "memory.enabled": False,
            "memory.userDir": str(tmp_path / "user-memory")}, home=tmp_path / "home", env={})
        ws = Workspace(root, settings, approver=allow)

        async def as_the_server_does() -> None:
            try:
                ws.memory.start_watching()  # what workspace_for does before any request
                await asyncio.wait_for(ws.run("hello"), 60)
            finally:
                await ws.close()

        asyncio.run(as_the_server_does())
    assert (root / ".PseudoClaude" / "sessions").is_dir()
    gitignore = root / ".PseudoClaude" / ".gitignore"
    assert gitignore.is_file(), "session logs would be committed"
    assert "sessions/" in gitignore.read_text()


# -- the LSP server: the key from initializationOptions -------------------------------------

LSP_HOME = Path(tempfile.mkdtemp(prefix="pseudoclaude-secrets-home-"))
SERVER_ENV = server_env(LSP_HOME) | {"PSEUDOCLAUDE_LOG": "debug"}
SERVER_STDERR = LSP_HOME / "server-stderr.log"
"""The server's stderr, to a file: at debug level it logs every request body, more than a pipe
holds, and a pipe nobody drains would block the server's writes (and its event loop)."""
SERVER = ["sh", "-c", f"umask 000 && exec {shlex.quote(sys.executable)} -m pseudoclaude lsp "
          f"2>>{shlex.quote(str(SERVER_STDERR))}"]


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=get_converter)
    register_lsp_features(client)
    return client


class Seen:
    """Everything the client received, as JSON text."""

    def __init__(self, root: Path, fake: FakeModelServer) -> None:
        self.root = root
        self.fake = fake
        self.notifications: list[tuple[str, Any]] = []
        self.requests_from_server: list[Any] = []
        self.results: list[Any] = []
        self.shut_down = False

    def dump(self, client: LanguageClient) -> str:
        conv = get_converter()
        parts = [json.dumps(self.notifications), json.dumps(self.results),
                 json.dumps(conv.unstructure(self.requests_from_server)),
                 json.dumps(conv.unstructure(client.log_messages)),
                 json.dumps(conv.unstructure(client.messages)),
                 json.dumps(conv.unstructure(client.progress_reports), default=str)]
        return "\n".join(parts)


@pytest.fixture
def lsp_fake() -> Iterator[FakeModelServer]:
    with FakeModelServer({"rules": rules()}) as server:
        yield server


@pytest.fixture
def seen(tmp_path: Path, lsp_fake: FakeModelServer) -> Seen:
    return Seen(tmp_path / "ws", lsp_fake)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=SERVER_ENV,
                                              client_factory=make_client))
async def lsp(lsp_client: LanguageClient, seen: Seen, tmp_path: Path
              ) -> AsyncIterator[LanguageClient]:
    make_workspace(seen.root)
    for method in ("pseudoclaude/event", "pseudoclaude/contextUsage",
                   "pseudoclaude/memoryChanged"):
        def record(params: Any, method: str = method) -> None:
            seen.notifications.append((method, params))
        lsp_client.feature(method)(record)

    @lsp_client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_approval(params: types.ShowMessageRequestParams) -> Any:
        seen.requests_from_server.append(params)
        return types.MessageActionItem(title="Allow once")

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        workspace_folders=[types.WorkspaceFolder(uri=seen.root.as_uri(), name="ws")],
        initialization_options={
            "provider": "anthropic", "apiKey": LSP_KEY, "baseUrl": seen.fake.base_url,
            "maxRetries": 0, "contextWindow": 30_000,
            "memory": {"userDir": str(tmp_path / "user-memory")},
            "approvals": {"runCommand": "ask"},
            "sandbox": {"enabled": False}}))  # sandboxed commands would run unasked
    yield lsp_client
    if not seen.shut_down:
        await lsp_client.shutdown_session()


async def test_lsp_server_never_sends_or_writes_the_key(
        lsp: LanguageClient, seen: Seen, tmp_path: Path,
        capfd: pytest.CaptureFixture[str], call: Any, until: Any) -> None:
    fake = seen.fake
    fake.add_turns(*work_turns({"command": "env"}))
    events = lambda: [p for m, p in seen.notifications if m == "pseudoclaude/event"]  # noqa: E731
    first = await call(lsp, "pseudoclaude/run", {"prompt": "read the big files and build"})
    seen.results.append(first)
    assert first["stopReason"] == "completed", first
    await until(lambda: any(e["kind"] == "memory" for e in events()))
    assert [e["status"] for e in events() if e["kind"] == "memory"] == ["updated"]
    assert seen.requests_from_server, "the command was approved through the editor"
    layers = {e["layer"] for e in events() if e["kind"] == "compact"}
    assert layers == {1, 2}, layers

    for method, params in [
        ("pseudoclaude/memory/remember", {"text": "Deploys go through CI.", "level": "project"}),
        ("pseudoclaude/memory/show", {}), ("pseudoclaude/context", {}),
        ("pseudoclaude/sessions/list", {}), ("pseudoclaude/sessions/messages", {}),
        ("pseudoclaude/compact", {"instructions": "keep it short"}),
    ]:
        seen.results.append(await call(lsp, method, params))

    fake.add_turns(auth_failure(LSP_KEY))
    failed = await call(lsp, "pseudoclaude/run", {"prompt": "this one fails"})
    seen.results.append(failed)
    assert failed["stopReason"] == "error" and "401" in failed["error"]
    assert "[redacted]" in failed["error"]
    await until(lambda: any(e["kind"] == "stop" and e["stopReason"] == "error"
                            for e in events()))
    seen.shut_down = True
    await lsp.shutdown_session()  # drains memory, closes the logs, exits
    received = seen.dump(lsp)
    assert "toolResult" in received and lsp.log_messages
    assert LSP_KEY not in received
    stderr = capfd.readouterr().err + SERVER_STDERR.read_text(errors="replace")
    assert "DEBUG" in stderr or "debug" in stderr  # the server logged at debug level
    assert LSP_KEY not in stderr
    assert LSP_KEY not in json.dumps(fake.requests)

    data_dir = seen.root / ".PseudoClaude"
    user_memory = tmp_path / "user-memory"
    assert leaks(LSP_KEY, tmp_path, LSP_HOME) == []
    assert check_private(data_dir, data_dir / "memory", user_memory) >= 10
