"""``pseudoclaude acp``: the Agent Client Protocol over stdio (SPEC §11 "ACP").

A second thin front end over the core, like :mod:`pseudoclaude.lsp`: the same workspaces,
session logs and memory, served to ACP clients (Zed, JetBrains, codecompanion.nvim) through
the ``agent-client-protocol`` package. Nothing outside this package imports it.
"""
