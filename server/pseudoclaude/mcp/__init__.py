"""MCP support: the tools of Model Context Protocol servers, for the agent (pure core: no
LSP, no workspace wiring).

- :mod:`~pseudoclaude.mcp.config` — the servers of the four sources (user settings,
  ``.mcp.json``, the workspace's ``config.yaml``, ACP), merged by name;
- :mod:`~pseudoclaude.mcp.trust` — approvals of project servers, kept outside the workspace;
- :mod:`~pseudoclaude.mcp.manager` — :class:`McpManager`: states, tools, calls, shutdown, all
  on one background thread (:mod:`~pseudoclaude.mcp.loop`), through the official SDK
  (:mod:`~pseudoclaude.mcp.connection`, imported there lazily);
- :mod:`~pseudoclaude.mcp.naming`, :mod:`~pseudoclaude.mcp.tools`,
  :mod:`~pseudoclaude.mcp.results` — tool names for the model, the tool adapter, results as text.

Importing this package does not import the SDK. See ``docs/mcp.md``.
"""

from pseudoclaude.mcp.config import (
    PROJECT_FILE,
    REPOSITORY_SOURCES,
    WORKSPACE_FILE,
    ServerConfig,
    collect,
    expand,
    from_acp,
    from_settings,
    merge,
    parse_entry,
    read_project_file,
    read_workspace_file,
)
from pseudoclaude.mcp.manager import (
    ApprovalRequest,
    Decision,
    McpManager,
    ServerInfo,
    Status,
)
from pseudoclaude.mcp.naming import assign, model_name
from pseudoclaude.mcp.options import McpOptions, options_from_settings
from pseudoclaude.mcp.results import McpCallResult, result_text
from pseudoclaude.mcp.tools import McpTool, object_schema
from pseudoclaude.mcp.trust import APPROVALS_FILE, TrustStore, mcp_trust_store, workspace_key

__all__ = [
    "APPROVALS_FILE",
    "PROJECT_FILE",
    "REPOSITORY_SOURCES",
    "WORKSPACE_FILE",
    "ApprovalRequest",
    "Decision",
    "McpCallResult",
    "McpManager",
    "McpOptions",
    "McpTool",
    "ServerConfig",
    "ServerInfo",
    "Status",
    "TrustStore",
    "assign",
    "collect",
    "expand",
    "from_acp",
    "from_settings",
    "mcp_trust_store",
    "merge",
    "model_name",
    "object_schema",
    "options_from_settings",
    "parse_entry",
    "read_project_file",
    "read_workspace_file",
    "result_text",
    "workspace_key",
]
