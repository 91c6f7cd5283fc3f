"""Skills (SPEC §13 "Hooks and skills"): instructions the model loads when a task calls for
them, and the user runs as ``/<name> [arguments]``.

A skill is a folder with a ``SKILL.md`` (Claude Code's and the Agent Skills format; optional
``tools.json``) or a single ``<name>.md`` file, found in the folder's ``.PseudoClaude/skills/``,
``.claude/skills/`` and ``.agents/skills/``, the user's ``~/.PseudoClaude/skills/``, and among
the built-in ones (:mod:`.discover`). :mod:`.parse` reads one, :mod:`.render` gives what the
model reads, :mod:`.install` installs a package. Pure but for the reads and writes those name;
imports nothing of the editors' protocols.
"""

from pseudoclaude.skills.discover import (
    BUILTIN_DIR,
    Root,
    discover,
    roots,
    shown_path,
    user_skills_dir,
)
from pseudoclaude.skills.install import InstallError, Package, inspect, install
from pseudoclaude.skills.model import (
    PRECEDENCE,
    Catalog,
    Problem,
    Skill,
    SkillTool,
    Source,
    valid_name,
)
from pseudoclaude.skills.render import LOAD_SKILL, block, command, invocation, invoked, listing

__all__ = [
    "BUILTIN_DIR",
    "LOAD_SKILL",
    "PRECEDENCE",
    "Catalog",
    "InstallError",
    "Package",
    "Problem",
    "Root",
    "Skill",
    "SkillTool",
    "Source",
    "block",
    "command",
    "discover",
    "inspect",
    "install",
    "invocation",
    "invoked",
    "listing",
    "roots",
    "shown_path",
    "user_skills_dir",
    "valid_name",
]
