"""The permission engine's decision core: may a tool call run, must the user be asked, or is it
refused (docs/permissions.md).

Pure logic over the calls it is given; it knows nothing of the agent, the session or the front
ends. Modules:

* :mod:`~pseudoclaude.permissions.rules`: ``Tool(pattern)`` rules, parsed and matched;
* :mod:`~pseudoclaude.permissions.words`: a command's words as the text rules see;
* :mod:`~pseudoclaude.permissions.shell`: a shell line split into its simple commands
  (tree-sitter's bash grammar), wrappers looked through;
* :mod:`~pseudoclaude.permissions.danger`: the dangerous-command list;
* :mod:`~pseudoclaude.permissions.paths`: a file tool's path, relative to the workspace;
* :mod:`~pseudoclaude.permissions.engine`: modes, precedence, the verdict, "allow always";
* :mod:`~pseudoclaude.permissions.files`: the permission files and the setting, what waits for
  the user's approval, and the local file "allow always" writes.
"""

from __future__ import annotations

from pseudoclaude.permissions.engine import (
    DECISIONS,
    MODES,
    PLAN_REASON,
    Approvals,
    Call,
    Decision,
    Mode,
    PermissionEngine,
    RuleSet,
    RuleSource,
    Source,
    Verdict,
)
from pseudoclaude.permissions.files import (
    Approved,
    Loaded,
    WaitingFile,
    add_allow_rule,
    load_permissions,
    local_file,
    project_file,
    user_file,
    write_local_rule,
)
from pseudoclaude.permissions.rules import PermissionsError, Rule, RuleError, parse_rule

__all__ = [
    "DECISIONS",
    "MODES",
    "PLAN_REASON",
    "Approvals",
    "Approved",
    "Call",
    "Decision",
    "Loaded",
    "Mode",
    "PermissionEngine",
    "PermissionsError",
    "Rule",
    "RuleError",
    "RuleSet",
    "RuleSource",
    "Source",
    "Verdict",
    "WaitingFile",
    "add_allow_rule",
    "load_permissions",
    "local_file",
    "parse_rule",
    "project_file",
    "user_file",
    "write_local_rule",
]
