"""The agent: the ReAct runner, its tools and the approval gate (SPEC §6).

- :mod:`pseudoclaude.agent.tools` — the six tools, their JSON envelope, strict argument
  validation and workspace confinement (:class:`~pseudoclaude.agent.tools.ToolRegistry`);
- :mod:`pseudoclaude.agent.approvals` — the approval policy (``allow``/``ask``/``deny`` per tool
  class), the asynchronous :class:`~pseudoclaude.agent.approvals.Approver` interface and the
  CLI's terminal approver.
"""
