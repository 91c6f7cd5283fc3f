"""Hooks: the user's own commands, requests and texts, run at points of a session's life
(docs/hooks.md).

Pure core (no front end, no workspace): which hooks there are and what is wrong with the others
(:mod:`.model`, :mod:`.config`, :mod:`.conditions`), running one (:mod:`.actions`), what it
answered (:mod:`.answer`, Claude Code's JSON in both forms), firing an event and combining the
answers (:mod:`.dispatch`), and the events of one session with their payloads
(:mod:`.session`). Where the hooks come from, and the user's approval of a workspace's own
``hooks.yaml``, is the workspace's (``pseudoclaude.workspace.hooks``).
"""

from __future__ import annotations

from pseudoclaude.hooks.answer import HookAnswer, HookDecision, read_answer
from pseudoclaude.hooks.config import FILE_NAME, load_file, parse_entries, parse_text
from pseudoclaude.hooks.dispatch import Decided, Dispatcher, Outcome
from pseudoclaude.hooks.model import (
    BLOCKING,
    EVENTS,
    SOURCES,
    Hook,
    HookEvent,
    Loaded,
    Problem,
    Source,
    Status,
)
from pseudoclaude.hooks.session import AgentHooks, SessionHooks, ToolHooks

__all__ = [
    "BLOCKING",
    "EVENTS",
    "FILE_NAME",
    "SOURCES",
    "AgentHooks",
    "Decided",
    "Dispatcher",
    "Hook",
    "HookAnswer",
    "HookDecision",
    "HookEvent",
    "Loaded",
    "Outcome",
    "Problem",
    "SessionHooks",
    "Source",
    "Status",
    "ToolHooks",
    "load_file",
    "parse_entries",
    "parse_text",
    "read_answer",
]
