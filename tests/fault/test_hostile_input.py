"""Hostile input (issue 9): fuzzed request params, corrupt session logs, hand-broken memory
files and tool arguments that try to leave the workspace.

(a) Property-based fuzzing (hypothesis) of every custom request and command through a real
    pytest-lsp client against ONE server for the whole module: every request gets a result or
    ``InvalidParams`` / ``RequestFailed`` (never an internal error, never a hang), and the
    server answers ``pseudoclaude/context`` after every example.
(b) A corrupt-session corpus: torn logs, binary junk, a 100 MiB line, wrong types in every
    field of every entry type, Go and v1 lines mixed, replaces with garbage messages:
    ``load_session`` never raises, counts the bad lines and returns a protocol-valid history;
    the same folder through ``sessions/list`` and ``sessions/resume``.
(c) Hand-broken memory files (bad front matter, binary, a 10 MB ``MEMORY.md``, a note that is
    a directory) through ``memory/show``, ``remember``, ``forget``, a memory update and the
    watcher.
(d) Tool calls from the model that try to escape the workspace, through the real runner: all
    refused (``error_type`` set) and nothing outside is read or written.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest
import pytest_lsp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from pseudoclaude.agent.approvals import Approver
from pseudoclaude.api.protocol import REQUESTS
from pseudoclaude.config import load_settings
from pseudoclaude.events import Event, ToolResultEvent
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.types import Message, ThinkingBlock, ToolCall, ToolResult
from pseudoclaude.session import (
    SessionNotFound,
    SessionStore,
    list_sessions,
    load_session,
    resume_session,
    session_info,
)
from pseudoclaude.session.codec import (
    BadLine,
    Entry,
    MessageEntry,
    ReplaceEntry,
    decode,
    encode,
)
from pseudoclaude.session.repair import is_valid
from pseudoclaude.workspace import Hooks, Workspace, WorkspaceError
from support import server_env

HOME = tempfile.mkdtemp(prefix="pseudoclaude-hostile-home-")
SERVER_ENV = server_env(HOME)
SERVER = [sys.executable, "-m", "pseudoclaude", "lsp"]
INVALID_PARAMS, REQUEST_FAILED, SESSION_BUSY = -32602, -32803, -32011
ANSWER_TIMEOUT = 60.0
MEMORY_SYSTEM = "long-term memory"
BROKEN_RUN = "BROKEN-MEMORY-RUN"
MiB = 1024 * 1024


# -- helpers ----------------------------------------------------------------------------------

def sane_message(m: Any) -> bool:
    """A message as the data model defines it (SPEC §2): right types, and a tool result is a
    user message while tool calls belong to assistant messages."""
    if not isinstance(m, Message) or m.role not in ("user", "assistant"):
        return False
    if not isinstance(m.content, str):
        return False
    for call in m.tool_calls:
        if not (isinstance(call, ToolCall) and isinstance(call.id, str)
                and isinstance(call.name, str)):
            return False
    r = m.tool_result
    if r is not None and not (isinstance(r, ToolResult) and isinstance(r.call_id, str)
                              and isinstance(r.name, str) and isinstance(r.content, str)
                              and isinstance(r.is_error, bool)):
        return False
    if not all(isinstance(t, ThinkingBlock) and isinstance(t.thinking, str)
               and isinstance(t.signature, str) and isinstance(t.data, str)
               for t in m.thinking):
        return False
    msgspec.json.encode(m)  # always serialisable
    return True


def protocol_valid(messages: list[Message]) -> bool:
    """What a provider accepts: sane messages, every call answered right after it, every
    result after its call, results on user messages, calls on assistant messages."""
    return (all(sane_message(m) for m in messages) and is_valid(messages)
            and all(m.role == "user" for m in messages if m.tool_result is not None)
            and all(m.role == "assistant" for m in messages if m.tool_calls))


def line(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode() + b"\n"


def write_session(store: SessionStore, session_id: str, data: bytes) -> Path:
    path = store.log_path(session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


# -- (b) the corpus -----------------------------------------------------------------------------

TEMPLATES: dict[str, dict[str, Any]] = {
    "session": {"type": "session", "version": 1, "id": "20250301-101010-abcd",
                "created": "2025-03-01T10:10:10+00:00", "workspace": "/w"},
    "user": {"type": "message", "role": "user", "content": "hello", "ts": 1.0, "model": "m"},
    "call": {"type": "message", "role": "assistant", "content": "calling",
             "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "a"}}],
             "thinking": [{"thinking": "t", "signature": "s"}], "ts": 2.0},
    "result": {"type": "message", "role": "user",
               "tool_result": {"call_id": "c1", "name": "read_file", "content": "x",
                               "is_error": False}, "ts": 3.0},
    "offload": {"type": "offload", "call_id": "c1", "path": "tool-results/c1.txt", "bytes": 1,
                "preview": "p", "ts": 4.0},
    "keep": {"type": "keep", "call_ids": ["c1"], "ts": 5.0},
    "replace": {"type": "replace", "reason": "compact", "ts": 6.0,
                "messages": [{"role": "user", "content": "s"},
                             {"role": "assistant", "content": "ok"}]},
}
WRONG: list[Any] = [None, 7, -1, 1.5, True, False, "", "str", [], [1, "x"], {}, {"k": None},
                    "\u0000", "\udcff", 2**64, -(2**63) - 1, [[[[]]]]]
GO_LINES = [  # the Go original: capitalised nested keys, a replace marker then its lines
    {"type": "message", "role": "user", "content": "go question", "ts": 1750150000},
    {"type": "message", "role": "assistant", "tool_calls": [
        {"ID": "toolu_1", "Name": "read_file", "Arguments": {"path": "go.mod"}}],
     "ts": 1750150001},
    {"type": "message", "role": "user", "tool_result": {
        "CallID": "toolu_1", "Name": "read_file", "Content": "module x", "IsError": False},
     "ts": 1750150002},
    {"type": "replace", "reason": "snapshot", "ts": 1750150003},
]


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from paths_of(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield (*prefix, i)
            yield from paths_of(item, (*prefix, i))


def with_value(template: Any, path: tuple[Any, ...], value: Any, delete: bool = False) -> Any:
    copy = json.loads(json.dumps(template))
    target = copy
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return copy


def wrong_lines(kind: str) -> list[bytes]:
    """Every field of one entry type replaced by every wrong value, or deleted.

    Two families are left to their own tests: out-of-range timestamps and a role that is
    valid but contradicts the message's fields (see the tests named after them)."""
    template = TEMPLATES[kind]
    out: list[bytes] = []
    for path in paths_of(template):
        if path == ("type",):
            continue
        for value in WRONG:
            if path[-1] == "ts" and isinstance(value, int | float) and abs(value) > 1e9:
                continue
            out.append(json.dumps(with_value(template, path, value)).encode() + b"\n")
        out.append(json.dumps(with_value(template, path, None, delete=True)).encode() + b"\n")
    return out


def base_log() -> bytes:
    """A healthy v1 log: header, a tool round with an offload and a keep, a replace, more."""
    entries = [TEMPLATES["session"], TEMPLATES["user"], TEMPLATES["call"], TEMPLATES["result"],
               TEMPLATES["offload"], TEMPLATES["keep"],
               {"type": "message", "role": "assistant", "content": "answer ✓ 完成", "ts": 5.5},
               TEMPLATES["replace"],
               {"type": "message", "role": "user", "content": "after the replace", "ts": 7.0},
               {"type": "message", "role": "assistant", "content": "fine", "ts": 8.0}]
    return b"".join(line(e) for e in entries)


END = {"type": "message", "role": "user", "content": "the end", "ts": 9.0}


@dataclass
class Corpus:
    store: SessionStore
    expected: dict[str, dict[str, Any]] = field(default_factory=dict)
    """session id -> what load_session must say: ``bad_lines`` (exact), ``min_bad``,
    ``messages`` (exact history), ``last`` (content of the last message)."""
    not_files: list[str] = field(default_factory=list)
    big: Path | None = None  # the 100 MiB log, removed after use (pytest keeps tmp dirs)

    def remove_big(self) -> None:
        if self.big is not None:
            self.big.unlink(missing_ok=True)


def build_corpus(data_dir: Path, seed: int = 20250301) -> Corpus:
    rng = random.Random(seed)
    corpus = Corpus(SessionStore(data_dir))
    store = corpus.store
    ids = (f"20250301-{n // 60:02d}{n % 60:02d}00-{n:04x}" for n in range(1, 10_000))
    healthy = base_log()

    for _ in range(12):  # torn at a random byte
        cut = rng.randrange(1, len(healthy) - 1)
        sid = next(ids)
        write_session(store, sid, healthy[:cut])
        corpus.expected[sid] = {"max_bad": 1}

    junk = bytearray(rng.randbytes(64 * 1024))
    for i in range(0, len(junk), 997):
        junk[i] = 0x0A
    sid = next(ids)
    write_session(store, sid, line(TEMPLATES["user"]) + bytes(junk) + b"\n" + line(END))
    corpus.expected[sid] = {"min_bad": 1, "last": "the end"}

    sid = next(ids)  # a 100 MiB line between two good ones
    path = write_session(store, sid, line(TEMPLATES["user"]))
    with open(path, "ab") as f:
        f.write(b'{"type":"message","role":"user","content":"')
        chunk = b"y" * MiB
        for _ in range(100):
            f.write(chunk)
        f.write(b'"}\n')
        f.write(line(END))
    corpus.big = path
    corpus.expected[sid] = {"bad_lines": 1, "messages": [
        Message(role="user", content="hello"), Message(role="user", content="the end")]}

    for kind in TEMPLATES:  # wrong types in every field of every entry type
        sid = next(ids)
        write_session(store, sid, healthy + b"".join(wrong_lines(kind)) + line(END))
        corpus.expected[sid] = {"min_bad": 1, "last": "the end"}
        if kind == "replace":
            # A replace whose `messages` was deleted is a valid Go-original marker, and fast
            # resume starts at the last one (however it is spelled): the bad lines before it
            # are not replayed, so none is counted (bad_lines counts the replayed part).
            corpus.expected[sid] = {"bad_lines": 0, "last": "the end"}

    sid = next(ids)  # Go and v1 lines mixed
    mixed = [TEMPLATES["session"], *GO_LINES[:3], TEMPLATES["user"], GO_LINES[3],
             GO_LINES[0], GO_LINES[1], GO_LINES[2],
             {"type": "message", "role": "assistant", "content": "v1 after go", "ts": 1750150009}]
    write_session(store, sid, b"".join(line(e) for e in mixed))
    corpus.expected[sid] = {"bad_lines": 0, "messages": [
        Message(role="user", content="go question"),
        Message(role="assistant", tool_calls=[ToolCall("toolu_1", "read_file",
                                                        {"path": "go.mod"})]),
        Message(role="user", tool_result=ToolResult("toolu_1", "read_file", "module x")),
        Message(role="assistant", content="v1 after go")]}

    sid = next(ids)  # replaces with garbage messages: the state before them stands
    garbage = [{"type": "replace", "reason": "compact", "messages": [{"role": "system"}, 5]},
               {"type": "replace", "reason": "compact", "messages": "garbage"},
               {"type": "replace", "reason": "compact",
                "messages": [{"role": "user", "tool_calls": [{"id": 1}]}]},
               {"type": "replace", "reason": "compact", "messages": [None]},
               {"type": "replace", "reason": 5, "messages": []}]
    write_session(store, sid, healthy + b"".join(line(g) for g in garbage))
    corpus.expected[sid] = {"bad_lines": len(garbage), "messages": [
        Message(role="user", content="s"), Message(role="assistant", content="ok"),
        Message(role="user", content="after the replace"),
        Message(role="assistant", content="fine")]}

    sid = next(ids)  # a well-typed replace whose messages break the protocol: repaired
    broken = {"type": "replace", "reason": "import", "messages": [
        {"role": "user", "tool_result": {"call_id": "orphan", "content": "?"}},
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": "m1", "name": "read_file"}]},
        {"role": "user", "content": "interrupting"},
        {"role": "assistant", "tool_calls": [{"id": "t1", "name": "read_file"}]}]}
    write_session(store, sid, line(broken))
    corpus.expected[sid] = {"bad_lines": 0, "min_repaired": 3}

    for name, data in (("empty", b""), ("newlines", b"\n\n\n"), ("crlf", healthy.replace(
            b"\n", b"\r\n")), ("bom", b"\xef\xbb\xbf" + healthy), ("nul", b"\x00" * 4096)):
        sid = next(ids)
        write_session(store, sid, data)
        corpus.expected[sid] = {"name": name}

    # Logs that are not regular files: skipped by the listing, refused by resume, no hang.
    sid = next(ids)
    store.session_dir(sid).mkdir(parents=True)
    os.symlink("/dev/zero", store.log_path(sid))
    corpus.not_files.append(sid)
    sid = next(ids)
    store.session_dir(sid).mkdir(parents=True)
    os.mkfifo(store.log_path(sid))
    corpus.not_files.append(sid)
    sid = next(ids)
    store.log_path(sid).mkdir(parents=True)
    corpus.not_files.append(sid)
    (store.sessions_dir / "not-a-session").mkdir()
    (store.sessions_dir / "20250301-000000-zzzz").mkdir()  # looks like an id, is not one
    return corpus


def check_loaded(corpus: Corpus, sid: str) -> Any:
    loaded = load_session(corpus.store, sid)
    want = corpus.expected[sid]
    assert protocol_valid(loaded.messages), (sid, loaded.messages[:5])
    if "bad_lines" in want:
        assert loaded.bad_lines == want["bad_lines"], sid
    if "min_bad" in want:
        assert loaded.bad_lines >= want["min_bad"], sid
    if "max_bad" in want:
        assert loaded.bad_lines <= want["max_bad"], sid
    if "messages" in want:
        assert loaded.messages == want["messages"], sid
    if "last" in want:
        assert loaded.messages and loaded.messages[-1].content == want["last"], sid
    if "min_repaired" in want:
        assert loaded.repaired >= want["min_repaired"], sid
    return loaded


def test_every_wrongly_typed_line_is_bad_or_well_typed() -> None:
    count = 0
    for kind in TEMPLATES:
        for raw in wrong_lines(kind):
            count += 1
            try:
                entry: Entry = decode(raw)
            except BadLine:
                continue
            if isinstance(entry, MessageEntry):
                assert sane_message(entry.to_message()), raw
            elif isinstance(entry, ReplaceEntry):
                assert all(sane_message(m) for m in entry.messages or []), raw
            else:
                for name in entry.__struct_fields__:
                    value = getattr(entry, name)
                    assert value is not None or name == "messages", raw
                msgspec.json.encode(entry)
    assert count > 500


def test_corrupt_corpus_loads(tmp_path: Path) -> None:
    corpus = build_corpus(tmp_path / ".PseudoClaude")
    try:
        check_corpus(corpus)
    finally:
        corpus.remove_big()


def with_messages(corpus: Corpus) -> set[str]:
    """The corpus sessions that are listed: those whose log has a message (an empty, a
    blank-lines or a NUL log has none)."""
    listable = {sid for sid in corpus.expected if session_info(corpus.store, sid).has_messages}
    assert not any(corpus.expected[sid].get("name") in ("empty", "newlines", "nul")
                   for sid in listable)
    return listable


def check_corpus(corpus: Corpus) -> None:
    for sid in corpus.expected:
        check_loaded(corpus, sid)
    for sid in corpus.not_files:
        with pytest.raises(SessionNotFound, match="no session"):
            load_session(corpus.store, sid)
    listed = {s.id for s in list_sessions(corpus.store)}
    assert listed == with_messages(corpus)
    latest = load_session(corpus.store, "latest")
    assert protocol_valid(latest.messages)
    for sid in list(corpus.expected)[:5]:  # resume commits the repair; the log stays valid
        opened = resume_session(corpus.store, sid)
        opened.writer.close()
        again = load_session(corpus.store, sid)
        assert again.repaired == 0 and protocol_valid(again.messages)


def test_out_of_range_timestamps_do_not_break_listing_or_resume(tmp_path: Path) -> None:
    """A log whose ``ts`` is a number out of ``datetime``'s range (milliseconds instead of
    seconds, or garbage) is still listed and resumed, and the other sessions are listed."""
    store = SessionStore(tmp_path / ".PseudoClaude")
    write_session(store, "20250301-000000-0001", line(TEMPLATES["user"]))
    for n, ts in enumerate((1750150000123, -1e12, 1e300, 2**64), start=2):
        write_session(store, f"20250301-000000-000{n}",
                      line({"type": "message", "role": "user", "content": "hi", "ts": ts}))
    ids = [f"20250301-000000-000{n}" for n in range(1, 6)]
    for sid in ids:
        assert protocol_valid(load_session(store, sid).messages)
    assert sorted(s.id for s in list_sessions(store)) == ids
    for sid in ids:
        resume_session(store, sid).writer.close()


def test_role_contradicting_its_fields_never_reaches_a_provider(tmp_path: Path) -> None:
    """A message line whose role is valid but contradicts its fields (a tool result on an
    assistant message, tool calls on a user message) must not produce a history that
    passes repair but that every provider rejects (a bricked session)."""
    store = SessionStore(tmp_path / ".PseudoClaude")
    lines = [
        {"type": "message", "role": "user", "content": "q", "ts": 1.0},
        {"type": "message", "role": "user", "tool_calls": [{"id": "c1", "name": "read_file"}],
         "ts": 2.0},
        {"type": "message", "role": "assistant",
         "tool_result": {"call_id": "c1", "name": "read_file", "content": "x"}, "ts": 3.0},
        {"type": "message", "role": "assistant", "content": "done", "ts": 4.0},
    ]
    write_session(store, "20250301-000000-0001", b"".join(line(e) for e in lines))
    loaded = load_session(store, "20250301-000000-0001")
    assert protocol_valid(loaded.messages), loaded.messages


def test_lone_surrogates_in_tool_arguments_are_scrubbed_in_the_log() -> None:
    entry = decode(encode(MessageEntry(
        role="assistant", tool_calls=(ToolCall("c1", "read_file", {"path": "\udcff"}),),
        thinking=(ThinkingBlock(thinking="\ud800", signature="s"),))))
    assert isinstance(entry, MessageEntry)
    assert entry.tool_calls[0].arguments == {"path": "\ufffd"}
    assert entry.thinking[0].thinking == "\ufffd"


def test_lone_surrogates_do_not_brick_the_session(tmp_path: Path, allow: Approver) -> None:
    """A lone surrogate is legal in JSON (``"\\ud800"``) and in a POSIX argv (undecodable
    bytes): in a prompt or in the model's reply it must not kill the run without a stop event,
    nor stay in the conversation so that every later request of the session fails."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    rules = [
        {"when": {"last_is_tool_result": True}, "reply": {"text": "done with the tool"}},
        {"when": {"last_user_contains": "use a tool"}, "reply": {
            "text": "odd \ud800 reply", "tool_calls": [
                {"name": "read_file", "arguments": {"path": "a.txt", "note": "\udcff"}}]}},
    ]
    with FakeModelServer({"rules": rules, "default": {"text": "fine"}}) as fake:
        settings_ = load_settings(root, {
            "provider": "anthropic", "apiKey": "sk-surrogate-0123456789",
            "baseUrl": fake.base_url, "maxRetries": 0, "memory.enabled": False},
            home=tmp_path / "home", env={})
        events: list[tuple[str, Event]] = []
        ws = Workspace(root, settings_, approver=allow,
                       hooks=Hooks(events=lambda sid, e: events.append((sid, e))))
        outcomes: list[str] = []

        async def attempt(prompt: str) -> None:
            stops = sum(e.kind == "stop" for _, e in events)
            try:
                _, result = await asyncio.wait_for(ws.run(prompt), 60)
            except WorkspaceError as exc:  # a clean refusal is fine too
                outcomes.append(f"refused: {exc}")
                return
            outcomes.append(result.stop_reason)
            assert sum(e.kind == "stop" for _, e in events) == stops + 1, "no stop event"

        async def go() -> None:
            try:
                await attempt("bytes from a terminal: \udcff")
                await attempt("a normal question")
                await attempt("please use a tool")
                await attempt("another normal question")
            finally:
                await ws.close()

        asyncio.run(go())
    assert outcomes[1] == "completed" and outcomes[3] == "completed", outcomes
    assert ws.session is not None
    loaded = load_session(ws.store, ws.session.id)
    assert protocol_valid(loaded.messages) and loaded.bad_lines == 0
    assert loaded.messages == ws.session.conversation.messages()  # memory == disk


# -- the module's server ----------------------------------------------------------------------

def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=get_converter)  # results stay plain dicts
    register_lsp_features(client)
    return client


@dataclass
class Hostile:
    base: Path
    fake: FakeModelServer
    fuzz: Path
    corpus_root: Path
    broken: Path
    user_memory: Path
    corpus: Corpus
    events: list[dict[str, Any]] = field(default_factory=list)
    memory_changed: list[dict[str, Any]] = field(default_factory=list)

    def uri(self, folder: Path) -> str:
        return folder.as_uri()


BROKEN_OPS = [
    {"action": "update", "level": "project", "filename": "project_knowledge_frontmatter.md",
     "title": "Front matter fixed", "summary": "rewritten", "content": "Now valid."},
    {"action": "update", "level": "project", "filename": "project_knowledge_dir.md",
     "content": "a directory cannot become a note"},
    {"action": "create", "level": "project", "type": "project_knowledge",
     "title": "Created next to broken files", "summary": "new", "content": "New note."},
    {"action": "delete", "level": "project", "filename": "project_knowledge_missing.md"},
    {"action": "create", "level": "project", "type": "gossip", "title": "x", "content": "y"},
    {"action": "update", "level": "project", "filename": "../escape.md", "content": "z"},
]


def break_memory(memory: Path, seed: int = 7) -> dict[str, bytes]:
    rng = random.Random(seed)
    memory.mkdir(parents=True)
    index = bytearray(
        b"- [project_knowledge] Front matter \xe2\x80\x94 broken on purpose "
        b"(project_knowledge_frontmatter.md)\n"
        b"- [project_knowledge] Binary \xe2\x80\x94 NUL bytes (project_knowledge_binary.md)\n"
        b"- [project_knowledge] Dir \xe2\x80\x94 a folder (project_knowledge_dir.md)\n"
        b"- [nonsense] no filename here\n- [project_knowledge] Escape \xe2\x80\x94 x "
        b"(../../etc/passwd)\n")
    index += b"A" * (5 * MiB) + b"\n"  # one 5 MiB line
    junk = bytearray(rng.randbytes(5 * MiB))
    for i in range(0, len(junk), 4093):
        junk[i] = 0x0A
    index += junk
    files = {
        "MEMORY.md": bytes(index),
        "project_knowledge_frontmatter.md": b"---\ntype: nonsense\ntitle: [unclosed\nbody",
        "project_knowledge_nofront.md": b"just text, no front matter\n",
        "project_knowledge_binary.md": b"---\x00\xff\xfe" + rng.randbytes(4096),
        "project_knowledge_latin1.md": "---\ntitle: caf\xe9\n---\n".encode("latin-1"),
    }
    for name, data in files.items():
        (memory / name).write_bytes(data)
    (memory / "project_knowledge_dir.md").mkdir()
    (memory / "project_knowledge_dir.md" / "inside.txt").write_text("keep me")
    return files


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile]:
    base = tmp_path_factory.mktemp("hostile")
    fuzz, corpus_root, broken = base / "fuzz", base / "corpus", base / "broken"
    for folder in (fuzz, corpus_root, broken):
        folder.mkdir()
        (folder / "README.md").write_text("hostile input\n")
    corpus = build_corpus(corpus_root / ".PseudoClaude")
    break_memory(broken / ".PseudoClaude" / "memory")
    memory_rule = {"when": {"has_tools": False, "system_contains": MEMORY_SYSTEM,
                            "body_contains": BROKEN_RUN},
                   "reply": {"text": "Operations: " + json.dumps(BROKEN_OPS) + " done"}}
    script = {"rules": [memory_rule], "default": {"text": "fuzzed answer", "chunks": 1}}
    try:
        with FakeModelServer(script) as fake:
            yield Hostile(base, fake, fuzz, corpus_root, broken, base / "user-memory", corpus)
    finally:
        corpus.remove_big()


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=SERVER, server_env=SERVER_ENV, client_factory=make_client))
async def server(lsp_client: LanguageClient, hostile: Hostile
                 ) -> AsyncIterator[LanguageClient]:
    @lsp_client.feature("pseudoclaude/event")
    def on_event(params: Any) -> None:
        hostile.events.append(params)

    @lsp_client.feature("pseudoclaude/memoryChanged")
    def on_memory(params: Any) -> None:
        hostile.memory_changed.append(params)

    @lsp_client.feature("pseudoclaude/contextUsage")
    def on_usage(params: Any) -> None:
        return None

    @lsp_client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_approval(params: types.ShowMessageRequestParams) -> Any:
        return types.MessageActionItem(title="Deny")

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("neovim"),
        workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name)
                           for f in (hostile.fuzz, hostile.corpus_root, hostile.broken)],
        initialization_options={
            "provider": "anthropic", "apiKey": "sk-hostile-0123456789",
            "baseUrl": hostile.fake.base_url, "maxRetries": 0, "requestTimeout": 20,
            "memory": {"userDir": str(hostile.user_memory)},
            "session": {"retentionDays": 0},
            "approvals": {"runCommand": "deny", "write": "deny"}}))
    yield lsp_client
    await lsp_client.shutdown_session()


# -- (a) fuzzing ---------------------------------------------------------------------------------

FIELDS: dict[str, list[str]] = {
    "pseudoclaude/run": ["prompt", "sessionId", "context"],
    "pseudoclaude/compact": ["instructions"],
    "pseudoclaude/compact/preview": ["instructions"],
    "pseudoclaude/compact/undo": [],
    "pseudoclaude/context": [],
    "pseudoclaude/memory/show": [],
    "pseudoclaude/memory/remember": ["text", "level", "type", "title"],
    "pseudoclaude/memory/forget": ["level", "filename"],
    "pseudoclaude/memory/proposals": [],
    "pseudoclaude/memory/review": ["id", "decision", "content"],
    "pseudoclaude/sessions/list": [],
    "pseudoclaude/sessions/resume": ["sessionId"],
    "pseudoclaude/sessions/new": ["worktree"],
    "pseudoclaude/sessions/messages": ["sessionId", "offset", "limit", "agentId"],
    "pseudoclaude/commands": [],
    "pseudoclaude/sessions/turns": ["sessionId"],
    "pseudoclaude/rewind/preview": ["turn", "mode", "sessionId"],
    "pseudoclaude/rewind": ["turn", "mode", "force", "sessionId"],
    "pseudoclaude/rewind/file": ["turn", "path", "sessionId"],
    "pseudoclaude/sessions/fork": ["sessionId", "turn"],
    "pseudoclaude/mcp/list": [],
    "pseudoclaude/mcp/approve": ["server", "decision"],
    "pseudoclaude/mcp/restart": ["server"],
    "pseudoclaude/worktree/status": ["sessionId"],
    "pseudoclaude/worktree/apply": ["sessionId"],
    "pseudoclaude/worktree/remove": ["sessionId", "force"],
    "pseudoclaude/mode": ["sessionId", "mode"],
    "pseudoclaude/permissions": ["sessionId"],
    "pseudoclaude/permissions/check": ["sessionId", "tool", "arguments"],
    "pseudoclaude/tasks": ["sessionId"],
    "pseudoclaude/status": ["sessionId"],
    "pseudoclaude/hooks/list": [],
    "pseudoclaude/skills/list": ["sessionId"],
    "pseudoclaude/hooks/review": [],
    "pseudoclaude/agents/list": ["sessionId"],
    "pseudoclaude/agents/stop": ["sessionId", "agentId"],
}
assert set(FIELDS) == set(REQUESTS)
SPECIAL = ["", " ", "\t\n", "latest", "new", "project", "user", "project_knowledge",
           "user_preference", "gossip", "20250101-000000-abcd", "20991301-250000-abcd",
           "../../etc/passwd", "/etc/passwd", "MEMORY.md", "project_knowledge_x.md",
           "..", "a/b.md", ".hidden.md", "file:///", "file:///nowhere", "http://x",
           "\x00", "😀" * 20, "ünïcödé", "x" * 200_000,
           "sk-ant-api03-" + "A" * 40, "-----BEGIN RSA PRIVATE KEY-----"]
LEAF = st.one_of(st.none(), st.booleans(),
                 st.integers(min_value=-(2**70), max_value=2**70),
                 st.floats(allow_nan=False, allow_infinity=False),
                 st.text(max_size=40), st.sampled_from(SPECIAL))
JSON = st.recursive(LEAF, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=10)
# Lone surrogates ("\ud800") are covered by test_lone_surrogate_params.
ODD_TEXT = st.sampled_from(["x" * 200_000, "😀" * 20, "a\x00b",
                            "line\r\nbreaks\u2028", "ünïcödé"])
PLAUSIBLE: dict[str, Any] = {
    "prompt": st.one_of(st.text(min_size=1, max_size=60), ODD_TEXT),
    "sessionId": st.sampled_from(["latest", "new", "20250101-000000-abcd"]),
    "instructions": st.text(max_size=30),
    "text": st.one_of(st.text(min_size=1, max_size=60), ODD_TEXT),
    "level": st.sampled_from(["project", "user"]),
    "type": st.sampled_from(["project_knowledge", "user_preference", "reference_material"]),
    "title": st.one_of(st.text(min_size=1, max_size=30), ODD_TEXT),
    "filename": st.sampled_from(["project_knowledge_x.md", "user_preference_y.md"]),
    "offset": st.integers(min_value=0, max_value=5),
    "limit": st.integers(min_value=1, max_value=5),
    "id": st.sampled_from(["20250101-000000-00000000", "../x", "20250101-000000-0000zzzz"]),
    "decision": st.sampled_from(["accept", "reject"]),
    "content": st.one_of(st.text(max_size=60), ODD_TEXT),
    "turn": st.integers(min_value=1, max_value=3),
    "mode": st.sampled_from(["code", "conversation", "both", "strict", "default", "plan",
                             "acceptEdits", "bypassPermissions"]),
    "tool": st.sampled_from(["run_command", "read_file", "write_file", "find_files",
                             "mcp__x__y", "nope", "", "load_skill"]),
    "arguments": st.one_of(
        st.just({}), JSON,
        st.fixed_dictionaries({"command": st.one_of(st.sampled_from(
            ["ls", "rm -rf /", "echo $(", "cd a && b | c", "sh -c 'x", "x" * 100_000]),
            ODD_TEXT)}),
        st.fixed_dictionaries({"path": st.sampled_from(["a.txt", "../x", "/etc/passwd", ""])})),
    "force": st.booleans(),
    "worktree": st.booleans(),
    "path": st.sampled_from(["a.txt", "notes/b.md", "../outside.txt", "/etc/passwd", ""]),
    "server": st.sampled_from(["echo", "nope", "", "../x"]),
    "agentId": st.sampled_from(["agent-0000000000000000", "agent-../x", "", "../x"]),
    "context": st.fixed_dictionaries({}, optional={
        "activeFile": st.sampled_from(["a.txt", "../x", "/etc/passwd", "", "C:\\x"]),
        "selection": st.fixed_dictionaries({
            "path": st.sampled_from(["a.txt", "../x"]), "text": st.one_of(st.text(), ODD_TEXT),
            "range": st.just({"start": {"line": 0, "character": 0},
                              "end": {"line": 1, "character": 0}})}),
        "openFiles": st.lists(st.sampled_from(["a.txt", "b/c.md", "/abs"]), max_size=3)}),
}


REQUIRED: dict[str, set[str]] = {
    "pseudoclaude/run": {"prompt"}, "pseudoclaude/memory/remember": {"text", "level"},
    "pseudoclaude/memory/forget": {"level", "filename"},
    "pseudoclaude/sessions/resume": {"sessionId"},
    "pseudoclaude/memory/review": {"id", "decision"},
    "pseudoclaude/rewind/preview": {"turn", "mode"}, "pseudoclaude/rewind": {"turn", "mode"},
    "pseudoclaude/rewind/file": {"turn", "path"},
    "pseudoclaude/mcp/approve": {"server", "decision"}, "pseudoclaude/mcp/restart": {"server"},
    "pseudoclaude/mode": {"mode"}, "pseudoclaude/permissions/check": {"tool"},
    "pseudoclaude/agents/stop": {"agentId"}}


def params_strategies(method: str, folder_uri: str) -> dict[str, st.SearchStrategy[Any]]:
    """Plausible params (mostly answered with a result), the same with one field made
    hostile, wholly hostile objects, and bare JSON values."""
    names = FIELDS[method]
    required = REQUIRED.get(method, set())
    plausible = st.fixed_dictionaries(
        {"workspace": st.just(folder_uri), **{n: PLAUSIBLE[n] for n in names if n in required}},
        optional={n: PLAUSIBLE[n] for n in names if n not in required})
    one_wrong = st.builds(
        lambda base, key, value: {**base, key: value}, plausible,
        st.sampled_from([*names, "workspace", "workDoneToken", "unknownKey"]), JSON)
    one_missing = st.builds(
        lambda base, key: {k: v for k, v in base.items() if k != key}, plausible,
        st.sampled_from([*names, "workspace"]))
    hostile = st.fixed_dictionaries({}, optional={
        **{n: st.one_of(PLAUSIBLE[n], JSON) for n in names},
        "workspace": st.one_of(st.just(folder_uri), JSON), "workDoneToken": JSON})
    return {"plausible": plausible, "one wrong": one_wrong, "one missing": one_missing,
            "hostile": hostile, "json": JSON}


KINDS = ["plausible"] * 5 + ["one wrong"] * 3 + ["one missing", "hostile", "json"]


@dataclass
class FuzzLog:
    examples: int = 0
    results: int = 0
    errors: dict[int, int] = field(default_factory=dict)
    slowest: float = 0.0
    messages: list[str] = field(default_factory=list)


FUZZ = FuzzLog()


@pytest.mark.asyncio(loop_scope="module")
@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
async def test_fuzzed_params_always_get_an_answer(server: LanguageClient, hostile: Hostile,
                                                  data: st.DataObject, call: Any) -> None:
    folder = hostile.uri(hostile.fuzz)
    method = data.draw(st.sampled_from(sorted(REQUESTS)), label="method")
    as_command = data.draw(st.booleans(), label="as command")
    kind = data.draw(st.sampled_from(KINDS), label="kind")
    params = data.draw(params_strategies(method, folder)[kind], label="params")
    started = time.monotonic()
    try:
        if as_command:
            extra: list[Any] = data.draw(st.sampled_from([[]] * 7 + [[None], [{}]]),
                                         label="extra")
            result = await asyncio.wait_for(server.workspace_execute_command_async(
                types.ExecuteCommandParams(command=method.replace("/", "."),
                                           arguments=[params, *extra])), ANSWER_TIMEOUT)
        else:
            result = await call(server, method, params)
    except JsonRpcException as exc:
        FUZZ.errors[exc.code] = FUZZ.errors.get(exc.code, 0) + 1
        FUZZ.messages.append(exc.message[:80])
        assert exc.code in (INVALID_PARAMS, REQUEST_FAILED, SESSION_BUSY), (exc.code, exc.message)
        assert exc.message and "Traceback" not in exc.message
    else:
        FUZZ.results += 1
        assert isinstance(result, dict | list) or result is None
    FUZZ.slowest = max(FUZZ.slowest, time.monotonic() - started)
    FUZZ.examples += 1
    context = await call(server, "pseudoclaude/context", {"workspace": folder})
    assert context["contextWindow"] == 200_000


@pytest.mark.asyncio(loop_scope="module")
async def test_fuzz_summary(server: LanguageClient) -> None:
    """Runs after the fuzzing (same module): every answer was a result or an expected error,
    and the server logged no unexpected exception while serving them."""
    assert FUZZ.examples > 0, "the fuzzing test of this module must run first"
    print(f"fuzz: {FUZZ.examples} examples, {FUZZ.results} results, errors by code "
          f"{FUZZ.errors}, slowest answer {FUZZ.slowest:.2f} s")
    assert FUZZ.results > 0 and FUZZ.errors.get(INVALID_PARAMS, 0) > 0
    tracebacks = [m.message for m in server.log_messages if "Traceback" in m.message]
    assert not tracebacks, "\n\n".join(t.splitlines()[0] + " ... " + t.splitlines()[-1]
                                        for t in tracebacks)


TARGETED: list[tuple[str, dict[str, Any]]] = [
    ("pseudoclaude/run", {"prompt": "token as a boolean", "workDoneToken": True}),
    ("pseudoclaude/run", {"prompt": "token as a float", "workDoneToken": 1.5}),
    ("pseudoclaude/run", {"prompt": "token as an object", "workDoneToken": {"a": [1]}}),
    ("pseudoclaude/run", {"prompt": "huge token", "workDoneToken": 2**80}),
    ("pseudoclaude/run", {"prompt": "bad date id", "sessionId": "20991301-250000-abcd"}),
    ("pseudoclaude/sessions/messages", {"offset": 2**70, "limit": 10**30}),
    ("pseudoclaude/sessions/messages", {"offset": 1e300}),
    ("pseudoclaude/sessions/messages", {"limit": 0}),
    ("pseudoclaude/sessions/messages", {"offset": 2.5}),
    ("pseudoclaude/memory/forget", {"level": "project", "filename": "MEMORY.md"}),
    ("pseudoclaude/memory/forget", {"level": "user", "filename": "../../../etc/passwd.md"}),
    ("pseudoclaude/memory/forget", {"level": "project", "filename": "x" * 300 + ".md"}),
    ("pseudoclaude/memory/remember", {"level": "project", "text": "x" * 2_000_000}),
    ("pseudoclaude/memory/remember", {"level": "user", "text": "key sk-ant-api03-"
                                      + "A" * 90}),
    ("pseudoclaude/memory/remember", {"level": "project", "text": "ok", "title": "\x00\x01"}),
    ("pseudoclaude/compact", {"instructions": "x" * 100_000}),
]


@pytest.mark.asyncio(loop_scope="module")
async def test_targeted_hostile_params(server: LanguageClient, hostile: Hostile, call: Any) -> None:
    folder = hostile.uri(hostile.fuzz)
    seen = len(server.log_messages)
    for method, params in TARGETED:
        try:
            result = await call(server, method, {"workspace": folder, **params})
            assert isinstance(result, dict), (method, params)
        except JsonRpcException as exc:
            assert exc.code in (INVALID_PARAMS, REQUEST_FAILED, SESSION_BUSY), (method, exc)
    for uri in ("file:///%00", "file://host/share", "file:" + "/a" * 5000, "untitled:x"):
        with pytest.raises(JsonRpcException) as bad:
            await call(server, "pseudoclaude/context", {"workspace": uri})
        assert bad.value.code == INVALID_PARAMS
    tracebacks = [m.message for m in server.log_messages[seen:] if "Traceback" in m.message]
    assert not tracebacks, tracebacks[0]


@pytest.mark.asyncio(loop_scope="module")
async def test_lone_surrogate_params(server: LanguageClient, hostile: Hostile, call: Any) -> None:
    """``"\\ud800"`` is valid JSON: a prompt, note text or title holding one is answered with
    a result or InvalidParams (not an internal UnicodeEncodeError), and the session it went
    to keeps working."""
    folder = hostile.uri(hostile.fuzz)
    seen = len(server.log_messages)
    for method, params in [
        ("pseudoclaude/run", {"prompt": "lone \ud800 surrogate", "sessionId": "new"}),
        ("pseudoclaude/memory/remember", {"level": "project", "text": "lone \udcff"}),
        ("pseudoclaude/memory/remember", {"level": "user", "text": "ok", "title": "\ud800"}),
        ("pseudoclaude/compact", {"instructions": "lone \ud800"}),
    ]:
        try:
            await call(server, method, {"workspace": folder, **params})
        except JsonRpcException as exc:
            assert exc.code == INVALID_PARAMS or (
                exc.code == REQUEST_FAILED and "Unicode" not in exc.message), exc.message
    after = await call(server, "pseudoclaude/run", {"workspace": folder, "prompt": "normal"})
    assert after["stopReason"] == "completed", after
    tracebacks = [m.message for m in server.log_messages[seen:] if "Traceback" in m.message]
    assert not tracebacks, tracebacks[0].splitlines()[-1]


# -- (b) the corpus through the server -----------------------------------------------------------

@pytest.mark.asyncio(loop_scope="module")
async def test_corrupt_sessions_list_and_resume(server: LanguageClient, hostile: Hostile, call: Any
                                                ) -> None:
    folder = hostile.uri(hostile.corpus_root)
    corpus = hostile.corpus
    listed = await call(server, "pseudoclaude/sessions/list", {"workspace": folder})
    assert {s["id"] for s in listed["sessions"]} == with_messages(corpus)
    for sid in corpus.expected:
        loaded = load_session(corpus.store, sid)  # before the resume commits its repair
        resumed = await call(server, "pseudoclaude/sessions/resume",
                             {"workspace": folder, "sessionId": sid})
        assert resumed == {"sessionId": sid, "messageCount": len(loaded.messages),
                           "badLines": loaded.bad_lines, "repaired": loaded.repaired}
        page = await call(server, "pseudoclaude/sessions/messages", {"workspace": folder})
        # The transcript of a hostile log: every item well-formed, the in-memory note of a
        # resume after a long pause never among them (it is not in the log).
        assert page["sessionId"] == sid and page["total"] == len(page["items"])
        assert all(isinstance(i["inContext"], bool) for i in page["items"])
        assert not any(i.get("text", "").startswith("[session resumed]")
                       for i in page["items"])
        assert protocol_valid(load_session(corpus.store, sid).messages)
    for sid in corpus.not_files:
        with pytest.raises(JsonRpcException) as refused:
            await call(server, "pseudoclaude/sessions/resume",
                       {"workspace": folder, "sessionId": sid})
        # not a session of this folder: a bad param, naming it
        assert refused.value.code == INVALID_PARAMS and "sessionId" in refused.value.message
        assert "no session" in refused.value.message
    latest = await call(server, "pseudoclaude/sessions/resume",
                        {"workspace": folder, "sessionId": "latest"})
    assert latest["sessionId"] in corpus.expected
    again = await call(server, "pseudoclaude/sessions/list", {"workspace": folder})
    assert len(again["sessions"]) == len(with_messages(corpus))
    assert sum(s["active"] for s in again["sessions"]) == 1


# -- (c) hand-broken memory ----------------------------------------------------------------------

@pytest.mark.asyncio(loop_scope="module")
async def test_broken_memory_files(server: LanguageClient, hostile: Hostile, call: Any,
                                   until: Any) -> None:
    folder = hostile.uri(hostile.broken)
    memory = hostile.broken / ".PseudoClaude" / "memory"
    index_before = (memory / "MEMORY.md").read_bytes()
    shown = await call(server, "pseudoclaude/memory/show", {"workspace": folder})
    # MEMORY.md has NUL bytes and invalid UTF-8 (past the first MiB): it is ignored, and the
    # index is rebuilt from the note files.
    assert len(shown["index"].encode()) <= 25_600 + 100
    assert "Front matter" not in shown["index"] and "AAAA" not in shown["index"]
    assert "(project_knowledge_frontmatter.md)" in shown["index"]
    project = next(s for s in shown["stores"] if s["level"] == "project")
    names = [n["filename"] for n in project["notes"]]
    for name in ("project_knowledge_frontmatter.md", "project_knowledge_binary.md",
                 "project_knowledge_nofront.md", "project_knowledge_latin1.md"):
        assert name in names
    assert "../../etc/passwd" not in names

    remembered = await call(server, "pseudoclaude/memory/remember", {
        "workspace": folder, "level": "project", "text": "Builds use make.", "title": "dir"})
    assert remembered["filename"] == "project_knowledge_dir-2.md"  # the folder is not replaced
    assert (memory / "project_knowledge_dir.md" / "inside.txt").read_text() == "keep me"
    # the broken index is never rewritten (its broken bytes would go back); the note is
    # in the rebuilt index
    assert (memory / "MEMORY.md").read_bytes() == index_before
    shown = await call(server, "pseudoclaude/memory/show", {"workspace": folder})
    assert "(project_knowledge_dir-2.md)" in shown["index"]

    try:
        forgot = await call(server, "pseudoclaude/memory/forget", {
            "workspace": folder, "level": "project", "filename": "project_knowledge_dir.md"})
        assert isinstance(forgot["removed"], bool)
    except JsonRpcException as exc:
        assert exc.code in (INVALID_PARAMS, REQUEST_FAILED, SESSION_BUSY), exc
    assert (memory / "project_knowledge_dir.md" / "inside.txt").read_text() == "keep me"
    forgot = await call(server, "pseudoclaude/memory/forget", {
        "workspace": folder, "level": "project", "filename": "project_knowledge_binary.md"})
    assert forgot == {"removed": True} and not (memory / "project_knowledge_binary.md").exists()

    # A memory update whose operations meet the broken files.
    result = await call(server, "pseudoclaude/run",
                        {"workspace": folder, "prompt": f"{BROKEN_RUN}: remember things"})
    assert result["stopReason"] == "completed"
    await until(lambda: any(e["kind"] == "memory" and e["workspace"] == folder
                            for e in hostile.events))
    event = next(e for e in hostile.events if e["kind"] == "memory" and e["workspace"] == folder)
    assert event["status"] == "updated", event
    changed = {(c["action"], c["filename"]) for c in event["changes"]}
    assert ("update", "project_knowledge_frontmatter.md") in changed
    assert ("create", "project_knowledge_created-next-to-broken-files.md") in changed
    assert "project_knowledge_dir.md" not in {c["filename"] for c in event["changes"]}
    assert event["error"]  # the rejected operations are reported
    assert "Now valid." in (memory / "project_knowledge_frontmatter.md").read_text()
    assert (memory / "project_knowledge_dir.md").is_dir()

    # Hand edits: binary junk into MEMORY.md, a new folder named like a note.
    hostile.memory_changed.clear()
    (memory / "MEMORY.md").write_bytes(b"\x00\xff binary hand edit\n" + os.urandom(2048))
    (memory / "project_knowledge_handdir.md").mkdir()
    await until(lambda: any(m["workspace"] == folder and m["source"] == "hand-edit"
                            for m in hostile.memory_changed))
    shown = await call(server, "pseudoclaude/memory/show", {"workspace": folder})
    assert isinstance(shown["index"], str)
    context = await call(server, "pseudoclaude/context", {"workspace": folder})
    assert context["sessionId"] == result["sessionId"]


# -- (d) escaping the workspace through the runner ----------------------------------------------

def tree(root: Path) -> dict[str, tuple[bytes | None, int]]:
    out: dict[str, tuple[bytes | None, int]] = {}
    for path in sorted(root.rglob("*")):
        st_ = path.lstat()
        out[str(path)] = (path.read_bytes() if path.is_file() and not path.is_symlink()
                          else None, st_.st_mtime_ns)
    return out


def test_tool_calls_cannot_leave_the_workspace(tmp_path: Path, allow: Approver) -> None:
    canary = f"CANARY-SECRET-{random.Random(9).getrandbits(64):x}"
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    secret = outside / "secret.txt"
    secret.write_text(f"{canary}\nsecond line\n")
    (outside / "deep" / "more.txt").write_text(f"{canary} deep\n")
    root = tmp_path / "ws"
    evil = tmp_path / "ws-evil"  # shares the workspace's name as a prefix
    evil.mkdir()
    (evil / "secret.txt").write_text(canary)
    (root / "sub").mkdir(parents=True)
    (root / "ok.txt").write_text("inside\n")
    os.symlink(secret, root / "link-file")
    os.symlink(outside, root / "link-dir")
    os.symlink(outside / "created-through-link.txt", root / "dangling")
    os.symlink(outside, root / "sub" / "up")
    data_dir = root / ".PseudoClaude"
    memory = data_dir / "memory"
    memory.mkdir(parents=True)
    os.symlink(secret, memory / "project_knowledge_evil.md")  # memory is an extra read root
    before = tree(tmp_path / "outside") | tree(evil)

    proc_secret = f"/proc/self/root{secret}"
    reads: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": "../outside/secret.txt"}),
        ("read_file", {"path": str(secret)}),
        ("read_file", {"path": "link-file"}),
        ("read_file", {"path": "link-dir/secret.txt"}),
        ("read_file", {"path": "sub/up/deep/more.txt"}),
        ("read_file", {"path": proc_secret}),
        ("read_file", {"path": "sub/../../outside/secret.txt"}),
        ("read_file", {"path": str(evil / "secret.txt")}),
        ("read_file", {"path": "/etc/passwd"}),
        ("read_file", {"path": f"/proc/self/cwd/../../..{secret}"}),
        ("read_file", {"path": str(memory / "project_knowledge_evil.md")}),
        ("search_code", {"pattern": "CANARY", "path": "../outside"}),
        ("search_code", {"pattern": "CANARY", "path": "link-dir"}),
        ("search_code", {"pattern": "CANARY", "path": str(outside)}),
        ("find_files", {"pattern": "../outside/*"}),
        ("find_files", {"pattern": f"{outside}/*"}),
        ("find_files", {"pattern": "link-dir/**"}),
    ]
    writes: list[tuple[str, dict[str, Any]]] = [
        ("write_file", {"path": "../outside/new.txt", "content": "pwned"}),
        ("write_file", {"path": str(outside / "new.txt"), "content": "pwned"}),
        ("write_file", {"path": "link-dir/new.txt", "content": "pwned"}),
        ("write_file", {"path": "sub/up/new.txt", "content": "pwned"}),
        ("write_file", {"path": "dangling", "content": "pwned"}),
        ("write_file", {"path": "link-file", "content": "pwned"}),
        ("write_file", {"path": f"/proc/self/root{outside}/new.txt", "content": "pwned"}),
        ("write_file", {"path": "sub/../../outside/new.txt", "content": "pwned"}),
        ("write_file", {"path": str(evil / "secret.txt"), "content": "pwned"}),
        ("edit_file", {"path": "link-file", "old_text": "second line", "new_text": "pwned"}),
        ("edit_file", {"path": "../outside/secret.txt", "old_text": "second line",
                       "new_text": "pwned"}),
        ("edit_file", {"path": "link-dir/secret.txt", "old_text": "second line",
                       "new_text": "pwned"}),
    ]
    attempts = reads + writes
    broad = [("search_code", {"pattern": "CANARY"}), ("find_files", {"pattern": "**/*"}),
             ("search_code", {"pattern": "CANARY", "path": "sub"})]
    turns = [{"tool_calls": [{"name": n, "arguments": a} for n, a in reads]},
             {"tool_calls": [{"name": n, "arguments": a} for n, a in writes]},
             {"tool_calls": [{"name": n, "arguments": a} for n, a in broad]},
             {"text": "I could not get out."}]
    with FakeModelServer({"turns": turns}) as fake:
        settings_ = load_settings(root, {
            "provider": "anthropic", "apiKey": "sk-escape-0123456789", "baseUrl": fake.base_url,
            "maxRetries": 0, "approvals.write": "allow", "approvals.runCommand": "deny",
            "memory.enabled": False, "memory.userDir": str(tmp_path / "user-memory")},
            home=tmp_path / "home", env={})
        events: list[tuple[str, Event]] = []
        ws = Workspace(root, settings_, approver=allow,
                       hooks=Hooks(events=lambda sid, e: events.append((sid, e))))

        async def go() -> Any:
            try:
                return await asyncio.wait_for(ws.run("get out of the workspace"), 60)
            finally:
                await ws.close()

        session_id, result = asyncio.run(go())
        bodies = json.dumps(fake.requests, ensure_ascii=False)
    assert result.stop_reason == "completed"
    assert ws.session is not None
    live = ws.session.conversation.messages()
    results = [m.tool_result for m in live if m.tool_result is not None]
    assert len(results) == len(attempts) + len(broad)
    for (name, args), res in zip(attempts, results, strict=False):
        envelope = json.loads(res.content)
        assert res.is_error and envelope["ok"] is False, (name, args, envelope)
        assert envelope["error_type"] == "outside_workspace", (name, args, envelope)
    for res in results[len(attempts):]:  # broad searches run, but do not follow links out
        assert canary not in res.content and "deep/more.txt" not in res.content
    assert canary not in bodies, "the secret reached the model"
    assert canary not in ws.store.log_path(session_id).read_text()
    assert not any(canary in msgspec.json.encode(e).decode() for _, e in events)
    assert sum(isinstance(e, ToolResultEvent) for _, e in events) == len(results)
    assert tree(tmp_path / "outside") | tree(evil) == before, "something outside changed"
    assert not (outside / "new.txt").exists() and not (outside / "created-through-link.txt"
                                                         ).exists()
