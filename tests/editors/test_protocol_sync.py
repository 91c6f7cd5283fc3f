"""The editors' mirrors of the wire are generated and current.

``editors/vscode/src/protocol.ts`` and ``editors/nvim/lua/pseudoclaude/protocol.lua`` are
written by ``make protocol`` from ``server/pseudoclaude/api/protocol.py``, and the settings
``editors/vscode/package.json`` contributes from :data:`pseudoclaude.config.KEYS`; ``make lint``
(and this test) fail when any is stale. The Lua mirror is loaded in the real headless Neovim and
must hold the server's names; the TypeScript mirror is compiled by ``npm test``. Neither client
spells a method name anywhere else.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest

from pseudoclaude.api import codegen
from pseudoclaude.api import protocol as p
from pseudoclaude.config import KEYS

ROOT = Path(__file__).resolve().parents[2]
NVIM_PLUGIN = ROOT / "editors" / "nvim"

DUMP_LUA = """
vim.opt.rtp:prepend(assert(_G.arg[1]))
local p = require('pseudoclaude.protocol')
io.stdout:write(vim.json.encode({
  requests = p.requests, notifications = p.notifications, errors = p.errors,
  commands = p.commands, version = p.version, experimental_key = p.experimental_key,
  server_requests = p.server_requests, approvals_capability = p.approvals_capability,
  approval_decisions = p.approval_decisions, review_decisions = p.review_decisions,
  memory_types = p.memory_types, breakdown_categories = p.breakdown_categories,
}))
"""


def test_the_generated_mirrors_are_current() -> None:
    assert codegen.main(["--check"]) == 0, "run `make protocol`"
    for path in (codegen.TS_PATH, codegen.LUA_PATH):
        assert codegen.HEADER in path.read_text()[:300], f"{path.name}: no generated header"


def test_vscode_contributes_every_server_setting_from_the_table() -> None:
    props = json.loads(codegen.PACKAGE_JSON_PATH.read_text())["contributes"]["configuration"][
        "properties"]
    server = [k for k in props if not k.startswith("pseudoclaude.server.")]
    assert server == [f"pseudoclaude.{name}" for name, key in KEYS.items() if "lsp" in key.sources]
    for name in ("thinkingBudget", "maxTokens", "maxRetries", "requestTimeout", "connectTimeout"):
        assert props[f"pseudoclaude.{name}"]["default"] == KEYS[name].default
        assert props[f"pseudoclaude.{name}"]["description"].startswith(KEYS[name].doc)
    assert props["pseudoclaude.approvals.runCommand"]["enum"] == ["allow", "ask", "deny"]
    assert props["pseudoclaude.provider"]["enum"] == ["", "anthropic", "openai"]
    assert props["pseudoclaude.contextWindow"]["default"] is None  # unset: the provider's
    assert props["pseudoclaude.thinkingBudget"]["minimum"] == 1024
    assert props["pseudoclaude.requestTimeout"]["type"] == "number"
    assert props["pseudoclaude.dataDir"]["scope"] == "resource"
    assert {"pseudoclaude.server.command", "pseudoclaude.server.pythonPath",
            "pseudoclaude.server.installStrategy"} <= set(props)


def test_a_stale_package_json_fails_the_check_and_keeps_the_hand_written_settings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    manifest = json.loads(codegen.PACKAGE_JSON_PATH.read_text())
    props = manifest["contributes"]["configuration"]["properties"]
    del props["pseudoclaude.maxTokens"]
    props["pseudoclaude.model"]["default"] = "stale"
    stale = tmp_path / "package.json"
    stale.write_text(json.dumps(manifest, indent=2) + "\n")
    monkeypatch.setattr(codegen, "PACKAGE_JSON_PATH", stale)
    monkeypatch.setattr(codegen, "TARGETS", {stale: codegen.render_package_json})
    monkeypatch.setattr(codegen, "ROOT", tmp_path)
    assert codegen.main(["--check"]) == 1
    assert "package.json" in capsys.readouterr().err
    assert codegen.main([]) == 0 and codegen.main(["--check"]) == 0
    assert stale.read_text() == codegen.PACKAGE_JSON_PATH.read_text()  # the real one, again


def test_a_stale_mirror_fails_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A shape changed in protocol.py (here: a field the file lacks) is caught."""
    stale = tmp_path / "protocol.ts"
    stale.write_text(codegen.render_ts().replace("  message: string;\n", "", 1))
    fresh = tmp_path / "protocol.lua"
    fresh.write_text(codegen.render_lua())
    monkeypatch.setattr(codegen, "TARGETS", {stale: codegen.render_ts,
                                             fresh: codegen.render_lua})
    monkeypatch.setattr(codegen, "ROOT", tmp_path)
    assert codegen.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "protocol.ts" in err and "protocol.lua" not in err
    assert codegen.main([]) == 0 and codegen.main(["--check"]) == 0  # `make protocol` mends it


def test_every_shape_and_method_is_in_the_typescript_mirror() -> None:
    source = codegen.TS_PATH.read_text()
    for method in p.REQUESTS + p.NOTIFICATIONS + p.SERVER_REQUESTS:
        assert f"'{method}'" in source
    for shape in codegen.wire_structs():
        name = codegen.ts_name(shape)
        assert re.search(rf"^export (interface|type) {name}\b", source, re.M), shape
    assert "export interface RequestTypes {" in source


@pytest.fixture(scope="module")
def lua_side(make_nvim: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("nvim_protocol")
    script = tmp / "dump_protocol.lua"
    script.write_text(DUMP_LUA)
    proc = make_nvim(tmp).run(script, [str(NVIM_PLUGIN)], timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return dict(json.loads(proc.stdout))


def test_the_lua_mirror_loads_with_the_servers_names(lua_side: dict[str, Any]) -> None:
    assert sorted(lua_side["requests"].values()) == sorted(p.REQUESTS)
    assert sorted(lua_side["notifications"].values()) == sorted(p.NOTIFICATIONS)
    assert sorted(lua_side["server_requests"].values()) == sorted(p.SERVER_REQUESTS)
    assert lua_side["commands"] == sorted(p.COMMANDS)
    assert set(lua_side["errors"].values()) == {p.INVALID_PARAMS, p.REQUEST_FAILED,
                                                p.REQUEST_CANCELLED, p.SESSION_BUSY}
    assert (lua_side["version"], lua_side["experimental_key"],
            lua_side["approvals_capability"]) == (p.PROTOCOL_VERSION, p.EXPERIMENTAL_KEY,
                                                  p.APPROVALS_CAPABILITY)
    assert set(lua_side["approval_decisions"].values()) == set(get_args(p.ApprovalDecision))
    assert lua_side["memory_types"] == list(p.MEMORY_TYPES)
    assert lua_side["breakdown_categories"] == list(p.BREAKDOWN_CATEGORIES)


def quoted_methods(path: Path) -> list[str]:
    """Method names in string literals: ``'pseudoclaude/...'`` or ``"pseudoclaude/..."``."""
    return re.findall(r"""['"](pseudoclaude/[\w/]+)['"]""", path.read_text())


def test_clients_name_methods_only_in_their_protocol_module() -> None:
    lua = [q for q in NVIM_PLUGIN.rglob("*.lua") if q != codegen.LUA_PATH]
    ts = [q for q in (ROOT / "editors" / "vscode" / "src").rglob("*.ts") if q != codegen.TS_PATH]
    assert len(lua) >= 5 and len(ts) >= 10
    inline = {str(q.relative_to(ROOT)): quoted_methods(q) for q in lua + ts}
    assert not {k: v for k, v in inline.items() if v}, "use protocol.lua / protocol.ts names"
    assert quoted_methods(codegen.LUA_PATH) and quoted_methods(codegen.TS_PATH)
