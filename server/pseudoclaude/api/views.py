"""The context, the memory, rewinds and the status as text: the views the CLI prints and ACP's
``/context``, ``/memory``, ``/rewind`` and ``/status`` show (one wording, over the wire
results; the chats show the status's own ``text``)."""

from __future__ import annotations

from pseudoclaude.api import protocol as p
from pseudoclaude.memory.index import same_text
from pseudoclaude.words import plural

FILE_ACTIONS = {"restore": "restored", "delete": "deleted", "create": "recreated"}
"""What a code rewind does to a file, as a person reads it."""
CONFLICT = "changed outside the agent since: left alone unless forced"


def describe_context(c: p.ContextResult) -> str:
    share = c.estimated_tokens / c.context_window if c.context_window else 0.0
    lines = [f"session: {c.session_id or '(none yet)'} · {plural(c.message_count, 'message')}",
             f"context: {c.estimated_tokens:,} of {c.context_window:,} tokens ({share:.0%}); "
             f"automatic compaction at {c.auto_compact_threshold:,}"]
    if c.auto_compact_tripped:
        lines.append(f"automatic compaction is off after {c.auto_compact_failures} failures "
                     "in a row (a manual compact turns it back on)")
    elif c.auto_compact_failures:
        lines.append("automatic compaction failed "
                     f"{plural(c.auto_compact_failures, 'time')} in a row")
    lines.append(f"mode: {c.mode}")
    if c.sandbox is not None:
        lines.append(sandbox_line(c.sandbox))
    covered = c.checkpoints
    lines.append("checkpoints: " + ("every file" if covered.covers == "all"
                                    else "only the agent's own file writes")
                 + (f" ({covered.problem})" if isinstance(covered.problem, str) else "")
                 + (f"; {plural(len(covered.skipped), 'file')} over 1 MiB not kept"
                    if covered.skipped else ""))
    for ignored in c.ignored_settings:
        lines.append(f"not applied: {ignored.key}: {ignored.value} ({ignored.reason})")
    lines.append("")
    lines.extend(breakdown_table(c.breakdown, c.context_window))
    if c.rules:
        lines.append("")
        lines.extend(rules_table(c.rules))
    return "\n".join(lines)


def rules_table(rules: list[p.RuleFile]) -> list[str]:
    """The instruction files counted under ``rules``, in the prompt's order: path, tokens
    (they add up to the breakdown's ``rules``), source."""
    width = max(len("instructions"), *(len(r.path) for r in rules))
    digits = max(len("tokens"), *(len(f"{r.tokens:,}") for r in rules))
    return [f"{'instructions':<{width}} {'tokens':>{digits}}  source",
            *(f"{r.path:<{width}} {r.tokens:>{digits},}  {r.source}" for r in rules)]


def sandbox_line(s: p.SandboxState) -> str:
    """``sandbox: on`` or ``sandbox: off (why)``."""
    why = f" ({s.reason})" if isinstance(s.reason, str) and s.reason else ""
    return f"sandbox: {'on' if s.enabled else 'off'}{why}"


def permissions_text(r: p.PermissionsResult) -> str:
    """The mode, the rules by decision with their source, problems, the sandbox, what
    waits (``pseudoclaude permissions``, ``/permissions``)."""
    lines = [f"mode: {r.mode} (available: {', '.join(r.modes)})", sandbox_line(r.sandbox)]
    for decision in ("deny", "ask", "allow"):
        rules = [rule for rule in r.rules if rule.decision == decision]
        lines.append(f"{decision}: " + ("none" if not rules else ""))
        lines.extend(f"  {rule.rule}  ({rule.source})" for rule in rules)
    for name in r.waiting:
        lines.append(f"waiting for your approval: the allow rules of {name} "
                     "(pseudoclaude permissions approve)")
    for problem in r.problems:
        lines.append(f"problem: {problem}")
    return "\n".join(lines)


def describe_turns(r: p.TurnsResult) -> str:
    """The prompts a rewind or a fork can go back to, oldest first."""
    if not r.turns:
        return "the session has no prompt to rewind to"
    width = len(str(r.turns[-1].turn))
    lines = [f"{t.turn:>{width}}. {_one_line(t.prompt)}"
             + (f"  ({plural(t.files_changed, 'file')} changed)" if t.files_changed else "")
             for t in r.turns]
    return "\n".join(lines)


def describe_rewind_preview(r: p.RewindPreviewResult) -> str:
    """What a rewind would do: its line, then one line per file."""
    lines = [r.message]
    lines += [f"  {FILE_ACTIONS[f.action]:<9} {f.path}" + (f"  ({CONFLICT})" if f.conflict
                                                           else "") for f in r.files]
    return "\n".join(lines)


def describe_rewind(r: p.RewindResult) -> str:
    lines = [r.message]
    lines += [f"  left alone: {path} ({CONFLICT.split(':')[0]})" for path in r.conflicts]
    return "\n".join(lines)


def _one_line(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


BREAKDOWN_ROWS = (
    ("system", "system"), ("rules", "rules"), ("memory", "memory"), ("skills", "skills"),
    ("tools", "tools"),
    ("summary", "summary"), ("messages", "messages"), ("tool calls", "tool_calls"),
    ("tool results", "tool_results"), ("spilled", "spilled"), ("free", "free"),
    ("reserved", "reserved"))
"""Label and field of each row of the breakdown table, in the order of SPEC §11."""


def breakdown_table(b: p.Breakdown, window: int) -> list[str]:
    """What fills the context, one row per category: tokens and share of the window (the
    first ten add up to the estimate; ``free`` and ``reserved`` are beside them)."""
    rows = [(label, getattr(b, name)) for label, name in BREAKDOWN_ROWS]
    width = max(len(f"{tokens:,}") for _, tokens in rows)
    lines = [f"{'category':<13} {'tokens':>{width}}   share"]
    for label, tokens in rows:
        share = tokens / window if window else 0.0
        lines.append(f"{label:<13} {tokens:>{width},} {share:>7.1%}")
    return lines


def describe_memory(m: p.MemoryShowResult) -> str:
    lines: list[str] = []
    for store in m.stores:
        lines.append(f"{store.level} memory ({store.dir}): {plural(len(store.notes), 'note')}")
        lines += [f"  [{n.type}] {n.title}"
                  + ("" if not n.summary or same_text(n.title, n.summary) else f" — {n.summary}")
                  + f" ({n.filename})" for n in store.notes]
    lines.append("")
    lines.append("index in the system prompt"
                 + (" (truncated):" if m.truncated else ":") if m.index else
                 "the memory index is empty")
    if m.index:
        lines.append(m.index.rstrip("\n"))
    h = m.health
    share = max(h.lines / h.max_lines, h.bytes / h.max_bytes) if h.max_lines and h.max_bytes \
        else 0.0
    lines += ["", f"index size: {h.lines}/{h.max_lines} lines, {h.bytes:,}/{h.max_bytes:,} "
                  f"bytes ({share:.0%} of the limit)"]
    return "\n".join(lines)


MCP_STATUS = {"starting": "not started yet", "ready": "ready", "failed": "failed",
              "needsApproval": "waits for your approval", "disabled": "disabled"}
MCP_SOURCE = {"user": "your settings", "project": ".mcp.json", "workspace": "config.yaml",
              "acp": "the editor"}


def describe_mcp(r: p.McpListResult) -> str:
    """The MCP servers: name, where configured, status, tools (or why not)."""
    if not r.servers:
        return ("no MCP servers are configured (add them to .mcp.json, the mcp.servers "
                "setting or config.yaml)")
    lines = []
    for s in r.servers:
        lines.append(f"{s.name} ({MCP_SOURCE.get(s.source, s.source)}): "
                     f"{MCP_STATUS.get(s.status, s.status)}"
                     + (f", {plural(len(s.tools), 'tool')}" if s.status == "ready" else ""))
        if s.error:
            lines.append(f"  {s.error}")
        if s.tools:
            lines.append("  " + ", ".join(s.tools))
    return "\n".join(lines)


HOOK_STATUS = {"active": "runs", "needsApproval": "waits for your approval",
               "denied": "declined (it does not run)", "invalid": "cannot be read"}
HOOK_SOURCE = {"user": "~/.PseudoClaude/hooks.yaml", "workspace": ".PseudoClaude/hooks.yaml",
               "settings": "the hooks setting"}


def describe_hooks(r: p.HooksListResult) -> str:
    """The hooks by event: name, what each runs, where it is defined and whether it runs (or
    why it cannot be read)."""
    if not r.hooks:
        return ("no hooks are defined (add them to ~/.PseudoClaude/hooks.yaml, the folder's "
                ".PseudoClaude/hooks.yaml or the hooks setting)")
    lines: list[str] = []
    events = list(dict.fromkeys(h.event for h in r.hooks))
    for event in events:
        lines.append(f"{event or '(no event)'}:")
        for h in (h for h in r.hooks if h.event == event):
            lines.append(f"  {h.name}  {h.action}".rstrip() + f"  ({HOOK_SOURCE[h.source]}): "
                         f"{HOOK_STATUS[h.status]}")
            if isinstance(h.error, str):
                lines.append(f"    {h.error}")
    return "\n".join(lines)


SKILL_SOURCE = {"workspace": ".PseudoClaude/skills", "user": "~/.PseudoClaude/skills",
                "claude": ".claude/skills", "agents": ".agents/skills", "builtin": "built-in"}
"""Where a skill is defined, as a person reads it."""


def describe_skills(r: p.SkillsListResult) -> str:
    """The skills: name, where each is defined, whether the session loaded it, what it
    does; then the problems (file, line, why)."""
    lines: list[str] = []
    if not r.skills:
        lines.append("no skills (add them to the folder's .PseudoClaude/skills/, .claude/skills/"
                     " or .agents/skills/, or to ~/.PseudoClaude/skills/)")
    for s in r.skills:
        head = s.name + (f" {s.hint}" if isinstance(s.hint, str) else "")
        flags = [SKILL_SOURCE[s.source]] + (["loaded"] if s.loaded else []) + (
            [] if s.model else ["you run it only"]) + ([] if s.command else ["no /command"]) + (
            [plural(len(s.tools), "tool")] if s.tools else [])
        lines += [f"/{head}  ({', '.join(flags)})", f"    {s.description}"]
    if r.problems:
        lines += ["", f"{plural(len(r.problems), 'problem')} (these are not loaded):"]
        lines += [f"  {k.path}" + (f":{k.line}" if k.line is not None else "") +
                  f": {k.message}" for k in r.problems]
    return "\n".join(lines)


AGENT_STATUS = {"running": "running", "completed": "completed", "failed": "failed",
                "canceled": "stopped", "max_turns": "stopped at its turn limit"}


def describe_agents(r: p.AgentsResult) -> str:
    """A session's sub-agents: id, type and name, status, tokens, when it started; then what
    it was asked."""
    if r.session_id is None:
        return "no session yet"
    if not r.agents:
        return f"session {r.session_id}: no sub-agents"
    lines = [f"session {r.session_id}: {plural(len(r.agents), 'sub-agent')}"]
    for a in r.agents:
        who = a.subagent_type + (f" {a.name!r}" if a.name else "")
        used = f"{a.usage.input_tokens:,} in / {a.usage.output_tokens:,} out"
        lines += [f"{a.agent_id}  {who}  {AGENT_STATUS.get(a.status, a.status)}  {used}  "
                  f"{a.started_at}", f"    {_one_line(a.description)}"]
    return "\n".join(lines)


def render_status(r: p.StatusResult) -> str:
    """A session at a glance (``/status``, ``pseudoclaude status``): the session, its mode,
    the model, the tokens, the sandbox, the MCP servers, the hooks and the skills."""
    t = r.tokens
    share = t.used / t.window if t.window else 0.0
    lines = [f"session: {r.session or 'none yet (the next prompt starts one)'}",
             f"mode: {r.mode}",
             f"model: {r.model} ({r.provider})" if r.provider
             else "model: none (no model provider is configured)",
             f"tokens: {t.used:,} of {t.window:,} in context ({share:.0%}); automatic "
             f"compaction at {t.auto_compact_threshold:,}",
             "billed: " + billed_text(t.billed),
             sandbox_line(r.sandbox)]
    lines += _listed("MCP", [f"{s.name} ({MCP_SOURCE.get(s.source, s.source)}): "
                             f"{MCP_STATUS.get(s.status, s.status)}"
                             + (f", {plural(len(s.tools), 'tool')}" if s.status == "ready"
                                else "") + (f" ({s.error})" if s.error else "")
                             for s in r.mcp])
    lines += _listed("hooks", [f"{h.name} ({h.event}, {h.source}): {h.status}"
                               for h in r.hooks])
    lines += _listed("skills", [f"{s.name} ({s.source})" + (", loaded" if s.loaded else "")
                                for s in r.skills])
    lines += [f"not applied: {i.key}: {i.value} ({i.reason})" for i in r.ignored_settings]
    return "\n".join(lines)


def billed_text(u: p.SessionUsage | None) -> str:
    """What the session's model requests were billed, in tokens."""
    if u is None:
        return "nothing reported yet"
    cache = [f"{n:,} {what}" for n, what in ((u.cache_read_tokens, "cache read"),
                                            (u.cache_write_tokens, "cache write")) if n]
    return ", ".join([f"{u.input_tokens:,} input", *cache, f"{u.output_tokens:,} output"])


def _listed(label: str, rows: list[str]) -> list[str]:
    """``label: none``, or ``label:`` and one indented row each."""
    return [f"{label}: none"] if not rows else [f"{label}:", *(f"  {row}" for row in rows)]
