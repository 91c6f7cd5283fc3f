"""``load_skill{name}``, ``install_skill{source}`` and the tools of a loaded skill's
``tools.json`` (SPEC §13 "Hooks and skills").

``load_skill`` returns a skill's instructions (read again from its file, ``$ARGUMENTS``
empty), ending with the Go original's ``loaded skill "<name>" (<n> specialized tools
registered)``, and marks it loaded in the session; its ``tools.json`` tools are offered from
then on. (The instructions are in the result only: not repeated with each request.)
It reads only and runs unasked in every mode (plan mode included). A skill the user alone may
run (``disable-model-invocation``) or no skill of that name is ``unknown_skill``.

``install_skill`` installs a zip file or a folder into the user's skills folder
(:mod:`pseudoclaude.skills.install`). It asks first, in every mode but ``bypassPermissions``,
every time (an approval of kind ``write`` whose ``path`` is where it goes and whose ``after``
lists the files, with the ``SKILL.md`` and ``tools.json`` to install); a refused package is
``install_failed`` and nothing is written.

A skill's tool runs ``command`` (its program a file of the skill's folder) in the workspace,
the call's arguments as JSON on stdin, killed after :data:`TOOL_TIMEOUT` seconds, in the
sandbox when commands are; the permission engine judges it as the ``run_command`` of that
program and its arguments (the approval shows that command line), so a repository's skill
runs nothing unasked. Its environment has ``CLAUDE_SKILL_DIR``, the skill's folder.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pseudoclaude.agent.tools.base import (
    ApprovalClass,
    Param,
    Preview,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
)
from pseudoclaude.agent.tools.command import run_process
from pseudoclaude.llm.provider import ToolSpec
from pseudoclaude.names import plural
from pseudoclaude.skills import InstallError, Package, SkillTool, block, inspect, install

if TYPE_CHECKING:
    from pseudoclaude.agent.skills import SessionSkills

TOOL_TIMEOUT = 30.0
"""Seconds a skill's tool may run."""


def _skills(ctx: ToolContext, tool: str) -> SessionSkills:
    if ctx.skills is None:
        raise ToolError("not_configured", f"{tool}: skills are not available here")
    return ctx.skills


class LoadSkill(Tool):
    name: ClassVar[str] = "load_skill"
    description: ClassVar[str] = (
        "Load a listed skill: returns its full instructions, to follow. A skill may add tools "
        "of its own."
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("name", "string", "The skill's name.", required=True, non_empty=True),
    )
    read_only: ClassVar[bool] = True
    approval_class: ClassVar[ApprovalClass] = "none"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        skills = _skills(ctx, self.name)
        catalog = await asyncio.to_thread(skills.catalog)
        name = args["name"].strip().removeprefix("/")
        skill = catalog.get(name)
        known = ", ".join(s.name for s in catalog.listed) or "none"
        if skill is None:
            raise ToolError("unknown_skill", f'unknown skill "{name}"; the skills you may '
                                             f"load: {known}")
        if not skill.model_invocable:
            raise ToolError("unknown_skill", f'the skill "{name}" is run by the user only '
                                             f"(/{name}); the skills you may load: {known}")
        text = block(skill, session_id=skills.session_id,
                     folder_label=skills.folder_label(skill))
        skills.mark(skill.name)
        tools = [tool.name for tool in skill.tools]
        text += (f'\n\nloaded skill "{skill.name}" ({plural(len(tools), "specialized tool")} '
                 "registered" + (f": {', '.join(tools)})" if tools else ")"))
        return ToolOutput(text, {"skill": skill.name, "source": skill.source, "tools": tools})


class InstallSkill(Tool):
    name: ClassVar[str] = "install_skill"
    description: ClassVar[str] = (
        "Install a skill package (a zip file or a folder with a SKILL.md) into the user's "
        "~/.PseudoClaude/skills/, for every project; the user is asked first. No URLs."
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("source", "string", "The zip file or folder (relative to the workspace, or "
              "absolute).", required=True, non_empty=True),
    )
    read_only: ClassVar[bool] = False
    approval_class: ClassVar[ApprovalClass] = "write"

    @staticmethod
    def _source(args: Mapping[str, Any], ctx: ToolContext) -> Path | str:
        text = str(args["source"]).strip()
        if "://" in text:
            return text  # refused as a URL
        given = Path(text).expanduser()
        return given if given.is_absolute() else ctx.paths.workspace / given

    async def _inspect(self, args: Mapping[str, Any], ctx: ToolContext
                       ) -> tuple[Package, str]:
        skills = _skills(ctx, self.name)
        try:
            package = await asyncio.to_thread(inspect, self._source(args, ctx))
        except InstallError as exc:
            raise ToolError("install_failed", f"install_skill: {exc}; nothing was "
                                              "installed") from None
        target = skills.install_dir / package.name
        if os.path.lexists(target):
            raise ToolError("install_failed", f"install_skill: a skill named "
                            f"{package.name!r} is installed already ({skills.label(target)}): "
                            "nothing was installed")
        return package, skills.label(target)

    async def prepare(self, args: dict[str, Any], ctx: ToolContext) -> Preview:
        """Where it goes, and what: its files, its ``SKILL.md`` and ``tools.json``."""
        package, target = await self._inspect(args, ctx)
        return Preview(path=target, before="", after=package.manifest(target), state=package)

    async def apply(self, args: dict[str, Any], ctx: ToolContext, preview: Preview
                    ) -> ToolOutput:
        package = preview.state
        if not isinstance(package, Package):
            return await self.run(args, ctx)
        return await self._install(package, ctx)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        package, _ = await self._inspect(args, ctx)
        return await self._install(package, ctx)

    async def _install(self, package: Package, ctx: ToolContext) -> ToolOutput:
        skills = _skills(ctx, self.name)
        try:
            path = await asyncio.to_thread(install, package, skills.install_dir)
        except (InstallError, OSError) as exc:
            raise ToolError("install_failed", f"install_skill: {exc}; nothing was "
                                              "installed") from None
        await asyncio.to_thread(skills.catalog)  # known from now on
        label = skills.label(path)
        return ToolOutput(f'installed skill package "{package.name}" at {label}: load it with '
                          f'load_skill, or the user runs it as /{package.name}',
                          {"skill": package.name, "path": str(path),
                           "files": len(package.files)})


class SkillCommand(Tool):
    """A tool of a skill's ``tools.json`` (one subclass per tool: :func:`skill_tool`)."""

    name: ClassVar[str] = "skill_tool"
    description: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    read_only: ClassVar[bool] = False
    approval_class: ClassVar[ApprovalClass] = "runCommand"
    tool: ClassVar[SkillTool]

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description,
                        input_schema=self.tool.input_schema)

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Any JSON object with the schema's required keys (the program checks the rest)."""
        if not isinstance(arguments, Mapping):
            raise ToolError("invalid_arguments", f"{self.name}: the arguments are not a JSON "
                                                 "object")
        required = self.tool.input_schema.get("required", [])
        for key in required if isinstance(required, list) else []:
            if key not in arguments:
                raise ToolError("invalid_arguments",
                                f"{self.name}: missing required argument `{key}`")
        return dict(arguments)

    def argv(self) -> list[str]:
        return [str(self.tool.program), *self.tool.command[1:]]

    def as_command(self) -> dict[str, Any]:
        """The ``run_command`` arguments the permission engine judges."""
        program, *rest = self.argv()
        return {"command": program, "args": rest}

    async def prepare(self, args: dict[str, Any], ctx: ToolContext) -> Preview:
        return Preview(command=shlex.join(self.argv()), cwd=str(ctx.paths.workspace))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        program, *rest = self.argv()
        environment = {**os.environ, "CLAUDE_SKILL_DIR": str(self.tool.folder)}
        output = await run_process(program, rest, cwd=ctx.paths.workspace, timeout=TOOL_TIMEOUT,
                                   env=environment, sandbox=ctx.sandbox,
                                   stdin=json.dumps(args, ensure_ascii=False).encode())
        output.metadata = {**(output.metadata or {}), "skill": self.tool.skill}
        return output


_MADE: dict[tuple[str, ...], SkillCommand] = {}


def skill_tool(tool: SkillTool) -> SkillCommand:
    """The tool of ``tool`` (one per name, description, command and schema)."""
    key = (tool.skill, tool.name, tool.description, str(tool.folder), *tool.command,
           json.dumps(tool.input_schema, sort_keys=True, default=str))
    made = _MADE.get(key)
    if made is None:
        kind = type(f"SkillTool_{tool.name}", (SkillCommand,),
                    {"name": tool.name, "description": f"{tool.description} (a tool of the "
                     f"skill {tool.skill})", "tool": tool})
        made = _MADE[key] = kind()
    return made
