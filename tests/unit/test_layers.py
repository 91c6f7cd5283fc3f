"""The import contracts (``[tool.importlinter]`` of pyproject.toml) place every module of the
package: each is in a layer; each but the LSP server and the demo is kept from pygls, each but
the ACP agent from the ACP SDK; each is a front end, part of the interface front ends use, or
forbidden to them. A package added later fails here until it is placed (``lint-imports`` alone
would not notice a module that no contract names)."""

from __future__ import annotations

import importlib.util
import pkgutil
import re
import tomllib
from pathlib import Path
from typing import Any

import pseudoclaude

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
FRONT_END_INTERFACE = {
    "pseudoclaude.api", "pseudoclaude.workspace", "pseudoclaude.config", "pseudoclaude.errors",
    "pseudoclaude.events", "pseudoclaude.names", "pseudoclaude.words", "pseudoclaude.redact",
    "pseudoclaude.durable",
}
"""What the LSP server, the ACP agent and the CLI may import of the package."""
ENTRY_POINT = "pseudoclaude.__main__"
"""``python -m pseudoclaude``: no front end imports it."""


def modules() -> set[str]:
    """The modules and packages right under ``pseudoclaude``."""
    return {f"pseudoclaude.{m.name}" for m in pkgutil.iter_modules(pseudoclaude.__path__)}


def contracts() -> list[dict[str, Any]]:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    return found


def forbidding(module: str) -> dict[str, Any]:
    """The one forbidden contract whose forbidden modules include ``module``."""
    [contract] = [c for c in contracts()
                  if c["type"] == "forbidden" and module in c["forbidden_modules"]]
    return contract


def front_ends_contract() -> dict[str, Any]:
    [contract] = [c for c in contracts() if c["type"] == "forbidden"
                  and {"pseudoclaude.lsp", "pseudoclaude.acp", "pseudoclaude.cli"}
                  == set(c["source_modules"])]
    return contract


def layered() -> list[str]:
    [layers] = [c["layers"] for c in contracts() if c["type"] == "layers"]
    return [name.strip() for layer in layers for name in re.split(r"[:|]", layer)]


def named() -> set[str]:
    """Every module of the package a contract names (ignored imports: both sides)."""
    names = set(layered())
    for contract in contracts():
        for key in ("source_modules", "forbidden_modules", "modules"):
            names.update(contract.get(key, []))
        for line in contract.get("ignore_imports", []):
            names.update(side.strip() for side in line.split("->"))
    return {name for name in names if name.split(".")[0] == "pseudoclaude"}


def test_every_module_a_contract_names_exists() -> None:
    missing = sorted(name for name in named() if importlib.util.find_spec(name) is None)
    assert missing == []


def test_every_module_is_in_one_layer() -> None:
    names = layered()
    assert sorted(modules() - set(names)) == []
    assert len(names) == len(set(names))


def test_only_the_lsp_server_and_the_demo_may_import_pygls() -> None:
    sources = forbidding("pygls")["source_modules"]
    assert sorted(modules() - {"pseudoclaude.lsp", "pseudoclaude.demo"}) == sorted(sources)
    assert "lsprotocol" in forbidding("pygls")["forbidden_modules"]


def test_only_the_acp_agent_may_import_the_acp_sdk() -> None:
    sources = forbidding("acp")["source_modules"]
    assert sorted(modules() - {"pseudoclaude.acp"}) == sorted(sources)


def test_front_ends_import_the_public_interface_only() -> None:
    contract = front_ends_contract()
    fronts, forbidden = set(contract["source_modules"]), set(contract["forbidden_modules"])
    placed = [fronts, forbidden, FRONT_END_INTERFACE, {ENTRY_POINT}]
    assert sorted(modules() - set().union(*placed)) == []  # a new module: place it
    assert sum(len(group) for group in placed) == len(set().union(*placed))  # once each
    assert str(contract.get("allow_indirect_imports")).lower() == "true"  # through workspace
    ignored = {line.split("->")[0].strip() for line in contract.get("ignore_imports", [])}
    assert ignored <= {"pseudoclaude.cli"}  # only the entry point's lazy dispatch
