"""The wire protocol (SPEC §8, §11): the map of everything that crosses the wire.

One place names every custom request, notification and command, and defines every params,
result and notification shape as a msgspec ``Struct`` (snake_case in Python, camelCase on the
wire). Handlers (:mod:`pseudoclaude.api.methods`), the server's notifications and the CLI's
``--json`` output all go through these types; nothing else builds a wire dict by hand.
The editor clients mirror this module: ``editors/vscode/src/protocol.ts`` and
``editors/nvim/lua/pseudoclaude/protocol.lua`` (a test fails when their method sets differ).

Event payloads (``pseudoclaude/event``) are the core's typed events
(:mod:`pseudoclaude.events`, a tagged union on ``kind``) sent as they are, with ``workspace``
and ``sessionId`` in front (:func:`event_params`).

Nothing here imports pygls.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeVar

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from pseudoclaude.checkpoints.status import CheckpointStatus as CheckpointStatus  # on the wire
from pseudoclaude.compact.breakdown import CATEGORIES, TokenBreakdown
from pseudoclaude.compact.breakdown import RuleFile as RuleFile  # on the wire
from pseudoclaude.compact.breakdown import RuleSource as RuleSource  # on the wire
from pseudoclaude.compact.plan import CompactPlan, UndoOutcome
from pseudoclaude.compact.plan import PreviewReason as PreviewReason  # on the wire
from pseudoclaude.compact.plan import SpillPreview as SpillPreview  # on the wire
from pseudoclaude.compact.types import CompactOutcome, ContextState
from pseudoclaude.events import Event
from pseudoclaude.events import ToolStatus as ToolStatus  # on the wire: a generated alias
from pseudoclaude.llm.editor import Diagnostic as Diagnostic  # on the wire
from pseudoclaude.llm.editor import EditorContext as EditorContext  # on the wire
from pseudoclaude.llm.editor import Range as Range  # on the wire
from pseudoclaude.llm.editor import Severity as Severity  # on the wire
from pseudoclaude.llm.types import clean_value
from pseudoclaude.mcp.manager import ServerInfo
from pseudoclaude.memory.notes import NOTE_TYPES
from pseudoclaude.memory.proposals import Proposal as Proposal  # on the wire
from pseudoclaude.names import camel, snake
from pseudoclaude.permissions import MODES, Mode
from pseudoclaude.rewind import Mode as RewindMode
from pseudoclaude.rewind import RewindFile as RewindFile  # on the wire
from pseudoclaude.rewind import RewindOutcome, RewindPreview, TurnSummary
from pseudoclaude.session.ids import is_session_id
from pseudoclaude.transcript import TranscriptItem

# -- names ---------------------------------------------------------------------------------------

RUN = "pseudoclaude/run"
COMPACT = "pseudoclaude/compact"
COMPACT_PREVIEW = "pseudoclaude/compact/preview"
COMPACT_UNDO = "pseudoclaude/compact/undo"
CONTEXT = "pseudoclaude/context"
MEMORY_SHOW = "pseudoclaude/memory/show"
MEMORY_REMEMBER = "pseudoclaude/memory/remember"
MEMORY_FORGET = "pseudoclaude/memory/forget"
MEMORY_PROPOSALS = "pseudoclaude/memory/proposals"
MEMORY_REVIEW = "pseudoclaude/memory/review"
SESSIONS_LIST = "pseudoclaude/sessions/list"
SESSIONS_RESUME = "pseudoclaude/sessions/resume"
SESSIONS_NEW = "pseudoclaude/sessions/new"
SESSIONS_MESSAGES = "pseudoclaude/sessions/messages"
SLASH_COMMANDS = "pseudoclaude/commands"
SESSIONS_TURNS = "pseudoclaude/sessions/turns"
REWIND_PREVIEW = "pseudoclaude/rewind/preview"
REWIND = "pseudoclaude/rewind"
REWIND_FILE = "pseudoclaude/rewind/file"
SESSIONS_FORK = "pseudoclaude/sessions/fork"
MCP_LIST = "pseudoclaude/mcp/list"
MCP_APPROVE = "pseudoclaude/mcp/approve"
MCP_RESTART = "pseudoclaude/mcp/restart"
WORKTREE_STATUS = "pseudoclaude/worktree/status"
WORKTREE_APPLY = "pseudoclaude/worktree/apply"
WORKTREE_REMOVE = "pseudoclaude/worktree/remove"
MODE = "pseudoclaude/mode"
PERMISSIONS = "pseudoclaude/permissions"
PERMISSIONS_CHECK = "pseudoclaude/permissions/check"
TASKS = "pseudoclaude/tasks"
STATUS = "pseudoclaude/status"
HOOKS_LIST = "pseudoclaude/hooks/list"
SKILLS_LIST = "pseudoclaude/skills/list"
HOOKS_REVIEW = "pseudoclaude/hooks/review"
AGENTS_LIST = "pseudoclaude/agents/list"
AGENTS_STOP = "pseudoclaude/agents/stop"

REQUESTS: tuple[str, ...] = (
    RUN, COMPACT, COMPACT_PREVIEW, COMPACT_UNDO, CONTEXT, MEMORY_SHOW, MEMORY_REMEMBER,
    MEMORY_FORGET, MEMORY_PROPOSALS, MEMORY_REVIEW, SESSIONS_LIST, SESSIONS_RESUME,
    SESSIONS_NEW, SESSIONS_MESSAGES, SLASH_COMMANDS, SESSIONS_TURNS, REWIND_PREVIEW, REWIND,
    REWIND_FILE, SESSIONS_FORK, MCP_LIST, MCP_APPROVE, MCP_RESTART, WORKTREE_STATUS,
    WORKTREE_APPLY, WORKTREE_REMOVE, MODE, PERMISSIONS, PERMISSIONS_CHECK, TASKS, STATUS,
    HOOKS_LIST, SKILLS_LIST, HOOKS_REVIEW, AGENTS_LIST, AGENTS_STOP,
)
"""Client → server requests, each also a ``workspace/executeCommand`` command."""

EVENT = "pseudoclaude/event"
MEMORY_CHANGED = "pseudoclaude/memoryChanged"
MEMORY_PROPOSALS_CHANGED = "pseudoclaude/memoryProposals"
CONTEXT_USAGE = "pseudoclaude/contextUsage"
MCP_CHANGED = "pseudoclaude/mcpChanged"

NOTIFICATIONS: tuple[str, ...] = (EVENT, MEMORY_CHANGED, MEMORY_PROPOSALS_CHANGED, CONTEXT_USAGE,
                                  MCP_CHANGED)
"""Server → client notifications."""

APPROVE = "pseudoclaude/approve"
DIAGNOSTICS = "pseudoclaude/diagnostics"
SERVER_REQUESTS: tuple[str, ...] = (APPROVE, DIAGNOSTICS)
"""Server → client requests (``pseudoclaude/approve`` only to clients that set
``experimental.pseudoclaude.approvals: true`` in their ``initialize`` capabilities,
``pseudoclaude/diagnostics`` only to those that set ``diagnostics: true``)."""
APPROVALS_CAPABILITY = "approvals"
"""The client capability under ``experimental.pseudoclaude`` that asks for
``pseudoclaude/approve``."""
DIAGNOSTICS_CAPABILITY = "diagnostics"
"""The client capability under ``experimental.pseudoclaude``: the client answers
``pseudoclaude/diagnostics`` with the diagnostics its editor shows."""

CODE_ACTIONS = {
    "pseudoclaude.codeAction.explain": "PseudoClaude: Explain",
    "pseudoclaude.codeAction.fix": "PseudoClaude: Fix",
    "pseudoclaude.codeAction.ask": "PseudoClaude: Ask about selection",
}
"""The code actions offered on a range: command → title. Each command is the client's own
(it opens the chat); its one argument is :class:`CodeActionArguments`."""
CODE_ACTION_PROMPTS = {
    "pseudoclaude.codeAction.explain": "Explain the selected code.",
    "pseudoclaude.codeAction.fix": "Fix the problems in the selected code.",
    "pseudoclaude.codeAction.ask": "",
}
"""The prompt each code action sends with the selection as context (``""``: the chat opens
with the selection attached and waits for the user's question)."""

APPROVAL_ACTIONS = {"once": "Allow once", "session": "Allow for this session",
                    "always": "Always allow", "deny": "Deny"}
"""The actions of an approval asked with ``window/showMessageRequest`` (SPEC §8); ``always``
is offered only when the request has a ``rule`` (it is shown in the message)."""

SESSION_CHANGES = frozenset({SESSIONS_RESUME, SESSIONS_NEW, COMPACT_UNDO, REWIND})
"""Requests after which the context meter is sent again."""

EXPERIMENTAL_KEY = "pseudoclaude"
"""The key under ``capabilities.experimental`` (and the settings section)."""

PROTOCOL_VERSION = 1

# JSON-RPC error codes the server answers with.
INVALID_PARAMS = -32602
REQUEST_FAILED = -32803
REQUEST_CANCELLED = -32800
SESSION_BUSY = -32011
"""Another writer (another process, or another request of this one) holds the session: the
error's ``data`` is :class:`SessionBusyData`."""


def command_name(method: str) -> str:
    """``pseudoclaude/memory/show`` -> ``pseudoclaude.memory.show``."""
    return method.replace("/", ".")


COMMANDS: tuple[str, ...] = tuple(command_name(m) for m in REQUESTS)
"""The ``workspace/executeCommand`` commands, one per request."""


class Capability(Struct, kw_only=True):
    """``capabilities.experimental.pseudoclaude`` in the ``initialize`` result."""

    version: int = PROTOCOL_VERSION
    requests: list[str] = msgspec.field(default_factory=lambda: list(REQUESTS))
    notifications: list[str] = msgspec.field(default_factory=lambda: list(NOTIFICATIONS))
    commands: list[str] = msgspec.field(default_factory=lambda: list(COMMANDS))


# -- shapes ------------------------------------------------------------------------------------


class Wire(Struct, rename="camel", kw_only=True):
    """Base of every shape: camelCase keys on the wire."""


MEMORY_TYPES: tuple[str, ...] = tuple(NOTE_TYPES)
"""The types of a memory note."""
BREAKDOWN_CATEGORIES: tuple[str, ...] = tuple(camel(c) for c in CATEGORIES)
"""The ten categories of a breakdown that add up to ``estimatedTokens``, in display order."""

MemoryLevel = Literal["project", "user"]
MEMORY_LEVELS: tuple[str, ...] = ("project", "user")
"""The memory stores, project first."""
Level = MemoryLevel
ApprovalDecision = Literal["allowOnce", "allowSession", "allowAlways", "deny", "approve",
                          "keepPlanning"]
"""The answer to ``pseudoclaude/approve`` (``allowAlways``: add the request's ``rule`` to the
folder's ``permissions.local.yaml``; only when the request has one). A plan (kind ``plan``)
is answered ``approve`` (with a ``mode``) or ``keepPlanning`` (with ``feedback``); any other
answer to a plan is ``keepPlanning``, and ``approve``/``keepPlanning`` to anything else deny."""
TaskStatus = Literal["pending", "in_progress", "completed"]
ApproveKind = Literal["read", "write", "runCommand", "mcp", "mcpServer", "permissions", "plan",
                      "hooks"]
PermissionMode = Mode
"""A session's permission mode."""
PERMISSION_MODES: tuple[str, ...] = MODES
"""Every permission mode, from the most careful."""
PermissionDecision = Literal["allow", "ask", "deny"]
PermissionSource = Literal["user", "project", "local", "settings", "session", "mode",
                           "blacklist", "sandbox", "hook"]
"""Where a verdict comes from: a rule's source, the mode, the dangerous-command list, the
workspace boundary, or a PreToolUse hook that allowed or asked (``hook``, in a run only)."""
HookSource = Literal["user", "workspace", "settings"]
"""Where a hook is defined: ``~/.PseudoClaude/hooks.yaml``, the folder's
``.PseudoClaude/hooks.yaml``, or the ``hooks`` setting."""
HookStatus = Literal["active", "needsApproval", "denied", "invalid"]
SkillSource = Literal["workspace", "user", "claude", "agents", "builtin"]
"""Where a skill is defined: the folder's ``.PseudoClaude/skills/``, the user's
``~/.PseudoClaude/skills/``, the folder's ``.claude/skills/`` or ``.agents/skills/``, or
PseudoClaude itself."""
ReviewDecision = Literal["accept", "reject"]
ProposalAction = Literal["create", "update", "delete"]
"""The effect of a memory proposal on its note file."""
NonNegative = Annotated[int, Meta(ge=0)]
Positive = Annotated[int, Meta(ge=1)]

SESSION_ID_HINT = "a session id (YYYYMMDD-HHMMSS-xxxx)"


class ParamError(ValueError):
    """Params that do not fit their shape: ``InvalidParams`` (-32602) naming the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field


def _non_empty(field: str, value: str | None) -> None:
    if value is not None and not value.strip():
        raise ParamError(field, "must not be empty")


def _session_ref(field: str, value: str | None, *, new: bool = False) -> None:
    if value is None:
        return
    _non_empty(field, value)
    if value == "latest" or (new and value == "new") or is_session_id(value):
        return
    choices = [SESSION_ID_HINT, "'latest'"] + (["'new'"] if new else [])
    raise ParamError(field, f"must be {' or '.join(choices)}, got {value[:60]!r}")


# Params (``workspace`` and ``workDoneToken`` are taken off by the server first).


class EmptyParams(Wire):
    pass


class RunParams(Wire):
    prompt: str
    session_id: str | None = None
    """``"new"``, an id, ``"latest"``; default: the workspace's current session."""
    context: EditorContext | None = None
    """What the user is looking at (the active file, the selection, the open files): the
    model reads it in one short block before the prompt."""

    def check(self) -> None:
        _non_empty("prompt", self.prompt)
        _session_ref("sessionId", self.session_id, new=True)
        if self.context is not None:
            for field, path in self.context.paths():
                _relative_path(f"context.{field}", path)


def _relative_path(field: str, value: str) -> None:
    """A path as the wire names files: relative to the workspace, with ``/``."""
    _non_empty(field, value)
    if value.startswith("/") or "\\" in value or re.match(r"^[A-Za-z]:", value) or any(
            part == ".." for part in value.split("/")):
        raise ParamError(field, "must be a path relative to the workspace with '/' "
                         f"(got {value[:80]!r})")


class SessionParams(Wire):
    session_id: str | None = None
    """The session (default: the current one: the session this client used last)."""

    def check(self) -> None:
        _session_ref("sessionId", self.session_id)


class CompactParams(SessionParams):
    instructions: str | None = None


class SessionBusyData(Wire):
    """The ``data`` of a :data:`SESSION_BUSY` error."""

    session_id: str
    pid: int | None
    """The process writing the session (``null`` when it is not known)."""


class RememberParams(Wire):
    text: str
    level: Level
    type: str | None = None
    title: str | None = None

    def check(self) -> None:
        for name, value in (("text", self.text), ("type", self.type), ("title", self.title)):
            _non_empty(name, value)


class ForgetParams(Wire):
    level: Level
    filename: str

    def check(self) -> None:
        _non_empty("filename", self.filename)


class ResumeParams(Wire):
    session_id: str

    def check(self) -> None:
        _session_ref("sessionId", self.session_id)


class MessagesParams(Wire):
    session_id: str | None = None
    agent_id: str | None = None
    """A sub-agent of the session: its transcript (``pseudoclaude/agents/list``)."""
    offset: NonNegative = 0
    limit: Positive | None = None

    def check(self) -> None:
        _session_ref("sessionId", self.session_id)


class TurnsParams(SessionParams):
    pass


class RewindPreviewParams(Wire):
    turn: Positive
    """The 1-based prompt to go back to before (``pseudoclaude/sessions/turns`` lists them)."""
    mode: RewindMode
    """``code`` (the files), ``conversation`` (the messages) or ``both``."""
    session_id: str | None = None

    def check(self) -> None:
        _session_ref("sessionId", self.session_id)


class RewindParams(RewindPreviewParams):
    force: bool = False
    """Also restore the files changed outside the agent since the last checkpoint."""


class RewindFileParams(Wire):
    turn: Positive
    path: str
    """Relative to the workspace, with ``/`` (one of the preview's files)."""
    session_id: str | None = None

    def check(self) -> None:
        _session_ref("sessionId", self.session_id)
        if not self.path.strip():
            raise ParamError("path", "expected a file's path, relative to the workspace")


class ForkParams(Wire):
    session_id: str | None = None
    turn: Positive | None = None
    """The new session has the conversation before this prompt (default: all of it)."""

    def check(self) -> None:
        _session_ref("sessionId", self.session_id)


# Results.


class RunUsage(Wire):
    input_tokens: int
    output_tokens: int


class RunResult(Wire):
    session_id: str
    stop_reason: str
    text: str
    iterations: int
    usage: RunUsage
    error: str | UnsetType = UNSET


class CompactResult(CompactOutcome, Wire):
    message: str
    """The line a person reads about it."""


class CompactPreviewResult(CompactPlan, Wire):
    """What ``pseudoclaude/compact`` would do now; nothing is written, no model is called."""

    message: str
    """The line a person reads about it."""


class UndoResult(UndoOutcome, Wire):
    message: str
    """The line a person reads about it."""


class TurnsResult(Wire):
    turns: list[TurnSummary]


class RewindPreviewResult(RewindPreview, Wire):
    """What ``pseudoclaude/rewind`` would do; nothing changes."""


class RewindResult(RewindOutcome, Wire):
    """What the rewind did."""


McpServer = ServerInfo
"""One MCP server: its ``name``, ``source`` (``user``, ``project``, ``workspace``, ``acp``),
``status`` (``starting``, ``ready``, ``failed``, ``needsApproval``, ``disabled``), ``tools``
(their own names) and ``error?``."""


class RewindFileResult(Wire):
    """One file of a code rewind, to show as a diff: its text now and after the rewind."""

    path: str
    current: str | None
    """The file's text now (None: it does not exist)."""
    restored: str | None
    """Its text after the rewind (None: the rewind deletes it)."""
    binary: bool
    """Not UTF-8 text: ``current`` and ``restored`` are ``""`` where the file has content."""


class ForkResult(Wire):
    session_id: str
    """The new session (the source is unchanged)."""


Breakdown = TokenBreakdown
"""What fills the context, in tokens: the nine categories add up to ``estimatedTokens``;
``free`` and ``reserved`` are beside them."""


class IgnoredSetting(Wire):
    """A setting of the folder's own ``.PseudoClaude/config.yaml`` that is not applied."""

    key: str
    value: str
    """As shown to the user (a URL without its user information; never a key)."""
    reason: str


class SandboxState(Wire):
    """Whether ``run_command`` runs inside the sandbox; ``reason`` says why not (or what it
    does when it is on)."""

    enabled: bool
    reason: str | UnsetType = UNSET


class ModeParams(SessionParams, kw_only=True):
    mode: str

    def check(self) -> None:
        super().check()
        if self.mode not in MODES:
            raise ParamError("mode", f"must be one of {', '.join(MODES)}, got "
                                     f"{self.mode[:40]!r}")


class ModeResult(Wire):
    mode: PermissionMode
    message: str


class PermissionRule(Wire):
    rule: str
    decision: PermissionDecision
    source: PermissionSource


class PermissionsResult(Wire):
    mode: PermissionMode
    modes: list[PermissionMode]
    """The modes this session may switch to (``bypassPermissions`` only when the user's
    settings allow it)."""
    rules: list[PermissionRule]
    """Every rule in effect: deny first, then ask, then allow."""
    problems: list[str]
    """Bad rules and unreadable files, by name (the other rules apply)."""
    sandbox: SandboxState
    waiting: list[str] = msgspec.field(default_factory=list)
    """The folder's own permission files whose allow rules wait for the user's approval."""


class PermissionsCheckParams(SessionParams, kw_only=True):
    tool: str
    """The tool as the model calls it (``run_command``, ``read_file``, ``mcp__server__tool``)."""
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)

    def check(self) -> None:
        super().check()
        _non_empty("tool", self.tool)


class PermissionsCheckResult(Wire):
    decision: PermissionDecision
    source: PermissionSource
    reason: str
    rule: str | UnsetType = UNSET
    """The rule that decided (absent: the mode, the dangerous-command list or the workspace
    boundary did)."""


class ContextResult(ContextState, Wire):
    session_id: str | None
    checkpoints: CheckpointStatus
    """What a rewind of code can restore."""
    ignored_settings: list[IgnoredSetting] = msgspec.field(default_factory=list)
    """What the folder's own settings file sets that waits for the user's approval (or was
    declined): where the prompts and the key would go, what would run unasked."""
    mode: PermissionMode = "default"
    """The session's permission mode."""
    sandbox: SandboxState | None = None
    """Whether commands run in the sandbox, and why not."""


class MemoryNote(Wire):
    filename: str
    uri: str
    type: str
    title: str
    summary: str


class MemoryStore(Wire):
    level: MemoryLevel
    dir: str
    index_uri: str
    notes: list[MemoryNote]


class IndexHealth(Wire):
    """How full the injected index is, against its limits (200 lines, 25,600 bytes):
    ``lines`` and ``bytes`` of the index before any cut (they may exceed the limits)."""

    lines: int
    bytes: int
    max_lines: int
    max_bytes: int


class MemoryShowResult(Wire):
    index: str
    truncated: bool
    stores: list[MemoryStore]
    health: IndexHealth


class ProposalsResult(Wire):
    proposals: list[Proposal]
    """Oldest first."""


class ReviewParams(Wire):
    id: str
    decision: ReviewDecision
    content: str | None = None
    """An edited ``after`` to accept instead: a whole file, or a body without front matter."""

    def check(self) -> None:
        _non_empty("id", self.id)


class McpServerParams(Wire):
    server: str
    """The server's name, as ``pseudoclaude/mcp/list`` gives it."""

    def check(self) -> None:
        _non_empty("server", self.server)


class McpApproveParams(McpServerParams):
    """The user's answer for a project server waiting for an approval (from a menu, after a
    dismissed question): ``allowSession`` is remembered outside the workspace."""

    decision: ApprovalDecision


class McpServerResult(Wire):
    server: McpServer


class ReviewResult(Wire):
    applied: bool
    message: str
    """The line a person reads about it."""
    filename: str | UnsetType = UNSET


class RememberResult(Wire):
    filename: str
    uri: str


class ForgetResult(Wire):
    removed: bool


class SessionSummary(Wire):
    id: str
    title: str
    created_at: str
    updated_at: str
    message_count: int
    bytes: int
    model: str
    active: bool
    running: bool = False
    """Being written now (a run, a compaction, an undo or a rewind), in any process."""
    worktree: str | None = None
    """The branch of the session's worktree (``null``: it works in the folder itself)."""
    answered: bool = True
    """The model answered in it (false: its first run failed before any answer, or a fork
    nobody prompted yet): it resumes by its id, but is not ``latest``."""


class SessionsListResult(Wire):
    sessions: list[SessionSummary]


class ResumeResult(Wire):
    session_id: str
    message_count: int
    bad_lines: int
    repaired: int


class NewSessionParams(Wire):
    worktree: bool = False
    """Work in a git worktree of its own (``<dataDir>/worktrees/<session id>``, branch
    ``pseudoclaude/<session id>`` from ``HEAD``): its changes reach the folder's files only
    when applied (``pseudoclaude/worktree/apply``)."""


class WorktreeInfo(Wire):
    """Where a worktree session works."""

    path: str
    """The worktree's root (absolute)."""
    branch: str
    base: str
    """The full commit id of ``HEAD`` when the worktree was made."""


class NewSessionResult(Wire):
    session_id: str
    worktree: WorktreeInfo | None = None
    """The session's worktree (``null``: it works in the folder itself)."""


class WorktreeParams(SessionParams):
    agent_id: str | None = None
    """A sub-agent of the session that ran with ``isolation: "worktree"``: its worktree
    (``<dataDir>/worktrees/<agentId>``, branch ``pseudoclaude/<agentId>``) instead of the
    session's."""


class WorktreeRemoveParams(WorktreeParams):
    force: bool = False
    """Remove it even with changes not applied to the folder's files (they are lost)."""


class WorktreeFile(Wire):
    path: str
    """Relative to the worktree's root, with ``/``."""
    action: Literal["create", "modify", "delete"]


class WorktreeStatusResult(Wire):
    session_id: str
    path: str
    branch: str
    base: str
    files: list[WorktreeFile]
    """The session's changes since ``base`` (committed, staged or not, new files)."""
    message: str


class WorktreeApplyResult(Wire):
    session_id: str
    applied: list[str]
    conflicts: list[str]
    """Files changed in the folder too since ``base``: then nothing was applied."""
    message: str


class WorktreeRemoveResult(Wire):
    session_id: str
    message: str


class MessagesResult(Wire):
    """The session as the user lived it (:mod:`pseudoclaude.transcript`)."""

    session_id: str
    total: int
    """Items in the whole transcript (``offset``/``limit`` page over them)."""
    items: list[TranscriptItem]


class SlashCommand(Wire):
    """A slash command every chat offers (``/compact focus on the parser``)."""

    name: str
    description: str
    hint: str | UnsetType = UNSET
    """What the text after the name means, when it takes any."""
    skill: bool | UnsetType = UNSET
    """``true``: a skill (``/review src``): the chat sends the text as a prompt (the server
    turns it into the skill's instructions)."""


class CommandsResult(Wire):
    commands: list[SlashCommand]


# Notifications.


class ContextUsageParams(Wire):
    workspace: str
    session_id: str | None
    estimated_tokens: int
    context_window: int
    auto_compact_threshold: int
    breakdown: Breakdown


class MemoryChangedParams(Wire):
    workspace: str
    level: MemoryLevel
    source: str


class MemoryProposalsParams(Wire):
    workspace: str
    count: int


class McpChangedParams(Wire):
    """The MCP servers of ``workspace`` changed (their status or tools): ask
    ``pseudoclaude/mcp/list`` again."""

    workspace: str


class McpListResult(Wire):
    servers: list[McpServer]
    """Every configured server, by name."""


class HookEntry(Wire):
    """One hook of a folder (``pseudoclaude/hooks/list``)."""

    name: str
    event: str
    source: HookSource
    status: HookStatus
    """``needsApproval``: the folder's own file waits for the user's approval; ``denied``: the
    user declined it (in this server process); ``invalid``: it cannot be read (``error``)."""
    action: str = ""
    """What it runs, in one line (``shell: npm run lint``), with its flags."""
    error: str | UnsetType = UNSET
    """``invalid``: the file, the line and why (``.../hooks.yaml:12: unknown event "X"``)."""


class HooksListResult(Wire):
    hooks: list[HookEntry]
    """Every hook (the user's file, the settings, the folder's file, in that order), and every
    entry that cannot be read."""
    text: str = ""
    """All of it by event as a person reads it (what ``/hooks`` and ``pseudoclaude hooks list``
    show)."""


class SkillEntry(Wire):
    """One skill of a folder (``pseudoclaude/skills/list``)."""

    name: str
    description: str
    source: SkillSource
    """Where the skill that has this name is defined (the folder's own first, then
    ``.claude/skills``, ``.agents/skills``, the user's, the built-in ones)."""
    loaded: bool
    """The session loaded it (``load_skill``, or a ``/<skill>`` prompt)."""
    path: str = ""
    """Its file (relative to the folder, ``~/...``, or absolute)."""
    hint: str | UnsetType = UNSET
    """What its ``/<name>`` command takes (``argument-hint``)."""
    model: bool = True
    """The model may load it (``false``: ``disable-model-invocation``)."""
    command: bool = True
    """The user may run it as ``/<name>`` (``false``: ``user-invocable: false``)."""
    tools: list[str] = msgspec.field(default_factory=list)
    """The tools of its ``tools.json`` (offered once it is loaded)."""


class SkillProblem(Wire):
    """A skill, or a tool of its ``tools.json``, that cannot be used: the others load."""

    path: str
    line: int | None
    message: str
    source: SkillSource
    name: str = ""
    """The skill's name, when it is known."""


class SkillsListResult(Wire):
    session_id: str | None
    skills: list[SkillEntry]
    """Every skill, by name."""
    problems: list[SkillProblem]


class ApproveHook(Wire):
    """One hook of the folder's ``hooks.yaml`` as its approval shows it."""

    name: str
    event: str
    action: str


class ApproveParams(Wire):
    """``pseudoclaude/approve`` (server → client): approve one tool call, shown as a diff."""

    workspace: str
    session_id: str
    tool: str
    arguments: Any
    kind: ApproveKind
    path: str | UnsetType = UNSET
    """Relative to the workspace (writes)."""
    before: str | UnsetType = UNSET
    """The whole file without the change (``""`` for a new file)."""
    after: str | UnsetType = UNSET
    """The whole file with the change."""
    command: str | UnsetType = UNSET
    """The command line (``run_command``)."""
    cwd: str | UnsetType = UNSET
    """The folder the command runs in (``run_command``)."""
    server: str | UnsetType = UNSET
    """The MCP server (``mcp``: whose tool ``tool`` is; ``mcpServer``: the server to start,
    its command line in ``command`` or its ``url``)."""
    url: str | UnsetType = UNSET
    """The URL of an HTTP MCP server (``mcpServer``); the ``baseUrl`` a folder's settings
    file asks for (``permissions``)."""
    rules: list[str] | UnsetType = UNSET
    """``permissions``: what the folder's file asks for, one line each (``baseUrl: <url>
    (...)`` first), with ``path`` naming the file."""
    rule: str | UnsetType = UNSET
    """The permission rule ``allowAlways`` would add (e.g. ``Bash(npm run test:*)``); absent:
    ``allowAlways`` is not offered."""
    reason: str | UnsetType = UNSET
    """Why the call is asked (the mode, or the rule that asks)."""
    plan: str | UnsetType = UNSET
    """``plan``: the plan the agent asks to carry out (Markdown)."""
    hooks: list[ApproveHook] | UnsetType = UNSET
    """``hooks``: the hooks of the folder's file (``path``) that would run once approved."""
    agent_id: str | UnsetType = UNSET
    """The sub-agent whose call it is (absent: the session's own)."""
    agent_name: str | UnsetType = UNSET
    """That sub-agent's name, when it was given one."""


class ApproveResult(Wire):
    decision: ApprovalDecision
    message: str | None = None
    """``deny``: what the model is told (why, or what to do instead)."""
    mode: str | None = None
    """``approve`` (a plan): the mode to carry it out in, ``default`` or ``acceptEdits``
    (absent: ``default``)."""
    feedback: str | None = None
    """``keepPlanning``: what the model reads."""


class TaskItem(Wire):
    content: str
    status: TaskStatus


AgentStatus = Literal["running", "completed", "failed", "canceled", "max_turns"]


class AgentUsage(Wire):
    """A sub-agent's tokens: ``inputTokens`` counts every input token of its requests (read
    from the cache or not); so far, while it runs."""

    input_tokens: int
    output_tokens: int


class AgentInfo(Wire):
    """One sub-agent of a session, as its log says (SPEC §13)."""

    agent_id: str
    name: str
    subagent_type: str
    description: str
    status: AgentStatus
    started_at: str
    """ISO 8601."""
    usage: AgentUsage
    call_id: str = ""
    """The id of the parent's ``agent`` tool call that started it (its ``toolCall`` event's
    ``id``; ``""`` in a log that does not say)."""


class AgentsResult(Wire):
    session_id: str | None
    agents: list[AgentInfo]


class AgentStopParams(Wire):
    agent_id: str
    """A running sub-agent of the session: a background one (its ``taskId``) stops as
    ``task_stop`` stops it; a foreground one stops alone, its ``agent`` call answering that it
    was stopped, and the run goes on."""
    session_id: str | None = None

    def check(self) -> None:
        _session_ref("sessionId", self.session_id)


class AgentStopResult(Wire):
    session_id: str
    agent_id: str
    status: AgentStatus
    """How it ended (``canceled``)."""


class TasksResult(Wire):
    session_id: str | None
    tasks: list[TaskItem]


class SessionUsage(RunUsage):
    """What a session's model requests were billed so far, as the provider reported each turn
    (summed from its log, across restarts and compactions)."""

    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class StatusTokens(Wire):
    """The context meter's numbers, and the session's usage."""

    used: int
    """The estimated tokens of the next request (``estimatedTokens`` of the context)."""
    window: int
    auto_compact_threshold: int
    billed: SessionUsage | None = None
    """``null``: no usage reported yet (no session, or no answer in it)."""


class StatusHook(Wire):
    """A hook as ``/status`` lists it."""

    name: str
    event: str
    source: str
    status: str


class StatusSkill(Wire):
    """A skill as ``/status`` lists it."""

    name: str
    source: str
    loaded: bool


class StatusResult(Wire):
    """A session at a glance (``/status``, ``pseudoclaude status``)."""

    session: str | None
    """The session's id (``null``: the folder has none yet)."""
    mode: PermissionMode
    """The session's permission mode (with no session, the mode the next one starts in)."""
    provider: str | None
    """The provider the next request goes to (``null``: none configured)."""
    model: str
    tokens: StatusTokens
    sandbox: SandboxState
    mcp: list[McpServer]
    """Every configured MCP server and its state, as ``pseudoclaude/mcp/list`` answers."""
    hooks: list[StatusHook]
    skills: list[StatusSkill]
    ignored_settings: list[IgnoredSetting] = msgspec.field(default_factory=list)
    """What the folder's own settings file sets that is not applied, and why."""
    text: str = ""
    """All of it as a person reads it (what ``pseudoclaude status`` prints)."""


class DiagnosticsParams(Wire):
    """``pseudoclaude/diagnostics`` (server → client): the diagnostics the editor shows."""

    workspace: str
    paths: list[str] | UnsetType = UNSET
    """Only these files (relative, ``/``); absent: every file of the workspace."""


class DiagnosticsResult(Wire):
    diagnostics: list[Diagnostic]


class CodeActionArguments(Wire):
    """The one argument of a code action's command: the selection it was offered on."""

    path: str
    range: Range
    text: str
    diagnostics: list[Diagnostic] | UnsetType = UNSET
    """The range's diagnostics (*Fix*)."""


PARAMS: dict[str, type[Wire]] = {
    RUN: RunParams,
    COMPACT: CompactParams,
    COMPACT_PREVIEW: CompactParams,
    COMPACT_UNDO: SessionParams,
    CONTEXT: SessionParams,
    MEMORY_SHOW: EmptyParams,
    MEMORY_REMEMBER: RememberParams,
    MEMORY_FORGET: ForgetParams,
    MEMORY_PROPOSALS: EmptyParams,
    MEMORY_REVIEW: ReviewParams,
    SESSIONS_LIST: EmptyParams,
    SESSIONS_RESUME: ResumeParams,
    SESSIONS_NEW: NewSessionParams,
    SESSIONS_MESSAGES: MessagesParams,
    SLASH_COMMANDS: EmptyParams,
    SESSIONS_TURNS: TurnsParams,
    REWIND_PREVIEW: RewindPreviewParams,
    REWIND: RewindParams,
    REWIND_FILE: RewindFileParams,
    SESSIONS_FORK: ForkParams,
    MCP_LIST: EmptyParams,
    MCP_APPROVE: McpApproveParams,
    MCP_RESTART: McpServerParams,
    WORKTREE_STATUS: WorktreeParams,
    WORKTREE_APPLY: WorktreeParams,
    WORKTREE_REMOVE: WorktreeRemoveParams,
    MODE: ModeParams,
    PERMISSIONS: SessionParams,
    PERMISSIONS_CHECK: PermissionsCheckParams,
    TASKS: SessionParams,
    STATUS: SessionParams,
    HOOKS_LIST: EmptyParams,
    SKILLS_LIST: SessionParams,
    HOOKS_REVIEW: EmptyParams,
    AGENTS_LIST: SessionParams,
    AGENTS_STOP: AgentStopParams,
}
"""The params shape of every request (the handlers' input)."""
SESSION_SCOPED: frozenset[str] = frozenset(
    method for method, shape in PARAMS.items()
    if "session_id" in shape.__struct_fields__ and method != SESSIONS_RESUME)
"""The requests about one session, which take ``sessionId?`` (default: the current one)."""

# -- encoding and decoding -----------------------------------------------------------------------

P = TypeVar("P", bound=Wire)
_AT = re.compile(r"^(?P<what>.*) - at `\$\.?(?P<path>[^`]*)`$")
_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]+)`")


def as_object(params: Any) -> dict[str, Any]:
    """Missing params, ``null`` and an empty array (Neovim's empty Lua table) mean ``{}``."""
    if params is None or params == [] or params == ():
        return {}
    if isinstance(params, Mapping):
        return dict(params)
    raise ParamError("params", f"expected an object, got {_kind(params)}")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "an array", tuple: "an array", dict: "an object"}.get(
        type(value), type(value).__name__)


def decode_params(shape: type[P], params: Mapping[str, Any]) -> P:
    """``params`` as ``shape``; :class:`ParamError` naming the field when they do not fit.
    Unknown keys are ignored; lone surrogates (legal in JSON) become U+FFFD."""
    try:
        value = msgspec.convert(clean_value(dict(params)), shape)
    except msgspec.ValidationError as exc:
        raise _param_error(str(exc)) from None
    check = getattr(value, "check", None)
    if check is not None:
        check()
    return value


def _param_error(text: str) -> ParamError:
    missing = _MISSING.match(text)
    if missing:
        return ParamError(missing.group("field"), "is required")
    at = _AT.match(text)
    if at:
        what = at.group("what")
        what = what[:1].lower() + what[1:]
        return ParamError(at.group("path") or "params", what)
    return ParamError("params", text)


def to_wire(value: Any) -> Any:
    """A shape (or a list/dict of them) as plain JSON values, camelCase keys."""
    return msgspec.to_builtins(value)


def to_snake(value: Any) -> Any:
    """The snake_case form of a wire value (``sessions list --json`` of SPEC §9)."""
    if isinstance(value, dict):
        return {snake(k): to_snake(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_snake(v) for v in value]
    return value



def event_params(workspace: str | None, session_id: str, event: Event) -> dict[str, Any]:
    """``pseudoclaude/event`` params: ``{workspace, sessionId, kind, ...}`` (the CLI's
    ``run --json`` lines leave ``workspace`` out)."""
    head: dict[str, Any] = {} if workspace is None else {"workspace": workspace}
    head["sessionId"] = session_id
    body = msgspec.to_builtins(event)
    assert isinstance(body, dict)
    return {**head, **body}


def encode_line(value: Any) -> str:
    """One JSON line (no trailing newline), non-ASCII kept."""
    return msgspec.json.encode(value).decode("utf-8")
