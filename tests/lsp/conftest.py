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
    DIAGNOSTICS,
    EVENT,
    MEMORY_CHANGED,
    SESSIONS_MESSAGES,
)
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.lsp.positions import offset_at
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
        self.permission_settings: dict[str, Any] = {}
        """The ``permissions`` settings (``allowBypass``, rules)."""
        self.sandbox_settings: dict[str, Any] = {"enabled": False}
        """The ``sandbox`` settings: off unless a test turns it on (a sandboxed command cannot
        see a virtual environment under the host's /tmp, and sandboxed commands run unasked:
        the approval tests ask)."""
        self.approve_requests: list[dict[str, Any]] = []  # pseudoclaude/approve params
        self.approve_ids: list[Any] = []  # their request ids
        self.approve_cancelled: list[Any] = []  # the ids of those the server cancelled
        self.approve_answer: Any = {"decision": "allowOnce"}
        """The answer to ``pseudoclaude/approve``: a result, an exception to raise,
        :data:`HOLD`, or a function of the params that returns one of them."""
        self.initialized: Any = None
        self.mcp_json: dict[str, Any] | None = None
        """Written as each folder's ``.mcp.json`` (project MCP servers)."""
        self.mcp_settings: dict[str, Any] = {}
        """The ``mcp`` settings (``servers``, ``startTimeout``, ...)."""
        self.hook_settings: list[dict[str, Any]] = []
        """The ``hooks`` setting (hooks given in the editor's settings)."""
        self.editor: Any = None
        """The documents of a client that plays the editor (:class:`Editor`)."""

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
                "sandbox": dict(self.sandbox_settings),
                **({"permissions": self.permission_settings}
                   if self.permission_settings else {}),
                **({"mcp": self.mcp_settings} if self.mcp_settings else {}),
                **({"hooks": self.hook_settings} if self.hook_settings else {})}

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
                folders: list[str], experimental: dict[str, Any] | None = None,
                adjust: Callable[[types.ClientCapabilities], None] | None = None) -> None:
    """Open the folders and initialize (``experimental``: merged into the client's
    experimental capabilities; ``adjust``: changes the capabilities before they are sent)."""
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
        if callable(answer):
            answer = answer(params)
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
    if adjust is not None:
        adjust(caps)
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


# -- a client that plays the editor (tests/lsp/test_editor.py) ---------------------------------

class Editor:
    """The documents of the client, as an editor keeps them."""

    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.docs: dict[str, list[Any]] = {}  # uri -> [text, version]
        self.edits: list[types.ApplyWorkspaceEditParams] = []
        self.applied: list[list[Any]] = []  # the text edits of each applied one
        self.versions: list[int | None] = []  # the version each named (None: no version)
        self.answer: types.ApplyWorkspaceEditResult | Exception | None = None
        """What applyEdit answers instead of applying (None: apply it)."""
        self.problems: list[dict[str, Any]] = []
        self.diagnostics_asked: list[Any] = []
        self.after_edit: list[dict[str, Any]] | None = None
        """The problems reported once an edit is applied (None: unchanged)."""

    def uri(self, rel: str) -> str:
        return (self.root / rel).as_uri()

    def open(self, rel: str, text: str) -> None:
        self.docs[self.uri(rel)] = [text, 1]
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=self.uri(rel), language_id="plaintext",
                                                 version=1, text=text)))

    def type(self, rel: str, text: str) -> None:
        """The user edits the document (the whole text replaced, one change)."""
        doc = self.docs[self.uri(rel)]
        doc[0], doc[1] = text, doc[1] + 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri(rel),
                                                                version=doc[1]),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))

    def close(self, rel: str) -> None:
        self.docs.pop(self.uri(rel))
        self.client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri(rel))))

    def text(self, rel: str) -> str:
        return str(self.docs[self.uri(rel)][0])

    def apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.edits.append(params)
        if isinstance(self.answer, Exception):
            raise self.answer
        if self.answer is not None:
            return self.answer
        self.versions.append(None)
        if params.edit.document_changes:  # VS Code's snapshot takes documentChanges
            [change] = params.edit.document_changes
            assert isinstance(change, types.TextDocumentEdit)
            uri, edits = change.text_document.uri, list(change.edits)
            self.versions[-1] = change.text_document.version
            assert change.text_document.version == self.docs[uri][1]
        else:
            [(uri, edits)] = (params.edit.changes or {}).items()
        text = self.docs[uri][0]
        self.applied.append(list(edits))
        spans = sorted(((offset_at(text, e.range.start.line, e.range.start.character),
                         offset_at(text, e.range.end.line, e.range.end.character),
                         e.new_text) for e in edits), reverse=True)
        for start, end, new in spans:
            text = text[:start] + new + text[end:]
        rel = Path(str(types.TextDocumentIdentifier(uri=uri).uri)[len(self.root.as_uri()) + 1:])
        self.type(rel.as_posix(), text)
        if self.after_edit is not None:
            self.problems = self.after_edit
        return types.ApplyWorkspaceEditResult(applied=True)


async def begin(lsp_client: LanguageClient, env: Env, name: str, *, apply_edit: bool = True,
                diagnostics: bool = False, approvals: bool = False,
                through_link: bool = False) -> Editor:
    """``through_link``: the workspace folder is ``ws``, a symbolic link to ``ws-real`` (the
    client knows the folder and its documents by the link's path)."""
    experimental: dict[str, Any] = {}
    if diagnostics or approvals:
        experimental = {"pseudoclaude": {"diagnostics": diagnostics, "approvals": approvals}}

    def adjust(caps: types.ClientCapabilities) -> None:
        assert caps.workspace is not None
        caps.workspace.apply_edit = apply_edit

    if approvals:
        env.approval_settings = {"runCommand": "ask", "write": "ask"}
    folders = ["ws"]
    if through_link:
        real = env.folder("ws-real")
        link = env.tmp / "ws"
        link.symlink_to(real, target_is_directory=True)
        env.folders[:] = [link]
        folders = []
    await start(lsp_client, env, name, folders, experimental=experimental or None,
                adjust=adjust)
    editor = env.editor = Editor(lsp_client, env.folders[0])

    @lsp_client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        return editor.apply(params)

    @lsp_client.feature(DIAGNOSTICS)
    def on_diagnostics(params: Any) -> Any:
        editor.diagnostics_asked.append(params)
        wanted = params.get("paths")
        return {"diagnostics": [d for d in editor.problems
                                if wanted is None or d["path"] in wanted]}

    return editor


@pytest_lsp.fixture(params=CLIENTS, config=ClientServerConfig(
    server_command=SERVER, server_env=SERVER_ENV, client_factory=make_client))
async def editing(request: Any, lsp_client: LanguageClient, fake: FakeModelServer,
                  env: Env) -> AsyncIterator[LanguageClient]:
    """A client that plays the editor (``env.editor``): it takes ``applyEdit``."""
    await begin(lsp_client, env, request.param)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(params=CLIENTS, config=ClientServerConfig(
    server_command=SERVER, server_env=SERVER_ENV, client_factory=make_client))
async def linked_editing(request: Any, lsp_client: LanguageClient, fake: FakeModelServer,
                         env: Env) -> AsyncIterator[LanguageClient]:
    """As ``editing``, on a workspace folder that is a symbolic link (``begin``)."""
    await begin(lsp_client, env, request.param, through_link=True)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(params=CLIENTS[:1], config=ClientServerConfig(
    server_command=SERVER, server_env=SERVER_ENV, client_factory=make_client))
async def no_apply(request: Any, lsp_client: LanguageClient, fake: FakeModelServer,
                   env: Env) -> AsyncIterator[LanguageClient]:
    """As ``editing``, without ``workspace.applyEdit``."""
    await begin(lsp_client, env, request.param, apply_edit=False)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(params=CLIENTS, config=ClientServerConfig(
    server_command=SERVER, server_env=SERVER_ENV, client_factory=make_client))
async def diagnosing(request: Any, lsp_client: LanguageClient, fake: FakeModelServer,
                     env: Env) -> AsyncIterator[LanguageClient]:
    """As ``editing``, answering ``pseudoclaude/diagnostics`` from ``env.editor.problems``."""
    await begin(lsp_client, env, request.param, diagnostics=True)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(params=CLIENTS[:1], config=ClientServerConfig(
    server_command=SERVER, server_env=SERVER_ENV, client_factory=make_client))
async def approving_editor(request: Any, lsp_client: LanguageClient, fake: FakeModelServer,
                           env: Env) -> AsyncIterator[LanguageClient]:
    """As ``editing``, with approvals asked (``pseudoclaude/approve``) for writes."""
    await begin(lsp_client, env, request.param, approvals=True)
    yield lsp_client
    await lsp_client.shutdown_session()
