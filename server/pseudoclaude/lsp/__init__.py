"""The language server (SPEC §8): thin handlers over :mod:`pseudoclaude.workspace`.

Only :mod:`.server`, :mod:`.approver` and :mod:`.logs` import pygls; :mod:`.methods`,
:mod:`.params` and :mod:`.settings` are pure.
"""
