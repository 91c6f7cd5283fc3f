"""A real server over stdio (pytest-lsp), parametrised over VS Code's and Neovim's client
capabilities, against the fake model over loopback."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from lsprotocol.converters import get_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from pseudoclaude.api.protocol import (
    APPROVE,
    CONTEXT_USAGE,
    EVENT,
    MEMORY_CHANGED,
    SESSIONS_MESSAGES,
)
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.session import SessionStore, load_session
from pseudoclaude.session.format import message_to_json
from support import server_env, until

HOME = tempfile.mkdtemp(prefix="pseudoclaude-lsp-home-")
SERVER_ENV = server_env(HOME)
SERVER = [sys.executable, "-m", "pseudoclaude", "lsp"]
MEMORY_REPLY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}
CLIENTS = ["visual-studio-code", "neovim"]
HOLD = "hold"
"""``env.approve_answer`` that keeps a ``pseudoclaude/approve`` request pending (until it is
cancelled)."""
APPROVALS_CAPABILITY = {"pseudoclaude": {"approvals": True}}


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=get_converter)  # results stay plain dicts
    register_lsp_features(client)
    return client


class Env:
    """What a test needs besides the client: folders, the fake model, notifications, and the
    small helpers every test module uses (``env.call``, ``env.until``, ``env.read_file``: a
    fixture, because conftest is not importable under ``--import-mode=importlib``)."""

    def __init__(self, tmp_path: Path, fake: FakeModelServer) -> None:
        self.tmp = tmp_path
        self.fake = fake
        self.folders: list[Path] = []
        self.events: list[dict[str, Any]] = []
        self.context_usage: list[dict[str, Any]] = []
        self.memory_changed: list[dict[str, Any]] = []
        self.approvals: list[Any] = []
        self.approval_answer: str | None = "Allow once"
        self.approval_settings: dict[str, str] = {"runCommand": "ask"}
        self.approve_requests: list[dict[str, Any]] = []  # pseudoclaude/approve params
        self.approve_ids: list[Any] = []  # their request ids
        self.approve_cancelled: list[Any] = []  # the ids of those the server cancelled
        self.approve_answer: Any = {"decision": "allowOnce"}
        """The answer to ``pseudoclaude/approve``: a result, an exception to raise, or
        :data:`HOLD`."""
        self.initialized: Any = None
        self.mcp_json: dict[str, Any] | None = None
        """Written as each folder's ``.mcp.json`` (project MCP servers)."""
        self.mcp_settings: dict[str, Any] = {}
        """The ``mcp`` settings (``servers``, ``startTimeout``, ...)."""

    def folder(self, name: str) -> Path:
        path = self.tmp / name
        path.mkdir(exist_ok=True)
        (path / "README.md").write_text(f"# {name}\nA small sample project.\n")
        (path / "notes.txt").write_text("alpha\nbeta\n")
        if self.mcp_json is not None:
            (path / ".mcp.json").write_text(json.dumps(self.mcp_json))
        self.folders.append(path)
        return path

    def options(self) -> dict[str, Any]:
        return {"provider": "anthropic", "apiKey": "sk-test-lsp-0123456789",
                "baseUrl": self.fake.base_url, "maxRetries": 0,
                "memory": {"userDir": str(self.tmp / "user-memory")},
                "approvals": dict(self.approval_settings),
                **({"mcp": self.mcp_settings} if self.mcp_settings else {})}

    async def second_server(self, capabilities: str = "visual-studio-code",
                            handlers: dict[str, Callable[[Any], None]] | None = None
                            ) -> LanguageClient:
        """Another server process on the same folders and settings, as after a restart (the
        caller shuts it down); ``handlers`` receive its notifications from the start."""
        client = make_client()
        for method, handler in (handlers or {}).items():
            client.feature(method)(lambda params, h=handler: h(params))  # pygls tags it
        environment = dict(SERVER_ENV, HOME=str(self.tmp / "home-after-restart"))
        await client.start_io(*SERVER, env=environment)
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities(capabilities),
            workspace_folders=[types.WorkspaceFolder(uri=p.as_uri(), name=p.name)
                               for p in self.folders],
            initialization_options=self.options()))
        return client

    @staticmethod
    async def call(client: LanguageClient, method: str, params: Any = None) -> Any:
        """A request to the server, answered within a minute."""
        return await asyncio.wait_for(client.protocol.send_request_async(method, params), 60)

    def log_messages(self, session_id: str = "latest", folder: int = 0) -> list[dict[str, Any]]:
        """The messages of a session as its log on disk replays (v1 shape): what the model
        sees, for tests that look inside tool envelopes."""
        store = SessionStore(self.folders[folder] / ".PseudoClaude")
        return [message_to_json(m) for m in load_session(store, session_id).messages]

    def envelopes(self, session_id: str = "latest", folder: int = 0) -> list[dict[str, Any]]:
        """The tool result envelopes of a session, in order."""
        return [json.loads(m["tool_result"]["content"])
                for m in self.log_messages(session_id, folder) if m.get("tool_result")]

    @staticmethod
    async def items(client: LanguageClient, params: dict[str, Any] | None = None
                    ) -> list[dict[str, Any]]:
        """The transcript items of ``pseudoclaude/sessions/messages``."""
        result = await Env.call(client, SESSIONS_MESSAGES, params or {})
        return list(result["items"])

    @staticmethod
    def read_file(path: str) -> dict[str, Any]:
        """A ``read_file`` tool call, for the fake model's turns."""
        return {"name": "read_file", "arguments": {"path": path}}

    until = staticmethod(until)


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer({"rules": [MEMORY_REPLY]}) as server:
        yield server


async def start(lsp_client: LanguageClient, env: Env, capabilities: str,
                folders: list[str], experimental: dict[str, Any] | None = None) -> None:
    for name in folders:
        env.folder(name)

    @lsp_client.feature(EVENT)
    def on_event(params: Any) -> None:
        env.events.append(params)

    @lsp_client.feature(CONTEXT_USAGE)
    def on_usage(params: Any) -> None:
        env.context_usage.append(params)

    @lsp_client.feature(MEMORY_CHANGED)
    def on_memory(params: Any) -> None:
        env.memory_changed.append(params)

    @lsp_client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_approval(params: types.ShowMessageRequestParams) -> Any:
        env.approvals.append(params)
        if env.approval_answer is None:
            return None
        return types.MessageActionItem(title=env.approval_answer)

    @lsp_client.feature(APPROVE)
    async def on_approve(params: Any) -> Any:
        msg_id = lsp_client.protocol.msg_id
        env.approve_requests.append(params)
        env.approve_ids.append(msg_id)
        answer = env.approve_answer
        if answer == HOLD:
            try:
                await asyncio.sleep(120)
            except asyncio.CancelledError:  # the server sent $/cancelRequest for it
                env.approve_cancelled.append(msg_id)
                raise
        if isinstance(answer, Exception):
            raise answer
        return answer

    caps = client_capabilities(capabilities)
    if experimental is not None:
        caps.experimental = {**(caps.experimental or {}), **experimental}
    env.initialized = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=caps,
        workspace_folders=[types.WorkspaceFolder(uri=p.as_uri(), name=p.name)
                           for p in env.folders],
        initialization_options=env.options(),
    ))


@pytest_lsp.fixture(params=CLIENTS, config=ClientServerConfig(
    server_command=SERVER, server_env=SERVER_ENV, client_factory=make_client))
async def client(request: Any, lsp_client: LanguageClient, tmp_path: Path,
                 fake: FakeModelServer, env: Env) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, env, request.param, ["ws"])
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(params=CLIENTS[:1], config=ClientServerConfig(
    server_command=SERVER, server_env=SERVER_ENV, client_factory=make_client))
async def two_folders(request: Any, lsp_client: LanguageClient, tmp_path: Path,
                      fake: FakeModelServer, env: Env) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, env, request.param, ["one", "two"])
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(params=CLIENTS, config=ClientServerConfig(
    server_command=SERVER, server_env=SERVER_ENV, client_factory=make_client))
async def approving(request: Any, lsp_client: LanguageClient, tmp_path: Path,
                    fake: FakeModelServer, env: Env) -> AsyncIterator[LanguageClient]:
    """A client that sets ``experimental.pseudoclaude.approvals`` (it answers
    ``pseudoclaude/approve`` with ``env.approve_answer``); writes and commands ask."""
    env.approval_settings = {"runCommand": "ask", "write": "ask"}
    await start(lsp_client, env, request.param, ["ws"], experimental=APPROVALS_CAPABILITY)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(params=CLIENTS[:1], config=ClientServerConfig(
    server_command=SERVER, server_env=SERVER_ENV, client_factory=make_client))
async def not_approving(request: Any, lsp_client: LanguageClient, tmp_path: Path,
                        fake: FakeModelServer, env: Env) -> AsyncIterator[LanguageClient]:
    """A client without the approvals capability; writes and commands ask."""
    env.approval_settings = {"runCommand": "ask", "write": "ask"}
    await start(lsp_client, env, request.param, ["ws"])
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.fixture
def env(tmp_path: Path, fake: FakeModelServer) -> Env:
    return Env(tmp_path, fake)
