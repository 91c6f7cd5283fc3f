/**
 * Permission modes and the permission listing (`pseudoclaude/mode`, `pseudoclaude/permissions`):
 * the modes in order with their one-line meaning (the chat's mode picker, Shift+Tab, the Set
 * Permission Mode quick pick), and the Show Permissions report. Pure: no `vscode`, no DOM (the
 * webview bundles it too).
 */
import type { PermissionDecision, PermissionMode, PermissionsResult, SandboxState } from './protocol';

/** Every mode, in the order the picker lists them and Shift+Tab cycles through them. */
export const MODES: readonly PermissionMode[] = ['strict', 'default', 'acceptEdits', 'plan', 'bypassPermissions'];

/** What each mode does, in one line (as the server's `words.MODE_MEANINGS`). */
export const MODE_MEANINGS: Record<PermissionMode, string> = {
  strict: 'every tool asks first',
  default: 'edits and commands follow your approval settings',
  acceptEdits: 'edits run without asking; commands still ask',
  plan: 'only reading tools run until you approve a plan',
  bypassPermissions: 'nothing asks; deny rules still hold',
};

export function isMode(value: unknown): value is PermissionMode {
  return typeof value === 'string' && (MODES as readonly string[]).includes(value);
}

/**
 * The modes offered, in the picker's order (unknown names dropped); none known: every mode but
 * `bypassPermissions` (which only the user's own settings turn on).
 */
export function offeredModes(modes: readonly string[] | null | undefined): PermissionMode[] {
  if (!modes) {
    return MODES.filter((m) => m !== 'bypassPermissions');
  }
  return MODES.filter((m) => modes.includes(m));
}

/** The mode after `current` among `offered` (Shift+Tab), wrapping around; undefined when there is no other. */
export function nextMode(offered: readonly PermissionMode[], current: PermissionMode | null): PermissionMode | undefined {
  if (offered.length === 0) {
    return undefined;
  }
  const at = current === null ? -1 : offered.indexOf(current);
  const next = offered[(at + 1) % offered.length];
  return next === current ? undefined : next;
}

/** The sandbox in a few words: `on`, or `off (why)`. */
export function sandboxText(sandbox: SandboxState | null | undefined): string {
  if (!sandbox) {
    return 'unknown';
  }
  if (sandbox.enabled) {
    return sandbox.reason ? `on (${sandbox.reason})` : 'on';
  }
  return `off${sandbox.reason ? ` (${sandbox.reason})` : ''}`;
}

const DECISION_TITLES: Record<PermissionDecision, string> = {
  deny: 'Deny: refused',
  ask: 'Ask: asked about first',
  allow: 'Allow: run without asking',
};

const SOURCE_NAMES: Record<string, string> = {
  user: '~/.PseudoClaude/permissions.yaml',
  project: '.PseudoClaude/permissions.yaml',
  local: '.PseudoClaude/permissions.local.yaml',
  settings: 'the permissions setting',
  session: 'this session ("Allow for this session")',
};

/** A rule's source, with where it comes from. */
export function sourceText(source: string): string {
  const where = SOURCE_NAMES[source];
  return where ? `${source}: ${where}` : source;
}

function code(text: string): string {
  // A code span that holds its own backticks.
  const fence = text.includes('`') ? '``' : '`';
  return `${fence}${fence === '``' ? ` ${text} ` : text}${fence}`;
}

/**
 * The Show Permissions report (Markdown): the mode and what it means, the modes offered, the
 * sandbox, the rules by decision (deny, ask, allow) with their source, the problems, and the
 * folder's permission files that wait for an approval.
 */
export function permissionsReport(r: PermissionsResult, folder: string, sessionId?: string | null): string {
  const lines: string[] = [`# Permissions of ${folder}`, ''];
  const mode = isMode(r.mode) ? r.mode : undefined;
  lines.push(
    `- **Mode:** ${code(r.mode)}${mode ? ` — ${MODE_MEANINGS[mode]}` : ''}${sessionId ? ` (session ${code(sessionId)})` : ''}`,
    `- **Modes offered:** ${offeredModes(r.modes).map(code).join(', ') || '(none)'}` +
      (r.modes.includes('bypassPermissions') ? '' : ' (bypassPermissions needs `permissions.allowBypass` in your user settings)'),
    `- **Sandbox:** ${sandboxText(r.sandbox)}`,
    '',
  );
  lines.push('## Rules', '');
  if (r.rules.length === 0) {
    lines.push('No rules: the mode decides every call.', '');
  }
  for (const decision of ['deny', 'ask', 'allow'] as const) {
    const rules = r.rules.filter((x) => x.decision === decision);
    if (rules.length === 0) {
      continue;
    }
    lines.push(`### ${DECISION_TITLES[decision]}`, '');
    for (const rule of rules) {
      lines.push(`- ${code(rule.rule)} — ${sourceText(rule.source)}`);
    }
    lines.push('');
  }
  lines.push('## Problems', '');
  lines.push(...(r.problems.length === 0 ? ['None.'] : r.problems.map((p) => `- ${p}`)), '');
  lines.push('## Waiting for your approval', '');
  if (r.waiting.length === 0) {
    lines.push('None: every permission file of this folder is in effect.');
  } else {
    lines.push(
      "This folder's own permission files: their allow rules (and a wider default mode) are ignored until you approve them.",
      '',
      ...r.waiting.map((w) => `- ${code(w)}`),
    );
  }
  lines.push('');
  return lines.join('\n');
}
