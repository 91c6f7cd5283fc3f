"""MCP configuration: the four sources, merging, ``${VAR}`` expansion, bad entries, options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pseudoclaude.mcp import (
    McpManager,
    McpOptions,
    ServerConfig,
    TrustStore,
    collect,
    expand,
    from_acp,
    from_settings,
    options_from_settings,
    parse_entry,
    read_project_file,
    read_workspace_file,
)

ENV = {"HOME": "/home/u", "TOKEN": "tok-123456", "EMPTY": ""}


def write_project(ws: Path, servers: object) -> None:
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def write_workspace(ws: Path, text: str) -> None:
    (ws / ".PseudoClaude").mkdir(exist_ok=True)
    (ws / ".PseudoClaude" / "config.yaml").write_text(text, encoding="utf-8")


def by_name(entries: list[ServerConfig]) -> dict[str, ServerConfig]:
    return {e.name: e for e in entries}


def test_project_file_entries(tmp_path: Path) -> None:
    write_project(tmp_path, {
        "local": {"command": "node", "args": ["server.js", "--port", 3], "env": {"A": "1"}},
        "typed": {"type": "stdio", "command": "uvx", "args": ["tool"]},
        "remote": {"type": "http", "url": "https://example.com/mcp",
                   "headers": {"X-Team": "core"}},
        "events": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        "inferred": {"url": "https://example.com/other"},
    })
    servers = by_name(read_project_file(tmp_path, ENV))
    local = servers["local"]
    assert (local.source, local.transport, local.command, local.args, dict(local.env)) == (
        "project", "stdio", "node", ("server.js", "--port", "3"), {"A": "1"})
    assert local.problem is None and local.needs_approval
    assert servers["typed"].transport == "stdio" and servers["typed"].problem is None
    remote = servers["remote"]
    assert (remote.transport, remote.url, dict(remote.headers)) == (
        "http", "https://example.com/mcp", {"X-Team": "core"})
    assert servers["events"].transport == "sse" and servers["events"].problem is None
    assert servers["inferred"].transport == "http"


def test_variables_are_expanded(tmp_path: Path) -> None:
    write_project(tmp_path, {"s": {
        "command": "${HOME}/bin/server",
        "args": ["--token=${TOKEN}", "--level=${LEVEL:-info}", "${EMPTY:-fallback}"],
        "env": {"API": "${TOKEN}", "PLAIN": "x"},
    }, "h": {"type": "http", "url": "${BASE:-http://127.0.0.1:1}/mcp",
             "headers": {"Authorization": "Bearer ${TOKEN}"}}})
    servers = by_name(read_project_file(tmp_path, ENV))
    s = servers["s"]
    assert s.problem is None
    assert s.command == "/home/u/bin/server"
    assert s.args == ("--token=tok-123456", "--level=info", "fallback")
    assert dict(s.env) == {"API": "tok-123456", "PLAIN": "x"}
    assert "tok-123456" in s.secrets
    assert "tok-123456" not in s.summary() and "[redacted]" in s.summary()
    h = servers["h"]
    assert h.url == "http://127.0.0.1:1/mcp"
    assert dict(h.headers) == {"Authorization": "Bearer tok-123456"}
    assert expand("${NOPE:-d} ${TOKEN}", ENV) == "d tok-123456"


def test_missing_variable_is_a_problem_naming_it() -> None:
    entry = parse_entry("s", {"command": "x", "env": {"KEY": "${SECRET_KEY}"}}, "project",
                        {"OTHER": "1"})
    assert entry.problem is not None
    assert "`SECRET_KEY`" in entry.problem and "not set" in entry.problem


def test_fingerprint_follows_what_is_written() -> None:
    base = {"command": "node", "args": ["a.js"], "env": {"K": "${TOKEN}"}}
    one = parse_entry("s", base, "project", {"TOKEN": "a"})
    other_value = parse_entry("s", base, "project", {"TOKEN": "b"})
    changed = parse_entry("s", {**base, "args": ["b.js"]}, "project", {"TOKEN": "a"})
    changed_env = parse_entry("s", {**base, "env": {"NODE_OPTIONS": "--require x"}}, "project")
    assert one.fingerprint == other_value.fingerprint
    assert len({one.fingerprint, changed.fingerprint, changed_env.fingerprint}) == 3
    url = parse_entry("r", {"type": "http", "url": "https://a/mcp"}, "project")
    url2 = parse_entry("r", {"type": "http", "url": "https://b/mcp"}, "project")
    assert url.fingerprint != url2.fingerprint


@pytest.mark.parametrize(("raw", "expected"), [
    ({"args": ["x"]}, "no `command`"),
    ({"type": "http"}, "no `url`"),
    ({"type": "websocket", "url": "ws://x"}, "unknown type `websocket`"),
    ({"command": "x", "args": "not-a-list"}, "`args` must be a list"),
    ({"command": "x", "env": {"A": ["list"]}}, "`env.A` must be a string"),
    ({"type": "http", "url": "ftp://host/x"}, "http:// or https://"),
    ({"command": "x", "approval": "sometimes"}, "`approval` must be"),
    ({"command": "x", "disabled": "yes"}, "`disabled` must be"),
    ("just a string", "not an object"),
])
def test_bad_entries_name_the_problem(raw: object, expected: str) -> None:
    entry = parse_entry("bad", raw, "project", ENV)
    assert entry.problem is not None and expected in entry.problem


def test_problem_never_quotes_a_value() -> None:
    entry = parse_entry("s", {"command": "x", "env": {"A": ["sk-ant-abcdefghijklmnopqrstuvwxyz"]}},
                        "user")
    assert entry.problem is not None and "sk-ant" not in entry.problem


def test_a_disabled_entry_needs_nothing_else() -> None:
    entry = parse_entry("s", {"disabled": True}, "user")
    assert entry.problem is None and entry.disabled


def test_file_that_is_not_json_is_a_pseudo_entry(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"a": ', encoding="utf-8")
    servers = collect(tmp_path, settings={"mcp": {"servers": {"u": {"command": "u"}}}},
                      environ=ENV)
    names = by_name(servers)
    assert set(names) == {"u", ".mcp.json"}
    assert names["u"].problem is None
    problem = names[".mcp.json"].problem
    assert problem is not None and "not valid JSON" in problem and "line 1" in problem
    assert names[".mcp.json"].source == "project"


def test_server_table_that_is_not_an_object(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text('{"mcpServers": ["a"]}', encoding="utf-8")
    [entry] = read_project_file(tmp_path)
    assert entry.name == ".mcp.json" and "`mcpServers` is not an object" in (entry.problem or "")
    write_workspace(tmp_path, "mcp: [1, 2\n")
    [entry] = read_workspace_file(tmp_path)
    assert entry.name == "config.yaml" and "not valid YAML" in (entry.problem or "")
    assert from_settings({"mcp.servers": "nope"})[0].name == "mcp.servers"


def test_no_files_no_servers(tmp_path: Path) -> None:
    assert collect(tmp_path, environ=ENV) == []


def test_sources_merge_by_name_later_wins(tmp_path: Path) -> None:
    settings = {"mcp": {"servers": {
        "a": {"command": "user-a"}, "b": {"command": "user-b"}, "c": {"command": "user-c"},
        "d": {"command": "user-d"}, "u": {"command": "user-only"}}}}
    write_project(tmp_path, {"b": {"command": "project-b"}, "c": {"command": "project-c"},
                             "d": {"command": "project-d"}, "p": {"command": "project-only"}})
    write_workspace(tmp_path, "model: x\nmcp:\n  servers:\n"
                              "    c: {command: workspace-c}\n"
                              "    d: {command: workspace-d, args: ['${TOKEN}']}\n")
    acp = [{"name": "d", "command": "acp-d", "args": ["${TOKEN}"],
            "env": [{"name": "K", "value": "v"}]}]
    servers = by_name(collect(tmp_path, settings=settings, acp=acp, environ=ENV))
    assert {n: (s.command, s.source) for n, s in servers.items()} == {
        "a": ("user-a", "user"), "b": ("project-b", "project"),
        "c": ("workspace-c", "workspace"), "d": ("acp-d", "acp"),
        "u": ("user-only", "user"), "p": ("project-only", "project")}
    assert servers["d"].args == ("${TOKEN}",)  # ACP values are taken literally
    assert dict(servers["d"].env) == {"K": "v"}
    # what the repository brings waits for the user (.mcp.json and its config.yaml alike)
    assert not servers["d"].needs_approval and servers["c"].needs_approval


def test_acp_shapes() -> None:
    servers = by_name(from_acp([
        {"name": "local", "command": "/bin/srv", "args": ["-v"], "env": []},
        {"type": "http", "name": "remote", "url": "https://x/mcp",
         "headers": [{"name": "Authorization", "value": "Bearer abc"}]},
        {"type": "sse", "name": "events", "url": "https://x/sse", "headers": []},
        {"command": "nameless"},
        {"name": "broken", "command": "x", "env": [{"name": "A"}]},
    ]))
    assert servers["local"].command == "/bin/srv" and servers["local"].source == "acp"
    assert dict(servers["remote"].headers) == {"Authorization": "Bearer abc"}
    assert "Bearer abc" in servers["remote"].secrets
    assert servers["events"].transport == "sse"
    assert servers["acp[3]"].problem == "the server has no name"
    assert "`env` must be a list" in (servers["broken"].problem or "")


def test_settings_forms() -> None:
    nested = from_settings({"mcp": {"servers": {"a": {"command": "x"}}}})
    dotted = from_settings({"mcp.servers": {"a": {"command": "x"}}})
    wrapped = from_settings({"pseudoclaude": {"mcp": {"servers": {"a": {"command": "x"}}}}})
    assert [e.command for e in nested + dotted + wrapped] == ["x", "x", "x"]
    assert from_settings(None) == [] and from_settings({"model": "m"}) == []


def test_options() -> None:
    assert options_from_settings(None) == McpOptions()
    options = options_from_settings({"mcp": {"startTimeout": 3, "toolTimeout": 7.5}})
    assert (options.start_timeout, options.tool_timeout) == (3.0, 7.5)
    dotted = options_from_settings({"mcp.startTimeout": 2, "mcp.tool_timeout": 4})
    assert (dotted.start_timeout, dotted.tool_timeout) == (2.0, 4.0)
    bad = options_from_settings({"mcp": {"startTimeout": -1, "toolTimeout": "soon"}})
    assert (bad.start_timeout, bad.tool_timeout) == (10.0, 60.0)


async def test_listing_names_each_bad_entry(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("not json", encoding="utf-8")
    servers = collect(tmp_path, settings={"mcp": {"servers": {
        "nocommand": {"args": ["x"]}, "weird": {"type": "carrier-pigeon"},
        "off": {"disabled": True}}}}, environ=ENV)
    manager = McpManager(tmp_path, TrustStore(tmp_path / "home"))
    try:
        listing = {i.name: i for i in await manager.configure(servers)}
        assert listing["nocommand"].status == "failed"
        assert "no `command`" in (listing["nocommand"].error or "")
        assert listing["weird"].status == "failed"
        assert "unknown type `carrier-pigeon`" in (listing["weird"].error or "")
        assert listing[".mcp.json"].status == "failed"
        assert "not valid JSON" in (listing[".mcp.json"].error or "")
        assert listing["off"].status == "disabled"
        assert await manager.tools() == []
        wire = [i.name for i in manager.listing()]
        assert wire == ["nocommand", "weird", "off", ".mcp.json"]
    finally:
        await manager.close()
