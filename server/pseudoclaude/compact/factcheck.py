"""The summary fact check (SPEC §11): a mechanical check of a summary against the part of the
conversation it replaces, with no second model call.

The facts of the replaced part are the text of every user prompt (not tool results, not an
earlier summary), every path that a successful ``write_file`` or ``edit_file`` changed, and
the last user prompt. The items of an earlier ``Carried facts`` section (inside an earlier
summary) count as facts again, so repeated compactions keep them. A fact is present when its
text, whitespace collapsed, is a substring of the summary, whitespace collapsed. The summary
gets a section under :data:`HEADING` listing user prompts newest first within a budget of
4,000 tokens, all changed paths,
and the last user prompt always (outside the budget): what the summary lacked is thereby
carried, and what it held stays known to the next check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pseudoclaude.compact.estimate import tokens_for_bytes
from pseudoclaude.conversation.summary import is_summary
from pseudoclaude.events import FactCheck
from pseudoclaude.llm.types import Message

HEADING = "Carried facts (checked by the server)"
PROMPTS_HEADING = "User prompts (newest first):"
PATHS_HEADING = "Changed files:"
PROMPT_BUDGET_TOKENS = 4_000
WRITE_TOOLS = frozenset({"write_file", "edit_file"})


@dataclass
class Facts:
    prompts: list[str] = field(default_factory=list)
    """User prompts, oldest first (each once)."""
    paths: list[str] = field(default_factory=list)
    """Changed paths, in the order first changed (each once)."""

    @property
    def last_prompt(self) -> str | None:
        return self.prompts[-1] if self.prompts else None


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _add(items: list[str], value: str) -> None:
    value = value.strip()
    if value and _collapse(value) not in {_collapse(v) for v in items}:
        items.append(value)


def carried_items(summary_text: str) -> Facts:
    """The items of the ``Carried facts`` section of an earlier summary message."""
    facts = Facts()
    start = summary_text.rfind(HEADING)
    if start < 0:
        return facts
    target: list[str] | None = None
    for line in summary_text[start + len(HEADING):].splitlines():
        if line.strip() == PROMPTS_HEADING:
            target = facts.prompts
        elif line.strip() == PATHS_HEADING:
            target = facts.paths
        elif line.startswith("- ") and target is not None:
            _add(target, line[2:])
        elif line.strip() and not line.startswith("  "):
            target = None
    facts.prompts.reverse()  # the section lists them newest first
    return facts


def gather(messages: Sequence[Message]) -> Facts:
    """The facts of ``messages`` (the part a compaction replaces)."""
    facts = Facts()
    writes: dict[str, str] = {}  # call id -> path of a write/edit call
    for message in messages:
        if message.role == "user" and message.tool_result is None and message.content:
            if is_summary(message):
                earlier = carried_items(message.content)
                for prompt in earlier.prompts:
                    _add(facts.prompts, prompt)
                for carried in earlier.paths:
                    _add(facts.paths, carried)
            else:
                _add(facts.prompts, message.content)
        for call in message.tool_calls:
            if call.name in WRITE_TOOLS and isinstance(call.arguments, dict):
                target = call.arguments.get("path")
                if isinstance(target, str) and target.strip():
                    writes[call.id] = target
        result = message.tool_result
        if result is not None and not result.is_error and result.call_id in writes:
            _add(facts.paths, writes[result.call_id])
    return facts


@dataclass(frozen=True)
class Checked:
    summary: str
    """The summary with the carried facts appended (unchanged when nothing was missing)."""
    counts: FactCheck


def check(summary: str, facts: Facts, budget_tokens: int = PROMPT_BUDGET_TOKENS) -> Checked:
    """Check ``summary`` against ``facts`` and append the ``Carried facts`` section.

    The section lists every changed path and the user prompts newest first within
    ``budget_tokens`` (the last prompt always, outside the budget), whether the summary holds
    them or not: a fact the model kept word for word this time would otherwise be known to no
    later check, and a later summary could drop it unnoticed. ``added`` counts the listed items
    the summary lacked (what the server brought back); ``missing`` all it lacked.
    """
    haystack = _collapse(summary)

    def present(item: str) -> bool:
        return _collapse(item) in haystack

    newest_first = list(reversed(facts.prompts))
    missing_items = {p for p in newest_first if not present(p)} | {
        p for p in facts.paths if not present(p)}
    checked = len(facts.prompts) + len(facts.paths)
    listed: list[str] = []
    last = facts.last_prompt
    used = 0
    for prompt in newest_first:
        size = tokens_for_bytes(len(prompt.encode("utf-8", "surrogatepass")))
        if prompt == last:
            listed.append(prompt)
        elif used + size <= budget_tokens:
            listed.append(prompt)
            used += size
    if not listed and not facts.paths:
        return Checked(summary, FactCheck(checked=checked, missing=len(missing_items)))
    lines = [summary.rstrip(), "", HEADING]
    if listed:
        lines.append(PROMPTS_HEADING)
        lines += [f"- {_collapse(p)}" for p in listed]
    if facts.paths:
        lines.append(PATHS_HEADING)
        lines += [f"- {_collapse(p)}" for p in facts.paths]
    added = sum(item in missing_items for item in [*listed, *facts.paths])
    return Checked("\n".join(lines), FactCheck(checked=checked, missing=len(missing_items),
                                               added=added))
