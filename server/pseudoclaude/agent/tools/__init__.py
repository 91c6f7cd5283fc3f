"""The agent's tools (SPEC §6): ``read_file``, ``write_file``, ``edit_file``, ``run_command``,
``find_files``, ``search_code``, their JSON envelope and workspace confinement.

The runner uses :class:`ToolRegistry`; the modules hold the contract of each tool.
"""

from pseudoclaude.agent.tools.base import (
    MAX_CONTENT_BYTES,
    MAX_READ_BYTES,
    TRUNCATION_MARKER,
    ApprovalClass,
    Param,
    Preview,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
    envelope,
)
from pseudoclaude.agent.tools.command import child_environment
from pseudoclaude.agent.tools.paths import Confinement
from pseudoclaude.agent.tools.registry import ToolRegistry, default_tools

__all__ = [
    "MAX_CONTENT_BYTES",
    "MAX_READ_BYTES",
    "TRUNCATION_MARKER",
    "ApprovalClass",
    "Confinement",
    "Param",
    "Preview",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "ToolRegistry",
    "child_environment",
    "default_tools",
    "envelope",
]
