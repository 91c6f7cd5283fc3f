"""The three copies of the wire protocol agree (SPEC §11 "Protocol as types").

``server/pseudoclaude/lsp/protocol.py`` is the source; ``editors/vscode/src/protocol.ts`` is read
from its source text (``Requests``, ``Notifications``, ``ErrorCodes``, ``PROTOCOL_VERSION``,
``EXPERIMENTAL_KEY``) and ``editors/nvim/lua/pseudoclaude/protocol.lua`` is loaded in the real
headless Neovim, which prints it as JSON. Requests, notifications, commands (``a/b`` -> ``a.b``)
and error codes must be the same sets, under the same names (``MEMORY_SHOW`` = ``memoryShow`` =
``memory_show``). Neither client spells a method name anywhere else. protocol.lua also names the
server → client requests, the approvals capability key and the decisions of approve and review.
"""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.api import protocol

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL_TS = ROOT / "editors" / "vscode" / "src" / "protocol.ts"
NVIM_PLUGIN = ROOT / "editors" / "nvim"
PROTOCOL_LUA = NVIM_PLUGIN / "lua" / "pseudoclaude" / "protocol.lua"

# Error codes: JSON-RPC's reserved -32768..-32000 and LSP's -32899..-32800.
ERROR_RANGE = range(-32899, -32000 + 1)

DUMP_LUA = """
vim.opt.rtp:prepend(assert(_G.arg[1]))
local p = require('pseudoclaude.protocol')
io.stdout:write(vim.json.encode({
  requests = p.requests, notifications = p.notifications, errors = p.errors,
  commands = p.commands, version = p.version, experimental_key = p.experimental_key,
  server_requests = p.server_requests, approvals_capability = p.approvals_capability,
  approve_decisions = p.approve_decisions, approve_kinds = p.approve_kinds,
  review_decisions = p.review_decisions,
}))
"""

Names = dict[str, Any]
"""A normalised name (``memoryshow``) -> its value (a method name or an error code)."""


def norm(name: str) -> str:
    return name.replace("_", "").lower()


def commands_of(requests: Names) -> set[str]:
    return {method.replace("/", ".") for method in requests.values()}


# -- the three sides ---------------------------------------------------------------------------


def python_side() -> dict[str, Any]:
    consts = {k: v for k, v in vars(protocol).items() if k.isupper()}

    def named(values: tuple[str, ...]) -> Names:
        found = {norm(k): v for k, v in consts.items() if isinstance(v, str) and v in values}
        assert sorted(found.values()) == sorted(values), "a method without its own constant"
        return found

    return {
        "requests": named(protocol.REQUESTS),
        "notifications": named(protocol.NOTIFICATIONS),
        "commands": set(protocol.COMMANDS),
        "errors": {norm(k): v for k, v in consts.items()
                   if type(v) is int and v in ERROR_RANGE},
        "version": protocol.PROTOCOL_VERSION,
        "experimental_key": protocol.EXPERIMENTAL_KEY,
    }


def ts_object(source: str, name: str) -> Names:
    """The entries of ``export const <name> = { key: 'value' | number, ... } as const;``."""
    block = re.search(rf"^export const {name} = \{{\n(.*?)^\}} as const;", source, re.M | re.S)
    assert block, f"protocol.ts has no `export const {name} = {{ ... }} as const;`"
    entries: Names = {}
    for line in block.group(1).splitlines():
        line = line.strip()
        if not line or line.startswith("//"):
            continue
        entry = re.fullmatch(r"(\w+): (?:'([^']*)'|(-?\d+)),?", line)
        assert entry, f"protocol.ts {name}: cannot read {line!r}"
        key, text, number = entry.groups()
        assert norm(key) not in entries, f"protocol.ts {name}: {key} twice"
        entries[norm(key)] = text if text is not None else int(number)
    return entries


def ts_const(source: str, name: str) -> Any:
    found = re.search(rf"^export const {name} = (?:'([^']*)'|(\d+));$", source, re.M)
    assert found, f"protocol.ts has no `export const {name} = ...;`"
    return found.group(1) if found.group(1) is not None else int(found.group(2))


def typescript_side() -> dict[str, Any]:
    source = PROTOCOL_TS.read_text()
    requests = ts_object(source, "Requests")
    return {
        "requests": requests,
        "notifications": ts_object(source, "Notifications"),
        # protocol.ts derives `Commands` the same way (checked by test/manifest.test.ts).
        "commands": commands_of(requests),
        "errors": ts_object(source, "ErrorCodes"),
        "version": ts_const(source, "PROTOCOL_VERSION"),
        "experimental_key": ts_const(source, "EXPERIMENTAL_KEY"),
    }


@pytest.fixture(scope="module")
def lua_side(make_nvim: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("nvim_protocol")
    script = tmp / "dump_protocol.lua"
    script.write_text(DUMP_LUA)
    proc = make_nvim(tmp).run(script, [str(NVIM_PLUGIN)], timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    return {
        "requests": {norm(k): v for k, v in data["requests"].items()},
        "notifications": {norm(k): v for k, v in data["notifications"].items()},
        "commands": set(data["commands"]),
        "errors": {norm(k): v for k, v in data["errors"].items()},
        "version": data["version"],
        "experimental_key": data["experimental_key"],
        "commands_list": data["commands"],
        "raw": data,
    }


# -- comparisons -------------------------------------------------------------------------------


def differences(what: str, sides: dict[str, Any]) -> list[str]:
    """One line per side that differs from the Python one: what it lacks and what it adds."""
    want = sides["protocol.py"]
    lines = []
    for side, got in sides.items():
        if got == want:
            continue
        if isinstance(want, dict | set):
            want_items = set(want.items()) if isinstance(want, dict) else set(want)
            got_items = set(got.items()) if isinstance(got, dict) else set(got)
            lines.append(f"{what}: {side} lacks {sorted(want_items - got_items)}, "
                         f"has extra {sorted(got_items - want_items)}")
        else:
            lines.append(f"{what}: {side} has {got!r}, protocol.py {want!r}")
    return lines


@pytest.mark.parametrize("what", ["requests", "notifications", "commands", "errors", "version",
                                  "experimental_key"])
def test_the_three_protocols_agree(what: str, lua_side: dict[str, Any]) -> None:
    sides = {"protocol.py": python_side()[what], "protocol.ts": typescript_side()[what],
             "protocol.lua": lua_side[what]}
    assert not differences(what, sides), "\n".join(differences(what, sides))


def test_every_request_is_a_command(lua_side: dict[str, Any]) -> None:
    py = python_side()
    assert list(protocol.COMMANDS) == [m.replace("/", ".") for m in protocol.REQUESTS]
    assert protocol.Capability().commands == list(protocol.COMMANDS)
    assert set(py["requests"].values()) == set(protocol.PARAMS), "a request without params shape"
    assert lua_side["commands_list"] == sorted(lua_side["commands"]), "protocol.lua commands"
    assert len(lua_side["commands_list"]) == len(lua_side["requests"])


def literal_values(annotation: Any) -> set[str]:
    """The strings of a ``Literal[...]`` annotation."""
    return set(typing.get_args(annotation))


def test_nvim_server_requests_and_approval_shapes(lua_side: dict[str, Any]) -> None:
    """protocol.lua's server → client requests, the approvals capability key and the values of
    the approve and review decisions are the server's (SPEC §11 "Diff approvals", "Memory with
    consent")."""
    raw = lua_side["raw"]
    assert set(raw["server_requests"].values()) == set(protocol.SERVER_REQUESTS)
    assert {norm(k) for k in raw["server_requests"]} == {
        norm(k) for k, v in vars(protocol).items() if k.isupper() and v in protocol.SERVER_REQUESTS}
    assert raw["approvals_capability"] == protocol.APPROVALS_CAPABILITY
    hints = typing.get_type_hints(protocol.ApproveResult)
    assert set(raw["approve_decisions"].values()) == literal_values(hints["decision"])
    assert set(raw["approve_kinds"].values()) == literal_values(
        typing.get_type_hints(protocol.ApproveParams)["kind"])
    assert set(raw["review_decisions"].values()) == literal_values(
        typing.get_type_hints(protocol.ReviewParams)["decision"])


def quoted_methods(path: Path) -> list[str]:
    """Method names in string literals: ``'pseudoclaude/...'`` or ``"pseudoclaude/..."``."""
    return re.findall(r"""['"](pseudoclaude/[\w/]+)['"]""", path.read_text())


def test_clients_name_methods_only_in_their_protocol_module() -> None:
    lua = [p for p in NVIM_PLUGIN.rglob("*.lua") if p != PROTOCOL_LUA]
    ts = [p for p in (ROOT / "editors" / "vscode" / "src").rglob("*.ts") if p != PROTOCOL_TS]
    assert len(lua) >= 5 and len(ts) >= 10
    inline = {str(p.relative_to(ROOT)): quoted_methods(p) for p in lua + ts}
    assert not {k: v for k, v in inline.items() if v}, "use protocol.lua / protocol.ts names"
    assert quoted_methods(PROTOCOL_LUA) and quoted_methods(PROTOCOL_TS)



def ts_union(source: str, pattern: str) -> set[str]:
    """The string literals of a TypeScript union found by ``pattern`` (one group)."""
    found = re.search(pattern, source, re.M)
    assert found, f"protocol.ts: nothing matches {pattern!r}"
    return set(re.findall(r"'([^']*)'", found.group(1)))


def test_typescript_server_requests_and_approval_shapes() -> None:
    """protocol.ts's server → client requests, the approvals capability key and the values of
    the approve kinds and the approve and review decisions are the server's."""
    source = PROTOCOL_TS.read_text()
    assert set(ts_object(source, "ServerRequests").values()) == set(protocol.SERVER_REQUESTS)
    assert ts_const(source, "APPROVALS_CAPABILITY") == protocol.APPROVALS_CAPABILITY
    assert ts_union(source, r"^export type ApprovalDecision = ([^;]+);") == literal_values(
        typing.get_type_hints(protocol.ApproveResult)["decision"])
    assert ts_union(source, r"^  kind: ('write' \| 'runCommand');") == literal_values(
        typing.get_type_hints(protocol.ApproveParams)["kind"])
    assert ts_union(source, r"^  decision: ('accept' \| 'reject');") == literal_values(
        typing.get_type_hints(protocol.ReviewParams)["decision"])
