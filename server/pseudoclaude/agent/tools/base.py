"""The tool contract: the JSON envelope, limits, strict argument validation (SPEC §6).

Every tool call ends as one envelope, the text of a :class:`~pseudoclaude.llm.types.ToolResult`::

    {"ok": true, "tool": "read_file", "content": "...", "metadata": {...}}
    {"ok": false, "tool": "edit_file", "content": "", "error_type": "no_match", "error": "..."}

Keys in this order; ``error_type``/``error`` only when ``ok`` is false, ``metadata`` only when
the tool has some. The text is compact JSON with ``ensure_ascii=False``. ``content`` is at most
:data:`MAX_CONTENT_BYTES` bytes of UTF-8: longer content is cut on a character boundary and
ends with :data:`TRUNCATION_MARKER` (and ``metadata.truncated`` is set).

Error types used by the tools: ``invalid_arguments``, ``unknown_tool``, ``outside_workspace``,
``not_found``, ``is_directory``, ``not_a_file``, ``permission_denied``, ``binary_file``,
``too_large``, ``no_match``, ``ambiguous_match``, ``exit_status``, ``timeout``, ``io_error``,
``internal_error``, ``changed`` (a file changed between the diff shown for approval and the
write), ``stale`` (a write of an existing file the session has not read, or that changed since
it last read or wrote it: :mod:`~pseudoclaude.agent.tools.freshness`), ``unsaved`` (the file
has unsaved changes in an editor that cannot take the agent's edit), ``editor_error`` (the
editor refused the edit) (and ``denied``/``canceled``, which the runner records itself).

``"unsaved": true`` (after ``content``) says the text was read from, or written to, the
editor's unsaved buffer rather than the file on disk.

Arguments are validated strictly against the tool's :class:`Param` list, which is also the
source of the JSON Schema the model sees: unknown keys, missing required keys, wrong types and
out-of-range numbers are ``invalid_arguments`` naming the field. Two lenient rules, both
standard: an integral float (``10.0``) is an integer (as in JSON Schema), and ``null`` for an
optional parameter means "not given" (models in OpenAI's strict style send it).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pseudoclaude.llm.provider import ToolSpec

if TYPE_CHECKING:
    from pseudoclaude.agent.editor import Editor
    from pseudoclaude.agent.instructions import NestedInstructions
    from pseudoclaude.agent.skills import SessionSkills
    from pseudoclaude.agent.tools.freshness import FileLedger
    from pseudoclaude.agent.tools.paths import Confinement
    from pseudoclaude.sandbox import Sandbox

ApprovalClass = Literal["none", "read", "write", "runCommand", "mcp", "mcpServer", "permissions",
                      "plan", "hooks"]
"""``mcp``: a tool of an MCP server; ``mcpServer``: starting a project's MCP server (not a
tool: what its approval is asked as)."""
ParamKind = Literal["string", "integer", "number", "boolean", "string_array", "task_array"]
TASK_STATUSES = ("pending", "in_progress", "completed")
"""The statuses of a task-list item."""

MAX_READ_BYTES = 256 * 1024
"""At most this many bytes of a file are loaded to answer one ``read_file`` call."""
MAX_CONTENT_BYTES = 64 * 1024
"""The envelope's ``content`` is at most this many bytes of UTF-8, marker included."""
TRUNCATION_MARKER = "...[truncated]"
BINARY_SNIFF_BYTES = 8 * 1024
"""A NUL byte in this many first bytes makes a file binary."""


class ToolError(Exception):
    """A tool failed in a way the model should hear about: becomes an ``ok: false`` envelope."""

    def __init__(
        self,
        error_type: str,
        message: str,
        *,
        content: str = "",
        metadata: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.content = content
        self.metadata = metadata


@dataclass(slots=True)
class ToolOutput:
    """What a tool returns. ``error_type`` set means ``ok: false`` with the content kept (a
    command's output when it exited non-zero, for instance)."""

    content: str
    metadata: dict[str, Any] | None = None
    error_type: str | None = None
    error: str | None = None
    whole: bool = False
    """Never cut to :data:`MAX_CONTENT_BYTES` (an MCP result: Layer 1 spills a large one)."""
    unsaved: bool = False
    """The text came from (or went to) the editor's unsaved buffer, not the file on disk:
    ``"unsaved": true`` in the envelope."""


@dataclass(frozen=True, slots=True)
class Preview:
    """What the user sees to approve a call with side effects (SPEC §11 "Diff approvals").

    Writes: ``path`` (relative to the workspace), ``before`` (the whole file text without the
    change, ``""`` for a new file) and ``after`` (with it). Commands: ``command`` (the command
    line) and ``cwd`` (the folder it runs in). ``state`` is the tool's own: what
    :meth:`Tool.apply` needs to apply exactly the change shown.
    """

    path: str | None = None
    before: str | None = None
    after: str | None = None
    command: str | None = None
    cwd: str | None = None
    state: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Param:
    """One argument of a tool: its JSON Schema and its validation rule."""

    name: str
    kind: ParamKind
    description: str
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    non_empty: bool = False

    def schema(self) -> dict[str, object]:
        out: dict[str, object]
        if self.kind == "string_array":
            out = {"type": "array", "items": {"type": "string"}}
        elif self.kind == "task_array":
            out = {"type": "array", "items": {
                "type": "object", "required": ["content", "status"],
                "properties": {"content": {"type": "string", "minLength": 1},
                               "status": {"type": "string", "enum": list(TASK_STATUSES)}}}}
        else:
            out = {"type": self.kind}
        if self.non_empty and self.kind == "string":
            out["minLength"] = 1
        if self.minimum is not None:
            out["minimum"] = _number(self.minimum)
        if self.exclusive_minimum is not None:
            out["exclusiveMinimum"] = _number(self.exclusive_minimum)
        if self.maximum is not None:
            out["maximum"] = _number(self.maximum)
        out["description"] = self.description
        return out

    def check(self, tool: str, value: Any) -> Any:
        """The validated value (an integral float becomes an int), or :class:`ToolError`."""
        kind = self.kind
        if kind == "string":
            if not isinstance(value, str):
                raise self._bad(tool, "a string", value)
            if self.non_empty and not value:
                raise ToolError("invalid_arguments",
                                f"{tool}: `{self.name}` must not be empty")
            if "\x00" in value and self.name in ("path", "command", "pattern"):
                raise ToolError("invalid_arguments",
                                f"{tool}: `{self.name}` must not contain a NUL character")
            return value
        if kind == "boolean":
            if not isinstance(value, bool):
                raise self._bad(tool, "a boolean", value)
            return value
        if kind == "string_array":
            if not isinstance(value, list):
                raise self._bad(tool, "an array of strings", value)
            for index, item in enumerate(value):
                if not isinstance(item, str):
                    raise ToolError(
                        "invalid_arguments",
                        f"{tool}: `{self.name}[{index}]` must be a string, got {_show(item)}")
                if "\x00" in item:
                    raise ToolError(
                        "invalid_arguments",
                        f"{tool}: `{self.name}[{index}]` must not contain a NUL character")
            return list(value)
        if kind == "task_array":  # each item's fields: the tool checks them, naming the item
            if not isinstance(value, list):
                raise self._bad(tool, "an array of tasks", value)
            return list(value)
        # integer / number
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._bad(tool, "an integer" if kind == "integer" else "a number", value)
        if kind == "integer":
            if isinstance(value, float):
                if not value.is_integer():
                    raise self._bad(tool, "an integer", value)
                value = int(value)
        elif value != value or value in (float("inf"), float("-inf")):
            raise self._bad(tool, "a finite number", value)
        if self.minimum is not None and value < self.minimum:
            raise self._range(tool, value, f"at least {_number(self.minimum)}")
        if self.exclusive_minimum is not None and value <= self.exclusive_minimum:
            raise self._range(tool, value, f"greater than {_number(self.exclusive_minimum)}")
        if self.maximum is not None and value > self.maximum:
            raise self._range(tool, value, f"at most {_number(self.maximum)}")
        return value

    def _bad(self, tool: str, expected: str, value: Any) -> ToolError:
        return ToolError("invalid_arguments",
                         f"{tool}: `{self.name}` must be {expected}, got {_show(value)}")

    def _range(self, tool: str, value: Any, bound: str) -> ToolError:
        return ToolError("invalid_arguments",
                         f"{tool}: `{self.name}` must be {bound}, got {_show(value)}")


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _show(value: Any, limit: int = 60) -> str:
    """A short description of a value for an error message."""
    if value is None:
        return "null"
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > limit:
        text = text[:limit] + "…"
    return f"{kind} {text}"


@dataclass(frozen=True, slots=True)
class PlanAnswer:
    """The user's answer to a plan: ``approved`` (with the ``mode`` to carry it out in) or
    not (with ``feedback``)."""

    approved: bool
    mode: str = "default"
    feedback: str = ""


class SessionState(Protocol):
    """What ``update_tasks`` and ``exit_plan_mode`` reach of their session."""

    @property
    def mode(self) -> str: ...

    async def set_tasks(self, tasks: list[tuple[str, str]]) -> None: ...

    async def ask_plan(self, plan: str, call_id: str) -> PlanAnswer: ...


@dataclass(slots=True)
class ToolContext:
    """What a tool runs against: the confinement of the workspace (and extra read roots), and
    the editor whose open documents reads and writes go through, when there is one."""

    paths: Confinement
    editor: Editor | None = None
    files: FileLedger | None = None
    """The session's record of the files it read and wrote: with one, a write of an existing
    file it does not know as it is now is refused (``stale``); without, no such check."""
    sandbox: Sandbox | None = None
    """Where commands run: inside it when it works (``None``: never sandboxed)."""
    state: SessionState | None = None
    """The session's own state the bookkeeping tools change (its task list, its mode)."""
    call_id: str = ""
    """The call being run (what an approval it asks for is about)."""
    instructions: NestedInstructions | None = None
    """The subfolders' instruction files the session joined: a read under a subfolder with
    an ``AGENTS.md`` or ``CLAUDE.md`` not joined yet joins it (``None``: never)."""
    skills: SessionSkills | None = None
    """The session's skills (``load_skill``, ``install_skill``; ``None``: none)."""


class Tool(ABC):
    """One tool. Subclasses set the class attributes and implement :meth:`run`.

    ``run`` receives arguments already validated by :meth:`validate` (every required key
    present, every value of the right type; optional keys absent when not given) and either
    returns a :class:`ToolOutput` or raises :class:`ToolError`. Other exceptions become an
    ``internal_error`` envelope in the registry; ``asyncio.CancelledError`` propagates.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    params: ClassVar[tuple[Param, ...]]
    read_only: ClassVar[bool]
    approval_class: ClassVar[ApprovalClass] = "none"
    needs_diagnostics: ClassVar[bool] = False
    """Offered only with an editor that answers diagnostics (``get_diagnostics``)."""

    def spec(self) -> ToolSpec:
        """The tool as the model sees it (a JSON Schema object with ``required`` and
        ``additionalProperties: false``)."""
        return ToolSpec(
            name=self.name,
            description=self.description,
            input_schema={
                "type": "object",
                "properties": {p.name: p.schema() for p in self.params},
                "required": [p.name for p in self.params if p.required],
                "additionalProperties": False,
            },
        )

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Strictly validated arguments, or :class:`ToolError` (``invalid_arguments``)."""
        if not isinstance(arguments, Mapping):
            raw = arguments if isinstance(arguments, str) else _show(arguments)
            raw = raw.strip()
            shown = raw if len(raw) <= 200 else raw[:200] + "…"
            raise ToolError(
                "invalid_arguments",
                f"{self.name}: the arguments are not a JSON object: {shown or '(empty)'}",
            )
        known = {p.name: p for p in self.params}
        unknown = sorted(str(k) for k in arguments if k not in known)
        if unknown:
            expected = ", ".join(known) or "none"
            raise ToolError(
                "invalid_arguments",
                f"{self.name}: unknown argument `{unknown[0]}` (expected: {expected})",
            )
        out: dict[str, Any] = {}
        for param in self.params:
            value = arguments.get(param.name)
            if value is None:
                if param.required:
                    raise ToolError("invalid_arguments",
                                    f"{self.name}: missing required argument `{param.name}`")
                continue
            out[param.name] = param.check(self.name, value)
        return out

    @abstractmethod
    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Run with validated ``args``; blocking work goes to a worker thread."""

    async def prepare(self, args: dict[str, Any], ctx: ToolContext) -> Preview:
        """What the user must see to approve this call, computed before asking; raises
        :class:`ToolError` when the call cannot apply (then nobody is asked). Default: nothing
        beyond the arguments."""
        return Preview()

    async def apply(self, args: dict[str, Any], ctx: ToolContext, preview: Preview
                    ) -> ToolOutput:
        """Run after an approval that showed ``preview``: apply exactly what was shown, or
        fail (``changed``) when the file changed since. Default: :meth:`run`."""
        return await self.run(args, ctx)


def utf8_truncate(text: str, limit: int, marker: str = TRUNCATION_MARKER) -> tuple[str, bool]:
    """``text`` cut so that its UTF-8 form, ``marker`` included, is at most ``limit`` bytes.

    Returns ``(text, truncated)``; text that fits is returned unchanged. The cut never splits
    a character.
    """
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text, False
    room = max(0, limit - len(marker.encode("utf-8")))
    head = data[:room].decode("utf-8", "ignore")
    return head + marker, True


def _clean(text: str) -> str:
    """``text`` made encodable as UTF-8 (a lone surrogate from an odd file name becomes ``?``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def envelope(tool: str, output: ToolOutput | ToolError) -> tuple[str, bool]:
    """The envelope text of a tool's output or error, and whether it is ``ok``."""
    error_type: str | None
    error: str | None
    if isinstance(output, ToolError):
        content, error_type, error = output.content, output.error_type, output.message
    else:
        content, error_type, error = output.content, output.error_type, output.error
    metadata = dict(output.metadata) if output.metadata else None
    whole = isinstance(output, ToolOutput) and output.whole
    content, cut = (_clean(content), False) if whole else utf8_truncate(_clean(content),
                                                                        MAX_CONTENT_BYTES)
    if cut:
        metadata = metadata or {}
        metadata["truncated"] = True
    ok = error_type is None
    body: dict[str, Any] = {"ok": ok, "tool": tool, "content": content}
    if isinstance(output, ToolOutput) and output.unsaved:
        body["unsaved"] = True
    if not ok:
        body["error_type"] = error_type
        body["error"] = _one_line(error or error_type or "error")
    if metadata:
        body["metadata"] = metadata
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str)
    return _clean(text), ok


def _one_line(text: str, limit: int = 2000) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "…"
