"""The language server (SPEC §8): thin handlers over :mod:`pseudoclaude.workspace`.

Only :mod:`.server`, :mod:`.approver` and :mod:`.logs` import pygls; :mod:`.protocol` (every
name and shape on the wire), :mod:`.methods` (the typed handlers, also used by the CLI) and
:mod:`.settings` are pure.
"""
