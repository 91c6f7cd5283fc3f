"""The slash commands every chat offers, defined once (``pseudoclaude/commands``).

The VS Code chat, the Neovim chat and ACP's ``available_commands_update`` all list these, with
these words, and each runs a command by the request named here. Commands of capabilities this
server does not have are not listed (a chat never offers what cannot run). After them come the
folder's skills (``/review src``: ``skill: true``), which a chat sends as a prompt: the server
turns it into the skill's instructions. A skill named as a command here has no command.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from msgspec import UNSET

from pseudoclaude.api import protocol as p
from pseudoclaude.rewind import MODES, Mode
from pseudoclaude.skills import Skill


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    request: str
    """The request the command runs (its text after the name is the request's ``arg``)."""
    hint: str | None = None
    arg: str | None = None
    """The params field the text after the name goes into."""
    preset: tuple[tuple[str, bool | str], ...] = ()
    """Params the command always sends."""

    def wire(self) -> p.SlashCommand:
        return p.SlashCommand(name=self.name, description=self.description,
                              hint=self.hint if self.hint is not None else UNSET)


COMMANDS: tuple[Command, ...] = (
    Command("compact", "Summarize the earlier conversation now to free context", p.COMPACT,
            hint="what the summary should focus on (optional)", arg="instructions"),
    Command("undo", "Bring back what the last compaction summarized", p.COMPACT_UNDO),
    Command("context", "Show what fills the context window", p.CONTEXT),
    Command("status", "Show the session, its mode and model, tokens, the sandbox, MCP servers, "
            "hooks and skills", p.STATUS),
    Command("memory", "Show the memory index the model sees, and the notes", p.MEMORY_SHOW),
    Command("rewind", "Take the code, the conversation or both back to before a prompt",
            p.REWIND, hint="a prompt's number, then code, conversation or both (none: list "
            "the prompts)"),
    Command("mcp", "Show the MCP servers, their status and tools", p.MCP_LIST),
    Command("hooks", "Show the hooks: their event, where each is defined and whether it runs",
            p.HOOKS_LIST),
    Command("new", "Start a new session", p.SESSIONS_NEW),
    Command("worktree", "Start a new session in a git worktree of its own (its changes reach "
            "the folder when you apply them)", p.SESSIONS_NEW, preset=(("worktree", True),)),
    Command("plan", "Plan before acting: only reading tools run until you approve a plan",
            p.MODE, preset=(("mode", "plan"),)),
    Command("do", "Leave plan mode: the agent may act again (default mode)", p.MODE,
            preset=(("mode", "default"),)),
)
BY_NAME = {c.name: c for c in COMMANDS}


def parse(text: str) -> tuple[Command, str] | None:
    """``(command, argument)`` when ``text`` is one of :data:`COMMANDS` (``/compact focus on
    X``); other text, unknown ``/words`` included, is a prompt for the model."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    head, _, rest = stripped[1:].partition(" ")
    name, _, more = head.partition("\n")
    command = BY_NAME.get(name)
    if command is None:
        return None
    return command, f"{more} {rest}".strip()


def params(command: Command, argument: str) -> dict[str, str | bool]:
    """The request params of a command and its argument."""
    given: dict[str, str | bool] = dict(command.preset)
    if command.arg and argument:
        given[command.arg] = argument
    return given


def rewind_arguments(argument: str) -> tuple[int | None, Mode | None]:
    """``/rewind [turn] [code|conversation|both]``: the turn and the mode named (None where
    none is); ``ValueError`` naming what is wrong otherwise."""
    turn: int | None = None
    mode: Mode | None = None
    for word in argument.split():
        if word.isdigit() and turn is None and int(word) > 0:
            turn = int(word)
        elif word in MODES and mode is None:
            mode = word
        else:
            raise ValueError(f"/rewind takes a prompt's number and one of {', '.join(MODES)}; "
                             f"{word!r} is neither")
    return turn, mode


def skill_commands(skills: Sequence[Skill]) -> list[p.SlashCommand]:
    """The ``/<name>`` commands of skills the user may run (not those named as a command)."""
    return [p.SlashCommand(name=s.name, description=s.description,
                           hint=s.argument_hint or UNSET, skill=True)
            for s in skills if s.user_invocable and s.name not in BY_NAME]


def listing(skills: Sequence[Skill] = ()) -> p.CommandsResult:
    return p.CommandsResult(commands=[*(c.wire() for c in COMMANDS), *skill_commands(skills)])
