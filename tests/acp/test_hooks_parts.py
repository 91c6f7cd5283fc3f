"""ACP and hooks: a folder's ``hooks.yaml`` is asked with ``session/request_permission`` (each
hook and what it runs; no "always allow <rule>"), a refused prompt is ACP's ``refusal``, and
``/hooks`` answers with the server's listing."""

from __future__ import annotations

from pathlib import Path

from pseudoclaude.acp import permission, slash
from pseudoclaude.acp.updates import STOP_REASONS
from pseudoclaude.agent.approvals import ApprovalHook
from pseudoclaude.api import protocol as p
from pseudoclaude.events import StopReason
from pseudoclaude.workspace import ApprovalRequest


def test_a_hooks_file_is_asked_with_each_hook() -> None:
    request = ApprovalRequest.hooks_file(".PseudoClaude/hooks.yaml", [
        ApprovalHook("lint", "PostToolUse", "shell: npm run lint")])
    assert [o.option_id for o in permission.options(request)] == [
        "allow_once", "allow_session", "deny"]
    [content] = permission.diff(request, Path("/w")) or []
    text = content.content.text  # type: ignore[union-attr]
    assert text.startswith("This folder's .PseudoClaude/hooks.yaml has hooks that would run")
    assert "- lint (PostToolUse): shell: npm run lint" in text


def test_a_refused_prompt_is_a_refusal_and_hooks_shows_the_listing() -> None:
    assert STOP_REASONS[StopReason.BLOCKED] == "refusal"
    listing = p.HooksListResult(hooks=[], text="Stop:\n  notify  shell: true  (the hooks "
                                               "setting): runs")
    assert slash.shown(listing) == f"```text\n{listing.text}\n```"
    assert "hooks" in [c.name for c in slash.COMMANDS]
