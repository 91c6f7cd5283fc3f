"""The system prompt of a run: identity, rules, instruction files, the skill list, the memory
index (SPEC §6, §13).

Which instruction files (``PSEUDOCLAUDE.md``, ``AGENTS.md``, ``CLAUDE.md``...) it carries, in
which order, and how their ``@path`` includes expand: :mod:`pseudoclaude.agent.instructions`.
The skill list (names and descriptions only): :func:`pseudoclaude.skills.listing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pseudoclaude.agent.instructions import Instruction, instruction_files, load_instructions
from pseudoclaude.compact.breakdown import RuleSize
from pseudoclaude.llm.types import utf8_len

IDENTITY = """\
You are PseudoClaude, a coding agent working inside the user's editor on the project in the \
workspace folder {workspace}. You work with the tools you are offered; each tool's description \
says what it does. All paths are relative to the workspace folder."""

RULES = """\
Rules:
- Read before you change: look at the files involved before editing them, and re-read a file \
after a summary or a long pause before relying on its contents.
- Prefer small, precise edits (edit_file) over rewriting whole files.
- run_command takes a shell line in `command` (run with /bin/sh -c: pipes, redirections and \
`&&` work), or a program in `command` with its arguments in `args` (no shell). Use it for \
builds and tests.
- A tool result that was too large is saved to a file and replaced by a preview; read the file \
with read_file when you need the rest. Never guess content you have not read.
- When the task is done, answer with a short summary of what you did and anything left open. \
Do not claim work you did not do."""


SEPARATOR = "\n\n"
MEMORY_HEADING = ("Memory (an index of notes kept across sessions; a note's file is in the "
                  "memory folder, read it when it matters):\n")


@dataclass(frozen=True)
class SystemPrompt:
    """The system prompt in the parts the context breakdown counts (SPEC §11)."""

    system: str
    """Identity and rules (the tool instructions)."""
    rules: tuple[Instruction, ...] = ()
    """One block per instruction file."""
    memory: str = ""
    """The memory section ("" when the index is empty)."""
    skills: str = ""
    """The "Available Skills" section ("" when there are none), after the rules."""

    @property
    def text(self) -> str:
        return SEPARATOR.join([self.system, *(r.block for r in self.rules),
                               *([self.skills] if self.skills else []),
                               *([self.memory] if self.memory else [])])

    def sizes(self) -> tuple[int, int, int, int]:
        """UTF-8 bytes of ``(system, rules, memory, skills)``, each block with the separator
        before it: they add up to the bytes of :attr:`text`."""
        return (utf8_len(self.system), sum(r.bytes for r in self.rule_sizes()),
                memory_section_bytes(self.memory), memory_section_bytes(self.skills))

    def rule_sizes(self) -> tuple[RuleSize, ...]:
        """The bytes of each instruction file's block, its separator included."""
        gap = len(SEPARATOR)
        return tuple(RuleSize(r.label, r.source, gap + utf8_len(r.block)) for r in self.rules)


def memory_section(memory_index: str) -> str:
    """The memory part of the system prompt for ``memory_index`` ("" when it is empty)."""
    index = memory_index.strip()
    return MEMORY_HEADING + index if index else ""


def memory_section_bytes(section: str) -> int:
    """Bytes the memory section (or another optional section) adds to the system prompt (its
    separator included)."""
    return len(SEPARATOR) + utf8_len(section) if section else 0


def system_prompt_parts(workspace: Path, *, user_dir: Path | None = None,
                        memory_index: str = "", nested: Sequence[str] = (),
                        nested_root: Path | None = None, skills: str = "") -> SystemPrompt:
    """The system prompt (blocking: reads the instruction files). ``nested``: the subfolders'
    files the session joined, read under ``nested_root`` (its worktree; default:
    ``workspace``); ``skills``: the skill list (:func:`pseudoclaude.skills.listing`)."""
    rules = tuple(load_instructions(instruction_files(workspace, user_dir, nested,
                                                      nested_root)))
    return SystemPrompt(IDENTITY.format(workspace=workspace) + SEPARATOR + RULES, rules,
                        memory_section(memory_index), skills.strip())


def build_system_prompt(workspace: Path, *, user_dir: Path | None = None,
                        memory_index: str = "", nested: Sequence[str] = ()) -> str:
    return system_prompt_parts(workspace, user_dir=user_dir, memory_index=memory_index,
                               nested=nested).text
