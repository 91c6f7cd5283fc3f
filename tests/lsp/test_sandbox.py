"""A real bubblewrap sandbox through the LSP server (SPEC §13 "Sandbox"): a command writes in
the workspace but not outside it, has no network, runs without asking (``sandbox.autoAllow``),
and its result says ``sandboxed: true`` (what else it hides: tests/unit/sandbox). Skipped only
where ``bwrap`` cannot run."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import CONTEXT, PERMISSIONS, RUN
from pseudoclaude.sandbox import probe

pytestmark = pytest.mark.skipif(not probe().enabled, reason="bwrap cannot run here")


@pytest.fixture
def env(env: Any) -> Any:
    env.sandbox_settings = {"enabled": True}  # autoAllow (the default): sandboxed, unasked
    return env


async def test_a_sandboxed_command_stays_in_its_workspace(client: LanguageClient,
                                                           env: Any) -> None:
    outside = env.tmp / "outside.txt"
    line = (f"echo inside > inside.txt && echo outside > {outside} && "
            "(getent hosts example.com || echo no-network)")
    env.fake.add_turns({"tool_calls": [{"name": "run_command",
                                        "arguments": {"command": line}}]}, {"text": "done"})
    listing = await env.call(client, PERMISSIONS, {})
    assert listing["sandbox"]["enabled"] is True, listing["sandbox"]
    context = await env.call(client, CONTEXT, {})
    assert context["sandbox"]["enabled"] is True
    await env.call(client, RUN, {"prompt": "write both"})
    [envelope] = env.envelopes()
    assert envelope["metadata"]["sandboxed"] is True, envelope
    assert (env.folders[0] / "inside.txt").read_text() == "inside\n"
    assert not outside.exists()  # written in the sandbox's own /tmp, gone with it
    assert "no-network" in envelope["content"]
    assert env.approvals == []  # sandboxed and named by no rule: ran without asking
