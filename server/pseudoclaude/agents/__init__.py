"""Sub-agents (SPEC §13): the ``agent`` tool's types (:mod:`.roles`), their logs (:mod:`.log`)
and the runner of a session's sub-agents (:mod:`.run`)."""

from pseudoclaude.agents.log import (
    AgentRecord,
    agent_log,
    list_records,
    load_messages,
    running_elsewhere,
)
from pseudoclaude.agents.roles import BUILTIN, Role, Roles, load_roles, parse_role
from pseudoclaude.agents.run import RunHooks, SubAgents, section, with_section

__all__ = ["BUILTIN", "AgentRecord", "Role", "Roles", "RunHooks", "SubAgents", "agent_log",
           "list_records", "load_messages", "load_roles", "parse_role", "running_elsewhere",
           "section", "with_section"]
