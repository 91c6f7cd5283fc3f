"""read_file, write_file, edit_file, the envelope and argument validation (SPEC §6)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pseudoclaude.agent.tools import (
    MAX_CONTENT_BYTES,
    TRUNCATION_MARKER,
    ApprovalClass,
    Param,
    Tool,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    envelope,
)
from pseudoclaude.agent.tools.base import utf8_truncate
from pseudoclaude.llm.types import ToolCall


def call(registry: ToolRegistry, name: str, arguments: Any = None, **args: Any) -> dict[str, Any]:
    result = asyncio.run(registry.execute(
        ToolCall("c1", name, args if arguments is None else arguments)))
    assert result.call_id == "c1" and result.name == name
    body: dict[str, Any] = json.loads(result.content)
    assert result.is_error == (not body["ok"])
    assert body["tool"] == name
    assert list(body)[:3] == ["ok", "tool", "content"]
    # compact JSON, non-ASCII kept as is
    assert result.content == json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return body


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def registry(ws: Path) -> ToolRegistry:
    return ToolRegistry(ws)


# -- read_file -----------------------------------------------------------------------------------

def test_read_whole_file(ws: Path, registry: ToolRegistry) -> None:
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    body = call(registry, "read_file", path="a.txt")
    assert body["ok"] is True
    assert body["content"] == "one\ntwo\nthree\n"
    assert body["metadata"] == {"path": "a.txt", "offset": 1, "lines": 3, "total_lines": 3,
                                "bytes": 14, "truncated": False,
                                "sha256": hashlib.sha256(b"one\ntwo\nthree\n").hexdigest()}
    assert "error_type" not in body and "error" not in body


def test_read_offset_and_limit(ws: Path, registry: ToolRegistry) -> None:
    (ws / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    body = call(registry, "read_file", path="a.txt", offset=3, limit=2)
    assert body["content"] == "line 3\nline 4\n"
    meta = body["metadata"]
    assert (meta["lines"], meta["total_lines"], meta["next_offset"]) == (2, 10, 5)
    assert meta["truncated"] is False
    body = call(registry, "read_file", path="a.txt", offset=9)
    assert body["content"] == "line 9\nline 10\n"
    assert "next_offset" not in body["metadata"]


def test_read_last_line_without_newline_and_crlf(ws: Path, registry: ToolRegistry) -> None:
    (ws / "a.txt").write_bytes(b"a\r\nb\r\nc")
    body = call(registry, "read_file", path="a.txt")
    assert body["content"] == "a\r\nb\r\nc"
    assert body["metadata"]["total_lines"] == 3 and body["metadata"]["lines"] == 3
    body = call(registry, "read_file", path="a.txt", offset=3)
    assert body["content"] == "c" and body["metadata"]["lines"] == 1


def test_read_empty_file_and_offset_past_end(ws: Path, registry: ToolRegistry) -> None:
    (ws / "empty.txt").write_text("")
    body = call(registry, "read_file", path="empty.txt")
    assert body["ok"] is True and body["content"] == ""
    assert body["metadata"]["total_lines"] == 0
    (ws / "a.txt").write_text("x\ny\n")
    body = call(registry, "read_file", path="a.txt", offset=5)
    assert body["error_type"] == "invalid_arguments" and "offset" in body["error"]


def test_read_large_file_pages_back_to_the_whole_file(ws: Path, registry: ToolRegistry) -> None:
    lines = [f"{i:06d} é✓ {'x' * (i % 97)}\n" for i in range(8000)]
    text = "".join(lines)
    assert len(text.encode()) > 300 * 1024
    (ws / "big.txt").write_text(text)
    pages: list[str] = []
    offset = 1
    while True:
        body = call(registry, "read_file", path="big.txt", offset=offset)
        assert body["ok"] is True
        content = body["content"]
        assert len(content.encode()) <= MAX_CONTENT_BYTES
        meta = body["metadata"]
        assert meta["total_lines"] == 8000 and meta["bytes"] == len(text.encode())
        if meta["truncated"]:
            assert content.endswith("\n" + TRUNCATION_MARKER)
            content = content[: -len(TRUNCATION_MARKER)]
        pages.append(content)
        if "next_offset" not in meta:
            break
        assert meta["next_offset"] == offset + meta["lines"]
        offset = meta["next_offset"]
    assert len(pages) > 4
    assert "".join(pages) == text


def test_read_one_huge_line_is_cut_on_a_character_boundary(
        ws: Path, registry: ToolRegistry) -> None:
    (ws / "min.js").write_text("é" * 100_000 + "\nnext\n")
    body = call(registry, "read_file", path="min.js")
    content = body["content"]
    assert len(content.encode()) <= MAX_CONTENT_BYTES
    assert content.endswith(TRUNCATION_MARKER)
    assert set(content[: -len(TRUNCATION_MARKER) - 1]) == {"é"}
    assert body["metadata"]["truncated"] is True and body["metadata"]["next_offset"] == 2
    assert call(registry, "read_file", path="min.js", offset=2)["content"] == "next\n"


def test_read_limit_reached_before_the_byte_budget(ws: Path, registry: ToolRegistry) -> None:
    (ws / "a.txt").write_text("x\n" * 100_000)
    body = call(registry, "read_file", path="a.txt", limit=3)
    assert body["content"] == "x\nx\nx\n" and body["metadata"]["truncated"] is False
    assert body["metadata"]["next_offset"] == 4


@pytest.mark.parametrize("data", [b"abc\x00def", b"\x89PNG\r\n\x1a\n\x00\x00", b"caf\xe9\n"])
def test_read_binary_is_refused(ws: Path, registry: ToolRegistry, data: bytes) -> None:
    (ws / "bin").write_bytes(data)
    body = call(registry, "read_file", path="bin")
    assert body["ok"] is False and body["error_type"] == "binary_file"
    assert body["content"] == ""


def test_read_errors(ws: Path, registry: ToolRegistry) -> None:
    (ws / "dir").mkdir()
    assert call(registry, "read_file", path="missing.txt")["error_type"] == "not_found"
    assert call(registry, "read_file", path="dir")["error_type"] == "is_directory"
    assert call(registry, "read_file", path=".")["error_type"] == "is_directory"
    os.mkfifo(ws / "fifo")
    assert call(registry, "read_file", path="fifo")["error_type"] == "not_a_file"  # no hang


# -- write_file ----------------------------------------------------------------------------------

def test_write_creates_parents_atomically(ws: Path, registry: ToolRegistry) -> None:
    body = call(registry, "write_file", path="new/deep/f.txt", content="héllo\n")
    assert body["ok"] is True
    assert body["metadata"] == {"path": "new/deep/f.txt", "bytes": 7, "created": True,
                                "sha256": hashlib.sha256("héllo\n".encode()).hexdigest()}
    assert (ws / "new" / "deep" / "f.txt").read_text() == "héllo\n"
    body = call(registry, "write_file", path="new/deep/f.txt", content="")
    assert body["metadata"]["created"] is False and body["metadata"]["bytes"] == 0
    assert (ws / "new" / "deep" / "f.txt").read_text() == ""
    assert sorted(p.name for p in (ws / "new" / "deep").iterdir()) == ["f.txt"]  # no temp


def test_write_keeps_the_mode_of_a_replaced_file(ws: Path, registry: ToolRegistry) -> None:
    script = ws / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o750)
    call(registry, "write_file", path="run.sh", content="#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert script.read_text() == "#!/bin/sh\necho hi\n"


@pytest.mark.parametrize("mode", [0o000, 0o444, 0o555])
def test_write_and_edit_refuse_a_file_the_user_cannot_write(
        ws: Path, registry: ToolRegistry, mode: int) -> None:
    # Mode-based, so it holds when the tests run as root (who can write anything).
    locked = ws / "locked.txt"
    locked.write_text("keep me\n")
    locked.chmod(mode)
    try:
        body = call(registry, "write_file", path="locked.txt", content="new\n")
        assert body["ok"] is False and body["error_type"] == "permission_denied"
        body = call(registry, "edit_file", path="locked.txt", old_text="keep",
                    new_text="lose")
        if mode & stat.S_IRUSR or os.geteuid() == 0:
            assert body["error_type"] == "permission_denied"
        assert stat.S_IMODE(locked.stat().st_mode) == mode
        locked.chmod(0o600)
        assert locked.read_text() == "keep me\n"
        assert sorted(p.name for p in ws.iterdir()) == ["locked.txt"]  # no temp left
    finally:
        locked.chmod(0o600)


def test_write_errors(ws: Path, registry: ToolRegistry) -> None:
    (ws / "dir").mkdir()
    (ws / "file").write_text("x")
    assert call(registry, "write_file", path="dir", content="x")["error_type"] == "is_directory"
    assert call(registry, "write_file", path=".", content="x")["error_type"] == "is_directory"
    body = call(registry, "write_file", path="file/child.txt", content="x")
    assert body["ok"] is False and body["error_type"] == "not_found"
    assert (ws / "file").read_text() == "x"
    body = call(registry, "write_file", path="a.txt")
    assert body["error_type"] == "invalid_arguments" and "`content`" in body["error"]


# -- edit_file -----------------------------------------------------------------------------------

def test_edit_replaces_the_unique_occurrence(ws: Path, registry: ToolRegistry) -> None:
    (ws / "m.py").write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    (ws / "m.py").chmod(0o700)
    body = call(registry, "edit_file", path="m.py", old_text="return 2", new_text="return 3")
    assert body["ok"] is True and body["metadata"]["line"] == 5
    assert (ws / "m.py").read_text() == "def f():\n    return 1\n\ndef g():\n    return 3\n"
    assert stat.S_IMODE((ws / "m.py").stat().st_mode) == 0o700


def test_edit_no_match_and_ambiguous_leave_the_file(ws: Path, registry: ToolRegistry) -> None:
    original = "x = 1\nx = 1\nx = 1\naaa\n"
    (ws / "m.py").write_text(original)
    body = call(registry, "edit_file", path="m.py", old_text="y = 2", new_text="z")
    assert body["error_type"] == "no_match"
    body = call(registry, "edit_file", path="m.py", old_text="x = 1", new_text="z")
    assert body["error_type"] == "ambiguous_match" and "3 times" in body["error"]
    assert body["metadata"] == {"count": 3}
    body = call(registry, "edit_file", path="m.py", old_text="aa", new_text="b")  # overlapping
    assert body["error_type"] == "ambiguous_match" and body["metadata"]["count"] == 2
    assert (ws / "m.py").read_text() == original


def test_edit_crlf_file_with_lf_old_text(ws: Path, registry: ToolRegistry) -> None:
    (ws / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    body = call(registry, "edit_file", path="w.txt", old_text="one\ntwo\n", new_text="1\n2\n")
    assert body["ok"] is True
    assert (ws / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_edit_errors(ws: Path, registry: ToolRegistry) -> None:
    (ws / "bin").write_bytes(b"a\x00b")
    body = call(registry, "edit_file", path="bin", old_text="a", new_text="b")
    assert body["error_type"] == "binary_file"
    assert (ws / "bin").read_bytes() == b"a\x00b"
    assert call(registry, "edit_file", path="nope", old_text="a",
                new_text="b")["error_type"] == "not_found"
    body = call(registry, "edit_file", path="bin", old_text="", new_text="b")
    assert body["error_type"] == "invalid_arguments" and "`old_text`" in body["error"]
    body = call(registry, "edit_file", path="bin", old_text="a")
    assert body["error_type"] == "invalid_arguments" and "`new_text`" in body["error"]


# -- validation ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("arguments", "field"), [
    ("{not json", "not a JSON object"),
    ("", "not a JSON object"),
    (["a.txt"], "not a JSON object"),
    ({}, "`path`"),
    ({"path": None}, "`path`"),
    ({"path": 3}, "`path`"),
    ({"path": "a.txt", "offset": "2"}, "`offset`"),
    ({"path": "a.txt", "offset": True}, "`offset`"),
    ({"path": "a.txt", "offset": 1.5}, "`offset`"),
    ({"path": "a.txt", "offset": 0}, "`offset`"),
    ({"path": "a.txt", "limit": -1}, "`limit`"),
    ({"path": "a.txt", "lines": 3}, "`lines`"),
])
def test_invalid_arguments_name_the_field(
        ws: Path, registry: ToolRegistry, arguments: Any, field: str) -> None:
    (ws / "a.txt").write_text("a\nb\n")
    body = call(registry, "read_file", arguments)
    assert body["ok"] is False and body["error_type"] == "invalid_arguments"
    assert field in body["error"]
    assert registry.validate(ToolCall("c1", "read_file", arguments)) is not None


def test_lenient_but_standard_argument_forms(ws: Path, registry: ToolRegistry) -> None:
    (ws / "a.txt").write_text("a\nb\n")
    body = call(registry, "read_file", {"path": "a.txt", "offset": 2.0, "limit": None})
    assert body["ok"] is True and body["content"] == "b\n"
    assert registry.validate(ToolCall("c1", "read_file", {"path": "a.txt"})) is None


def test_unknown_tool(registry: ToolRegistry) -> None:
    body = call(registry, "delete_everything", path="x")
    assert body["error_type"] == "unknown_tool" and "read_file" in body["error"]
    assert registry.get("delete_everything") is None
    assert registry.is_read_only("delete_everything") is False
    assert registry.approval_class("delete_everything") == "none"


def test_specs_and_classes(registry: ToolRegistry) -> None:
    specs = {spec.name: spec for spec in registry.specs()}
    assert set(specs) == {"read_file", "write_file", "edit_file", "run_command", "find_files",
                          "search_code"}
    required = {"read_file": ["path"], "write_file": ["path", "content"],
                "edit_file": ["path", "old_text", "new_text"], "run_command": ["command"],
                "find_files": ["pattern"], "search_code": ["pattern"]}
    props = {"read_file": {"path", "offset", "limit"}, "write_file": {"path", "content"},
             "edit_file": {"path", "old_text", "new_text"},
             "run_command": {"command", "args", "timeout"}, "find_files": {"pattern"},
             "search_code": {"pattern", "regex", "path"}}
    for name, spec in specs.items():
        schema = spec.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert schema["required"] == required[name]
        properties = schema["properties"]
        assert isinstance(properties, dict) and set(properties) == props[name]
        assert all(p["description"] for p in properties.values())
        assert len(spec.description) > 40
        json.dumps(schema)
    assert {n for n in specs if registry.is_read_only(n)} == {"read_file", "find_files",
                                                              "search_code"}
    assert registry.approval_class("write_file") == "write"
    assert registry.approval_class("edit_file") == "write"
    assert registry.approval_class("run_command") == "runCommand"
    assert registry.approval_class("read_file") == "none"


# -- envelope, failures, cancellation --------------------------------------------------------------

def test_utf8_truncate_keeps_characters_whole() -> None:
    text = "✓" * 100
    cut, truncated = utf8_truncate(text, 50)
    assert truncated and cut.endswith(TRUNCATION_MARKER)
    assert len(cut.encode()) <= 50
    assert cut[: -len(TRUNCATION_MARKER)] == "✓" * ((50 - len(TRUNCATION_MARKER)) // 3)
    assert utf8_truncate("short", 50) == ("short", False)


def test_envelope_cuts_content_at_the_limit() -> None:
    text, ok = envelope("x", ToolOutput("é" * 100_000, {"a": 1}))
    body = json.loads(text)
    assert ok and body["ok"] is True
    assert len(body["content"].encode()) <= MAX_CONTENT_BYTES
    assert body["content"].endswith(TRUNCATION_MARKER)
    assert body["metadata"] == {"a": 1, "truncated": True}
    text, ok = envelope("x", ToolOutput("bad \udcff name"))
    assert json.loads(text)["content"] == "bad ? name"
    text, ok = envelope("x", ToolOutput("out", error_type="exit_status", error="exit\n2"))
    assert not ok
    assert json.loads(text) == {"ok": False, "tool": "x", "content": "out",
                                "error_type": "exit_status", "error": "exit 2"}


class Boom(Tool):
    name: ClassVar[str] = "boom"
    description: ClassVar[str] = "Raises."
    params: ClassVar[tuple[Param, ...]] = ()
    read_only: ClassVar[bool] = True
    approval_class: ClassVar[ApprovalClass] = "none"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        raise RuntimeError("first line\nsecond line\n  File \"x.py\", line 1")


class Hang(Boom):
    name: ClassVar[str] = "hang"
    started: ClassVar[asyncio.Event | None] = None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        assert Hang.started is not None
        Hang.started.set()
        await asyncio.sleep(60)
        return ToolOutput("never")


def test_unexpected_exception_is_internal_error(tmp_path: Path) -> None:
    registry = ToolRegistry(tmp_path, tools=[Boom()])
    body = call(registry, "boom")
    assert body["error_type"] == "internal_error"
    assert "RuntimeError: first line" in body["error"] and "second line" not in body["error"]
    assert "\n" not in body["error"] and "Traceback" not in body["error"]


def test_cancellation_propagates(tmp_path: Path) -> None:
    registry = ToolRegistry(tmp_path, tools=[Hang()])

    async def scenario() -> None:
        Hang.started = asyncio.Event()
        task = asyncio.create_task(registry.execute(ToolCall("c1", "hang", {})))
        await Hang.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
