"""The system prompt of a run: identity, rules, project instructions, the memory index (SPEC §6).

Instructions come from ``PSEUDOCLAUDE.md`` files, in this order: the user folder
(``~/.PseudoClaude/PSEUDOCLAUDE.md``), the workspace root, then ``<workspace>/.PseudoClaude/``.
A line ``@relative/path.md`` includes that file (relative to the including file), up to depth 5;
a cycle or a missing file is skipped with a note. An include must stay inside the folder tree
of the file set it belongs to (the workspace, or the user folder): a cloned repository cannot
pull ``~/.ssh/id_rsa`` into the prompt that is sent to the model provider.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pseudoclaude.llm.types import utf8_len

INSTRUCTIONS_FILE = "PSEUDOCLAUDE.md"
MAX_INCLUDE_DEPTH = 5
MAX_INSTRUCTION_BYTES = 64 * 1024
_INCLUDE = re.compile(r"^@(\S+)\s*$")

IDENTITY = """\
You are PseudoClaude, a coding agent working inside the user's editor on the project in the \
workspace folder {workspace}. You work with tools: read_file, write_file, edit_file, \
run_command, find_files and search_code. All paths are relative to the workspace folder."""

RULES = """\
Rules:
- Read before you change: look at the files involved before editing them, and re-read a file \
after a summary or a long pause before relying on its contents.
- Prefer small, precise edits (edit_file) over rewriting whole files.
- run_command runs one program with arguments and no shell; pipes, redirections and `&&` do \
not work. Use it for builds and tests.
- A tool result that was too large is saved to a file and replaced by a preview; read the file \
with read_file when you need the rest. Never guess content you have not read.
- When the task is done, answer with a short summary of what you did and anything left open. \
Do not claim work you did not do."""


@dataclass(frozen=True)
class InstructionSource:
    path: Path
    root: Path  # includes must stay inside this folder


def instruction_sources(workspace: Path, user_dir: Path | None) -> list[InstructionSource]:
    sources = []
    if user_dir is not None:
        sources.append(InstructionSource(user_dir / INSTRUCTIONS_FILE, user_dir))
    sources.append(InstructionSource(workspace / INSTRUCTIONS_FILE, workspace))
    sources.append(InstructionSource(workspace / ".PseudoClaude" / INSTRUCTIONS_FILE, workspace))
    return sources


def _read_text(path: Path) -> str:
    data = path.read_bytes()[:MAX_INSTRUCTION_BYTES]
    return data.decode("utf-8", "replace")


def expand(path: Path, root: Path, depth: int = 0, stack: tuple[Path, ...] = ()) -> str:
    """The text of ``path`` with its ``@includes`` expanded."""
    resolved = path.resolve()
    lines_out: list[str] = []
    for line in _read_text(resolved).splitlines():
        match = _INCLUDE.match(line.strip())
        if not match:
            lines_out.append(line)
            continue
        target = (resolved.parent / match.group(1)).resolve()
        name = match.group(1)
        if not target.is_relative_to(root.resolve()):
            lines_out.append(f"(include {name} skipped: outside {root})")
        elif target in stack or target == resolved:
            lines_out.append(f"(include {name} skipped: it includes itself)")
        elif depth + 1 > MAX_INCLUDE_DEPTH:
            lines_out.append(f"(include {name} skipped: nested deeper than "
                             f"{MAX_INCLUDE_DEPTH})")
        elif not target.is_file():
            lines_out.append(f"(include {name} skipped: not found)")
        else:
            lines_out.append(expand(target, root, depth + 1, (*stack, resolved)))
    return "\n".join(lines_out)


def load_instructions(sources: Sequence[InstructionSource]) -> list[tuple[Path, str]]:
    out = []
    for source in sources:
        try:
            if source.path.is_file():
                text = expand(source.path, source.root).strip()
                if text:
                    out.append((source.path, text))
        except OSError:
            continue  # unreadable instructions are skipped, never fatal
    return out


SEPARATOR = "\n\n"
MEMORY_HEADING = ("Memory (an index of notes kept across sessions; a note's file is in the "
                  "memory folder, read it when it matters):\n")


@dataclass(frozen=True)
class SystemPrompt:
    """The system prompt in the parts the context breakdown counts (SPEC §11)."""

    system: str
    """Identity and rules (the tool instructions)."""
    rules: tuple[str, ...] = ()
    """One block per ``PSEUDOCLAUDE.md`` file."""
    memory: str = ""
    """The memory section ("" when the index is empty)."""

    @property
    def text(self) -> str:
        return SEPARATOR.join([self.system, *self.rules, *([self.memory] if self.memory else [])])

    def sizes(self) -> tuple[int, int, int]:
        """UTF-8 bytes of ``(system, rules, memory)``, each block with the separator before
        it: they add up to the bytes of :attr:`text`."""
        gap = len(SEPARATOR)
        return (utf8_len(self.system), sum(gap + utf8_len(r) for r in self.rules),
                memory_section_bytes(self.memory))


def memory_section(memory_index: str) -> str:
    """The memory part of the system prompt for ``memory_index`` ("" when it is empty)."""
    index = memory_index.strip()
    return MEMORY_HEADING + index if index else ""


def memory_section_bytes(section: str) -> int:
    """Bytes the memory section adds to the system prompt (its separator included)."""
    return len(SEPARATOR) + utf8_len(section) if section else 0


def system_prompt_parts(workspace: Path, *, user_dir: Path | None = None,
                        memory_index: str = "") -> SystemPrompt:
    rules = tuple(f"Instructions from {path}:\n{text}"
                  for path, text in load_instructions(instruction_sources(workspace, user_dir)))
    return SystemPrompt(IDENTITY.format(workspace=workspace) + SEPARATOR + RULES, rules,
                        memory_section(memory_index))


def build_system_prompt(workspace: Path, *, user_dir: Path | None = None,
                        memory_index: str = "") -> str:
    return system_prompt_parts(workspace, user_dir=user_dir, memory_index=memory_index).text
