"""The decision table (tests/permission_table.py) through the LSP server: each row's mode set
with ``pseudoclaude/mode``, its rules in the user's ``permissions.yaml``, its call checked with
``pseudoclaude/permissions/check`` (the same rows run through the CLI and ACP)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from permission_table import ROWS, Row, permissions_yaml
from pseudoclaude.api.protocol import MODE, PERMISSIONS_CHECK


@pytest.fixture
def env(env: Any) -> Any:
    env.permission_settings = {"allowBypass": True}
    return env


def user_permissions(env: Any) -> Path:
    """The user's ``permissions.yaml``: the user-level folder is the parent of the user
    memory folder the tests set."""
    path: Path = env.tmp / "permissions.yaml"
    return path


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
async def test_the_decision_table(client: LanguageClient, env: Any, row: Row) -> None:
    user_permissions(env).write_text(permissions_yaml(row))
    await env.call(client, MODE, {"mode": row.mode})
    verdict = await env.call(client, PERMISSIONS_CHECK,
                             {"tool": row.tool, "arguments": row.arguments})
    assert verdict["decision"] == row.decision, verdict
    assert verdict["source"] == ("user" if row.source == "rule" else row.source), verdict
    assert verdict.get("rule") == row.rule


