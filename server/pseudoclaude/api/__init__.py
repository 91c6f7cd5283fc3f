"""The wire every front end speaks: names and shapes (:mod:`.protocol`), the typed handlers
over :class:`~pseudoclaude.workspace.Workspace` (:mod:`.methods`), the words a person reads
(:mod:`.words`), the slash commands (:mod:`.commands`) and the generator of the editors'
mirrors (:mod:`.codegen`). The LSP server, the ACP agent and the CLI all use it; it imports
none of them (and neither ``pygls`` nor ``acp``).
"""
