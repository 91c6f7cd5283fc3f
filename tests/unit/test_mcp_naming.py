"""MCP tool names for the model, the tool adapter's schema, and results as text (pure)."""

from __future__ import annotations

import base64
import json

from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from pseudoclaude.mcp import McpTool, assign, model_name, object_schema, result_text
from pseudoclaude.mcp.naming import VALID
from pseudoclaude.mcp.results import convert
from pseudoclaude.mcp.tools import make_tool


def test_plain_names() -> None:
    assert model_name("github", "search_issues") == "mcp__github__search_issues"
    assert model_name("my server", "files.read") == "mcp__my_server__files_read"
    assert VALID.match(model_name("ü-srv", "tool/€"))


def test_long_names_are_cut_with_a_hash() -> None:
    server, tool = "s" * 40, "t" * 40
    name = model_name(server, tool)
    assert len(name) == 64 and VALID.match(name)
    assert name == model_name(server, tool)  # deterministic
    assert name != model_name(server, tool + "x")
    assert name.startswith("mcp__" + "s" * 40)


def test_assign_maps_back_exactly() -> None:
    pairs = [("a", "x.y"), ("a", "x_y"), ("b", "read"), ("c" * 70, "read"), ("c" * 71, "read")]
    names = assign(pairs)
    assert sorted(names.values()) == sorted(pairs)
    assert all(VALID.match(n) for n in names)
    assert "mcp__b__read" in names
    # the two that look alike both get the hashed form, whatever the order
    assert "mcp__a__x_y" not in names
    assert assign(list(reversed(pairs))) == names


def test_object_schema() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"],
              "title": "searchArguments"}
    assert object_schema(schema) == schema
    assert object_schema({"properties": {"q": {}}}) == {"type": "object",
                                                         "properties": {"q": {}}}
    assert object_schema(None) == {"type": "object", "properties": {}}
    assert object_schema({"type": "string"}) == {"type": "object", "properties": {}}
    assert object_schema({"type": "object"}) == {"type": "object", "properties": {}}


def test_tool_adapter_looks_like_a_registry_tool() -> None:
    from mcp.types import Tool, ToolAnnotations

    sdk = Tool(name="search", description="Search.", input_schema={"type": "object"},
               annotations=ToolAnnotations(read_only_hint=True))
    tool = make_tool("mcp__gh__search", "gh", sdk, None)
    assert isinstance(tool, McpTool)
    spec = tool.spec()
    assert (spec.name, spec.description, spec.input_schema) == (
        "mcp__gh__search", "Search.", {"type": "object", "properties": {}})
    assert tool.read_only is False and tool.approval_class == "runCommand"
    assert tool.read_only_hint is True
    bare = make_tool("mcp__gh__x", "gh", Tool(name="x", input_schema={}), None)
    assert "`x`" in bare.description and "`gh`" in bare.description


def test_text_blocks_are_joined() -> None:
    result = CallToolResult(content=[TextContent(text="one"), TextContent(text="two")])
    assert result_text(result) == "one\ntwo"
    assert convert(result).is_error is False


def test_image_and_audio_are_notes() -> None:
    data = base64.b64encode(b"\x89PNG" + b"\0" * 12341).decode()
    result = CallToolResult(content=[ImageContent(data=data, mime_type="image/png"),
                                     AudioContent(data=base64.b64encode(b"abc").decode(),
                                                  mime_type="audio/wav")])
    assert result_text(result) == "[image: image/png, 12345 bytes]\n[audio: audio/wav, 3 bytes]"


def test_resources() -> None:
    blob = base64.b64encode(b"1234").decode()
    result = CallToolResult(content=[
        EmbeddedResource(resource=TextResourceContents(uri="file:///a.txt", text="body")),
        EmbeddedResource(resource=BlobResourceContents(uri="file:///b.bin", blob=blob,
                                                       mime_type="application/zip")),
        ResourceLink(uri="https://example.com/doc", name="doc"),
    ])
    assert result_text(result).splitlines() == [
        "body", "[resource: file:///b.bin, application/zip, 4 bytes]",
        "[resource link: https://example.com/doc (doc)]"]


def test_structured_content_without_text() -> None:
    result = CallToolResult(content=[], structured_content={"n": 1, "s": "é"})
    assert json.loads(result_text(result)) == {"n": 1, "s": "é"}
    with_text = CallToolResult(content=[TextContent(text="t")], structured_content={"n": 1})
    assert result_text(with_text) == "t"


def test_is_error_is_an_error_result() -> None:
    out = convert(CallToolResult(content=[TextContent(text="bad input")], is_error=True))
    assert (out.is_error, out.error_type, out.text) == (True, "tool_error", "bad input")
    empty = convert(CallToolResult(content=[], is_error=True))
    assert empty.is_error and empty.text


def test_a_large_result_is_not_cut() -> None:
    text = "x" * (100 * 1024)
    assert convert(CallToolResult(content=[TextContent(text=text)])).text == text
