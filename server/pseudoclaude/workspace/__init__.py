"""A workspace folder as every front end sees it (SPEC §13 "Sessions: many at once").

:class:`Workspace` (``folder``) holds what a folder shares and one
:class:`~pseudoclaude.workspace.session.Session` per open session; :mod:`.mcp` wires its MCP
servers; :mod:`.frontend` has what a front end calls around its requests; :mod:`.lifecycle`
deletes a session's folder safely and lists the models a session may switch to.

This package is the core's public interface: front ends (the LSP server, the ACP agent, the
CLI) import it, ``api``, ``config``, ``errors``, ``events`` and the leaves (``names``,
``words``, ``redact``, ``durable``), never a core package below (``lint-imports`` checks it).
What they need of the core is re-exported here, each name from the one module that defines
it: the approver interface they implement, the editor interface, the run's outcome, the
session ids and the words that describe a session, the transcript's items.
"""

from pseudoclaude.agent.approvals import (
    Answer,
    ApprovalRequest,
    ApprovalUnavailable,
    Approver,
    Decision,
    compact_json,
    summarize,
)
from pseudoclaude.agent.editor import Editor, OpenText, text_edits
from pseudoclaude.agent.runner import RunOutcome, summarize_arguments
from pseudoclaude.agent.tools import ToolError
from pseudoclaude.compact import ContextState
from pseudoclaude.llm.editor import Diagnostic, Position, Range
from pseudoclaude.llm.types import ToolCall
from pseudoclaude.permissions import MODES, Mode, PermissionsError
from pseudoclaude.rewind import MODES as REWIND_MODES  # what a rewind can take back
from pseudoclaude.sandbox import SandboxStatus
from pseudoclaude.session import SessionInfo, SessionNotFound, is_session_id
from pseudoclaude.session.format import describe_age, describe_size, message_to_json, render_message
from pseudoclaude.session.listing import rfc3339
from pseudoclaude.session.lock import SessionBusy
from pseudoclaude.transcript import (
    AssistantItem,
    CompactionItem,
    Item,
    NoticeItem,
    RewindItem,
    SummaryItem,
    ToolCallItem,
    UndoItem,
    UserItem,
)
from pseudoclaude.workspace.folder import (
    NEW,
    RUNNING,
    Hooks,
    IgnoredSetting,
    ResumeInfo,
    TranscriptPage,
    Workspace,
    WorkspaceBusy,
    WorkspaceError,
)
from pseudoclaude.workspace.frontend import OnWrite, on_write, preload_provider
from pseudoclaude.workspace.lifecycle import (
    ModelChoice,
    UnknownModel,
    delete_session_folder,
    model_choices,
)
from pseudoclaude.workspace.session import Session

__all__ = [
    "MODES",
    "NEW",
    "REWIND_MODES",
    "RUNNING",
    "Answer",
    "ApprovalRequest",
    "ApprovalUnavailable",
    "Approver",
    "AssistantItem",
    "CompactionItem",
    "ContextState",
    "Decision",
    "Diagnostic",
    "Editor",
    "Hooks",
    "IgnoredSetting",
    "Item",
    "Mode",
    "ModelChoice",
    "NoticeItem",
    "OnWrite",
    "OpenText",
    "PermissionsError",
    "Position",
    "Range",
    "ResumeInfo",
    "RewindItem",
    "RunOutcome",
    "SandboxStatus",
    "Session",
    "SessionBusy",
    "SessionInfo",
    "SessionNotFound",
    "SummaryItem",
    "ToolCall",
    "ToolCallItem",
    "ToolError",
    "TranscriptPage",
    "UndoItem",
    "UnknownModel",
    "UserItem",
    "Workspace",
    "WorkspaceBusy",
    "WorkspaceError",
    "compact_json",
    "delete_session_folder",
    "describe_age",
    "describe_size",
    "is_session_id",
    "message_to_json",
    "model_choices",
    "on_write",
    "preload_provider",
    "render_message",
    "rfc3339",
    "summarize",
    "summarize_arguments",
    "text_edits",
]
