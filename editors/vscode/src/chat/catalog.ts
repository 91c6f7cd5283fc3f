/**
 * The chat's Show Hooks and Show Skills quick picks, built from `pseudoclaude/hooks/list` and
 * `pseudoclaude/skills/list`. Pure: no `vscode`, no DOM.
 */
import type { PickItem } from '../pickers';
import type { HookEntry, HookSource, HookStatus, SkillEntry, SkillProblem, SkillSource, SkillsListResult } from '../protocol';

/** What choosing an item of Show Hooks does. */
export type HookPick = { kind: 'review' } | { kind: 'show' };

/** What choosing an item of Show Skills does. */
export type SkillPick = { kind: 'skill'; skill: SkillEntry } | { kind: 'problem' };

const HOOK_SOURCES: Record<HookSource, string> = {
  user: '~/.PseudoClaude/hooks.yaml',
  workspace: '.PseudoClaude/hooks.yaml',
  settings: 'settings',
};

const HOOK_STATUS: Record<HookStatus, { icon: string; words: string }> = {
  active: { icon: '$(pass)', words: 'runs' },
  needsApproval: { icon: '$(shield)', words: 'waits for your approval' },
  denied: { icon: '$(circle-slash)', words: 'declined' },
  invalid: { icon: '$(error)', words: 'cannot be read' },
};

const SKILL_SOURCES: Record<SkillSource, string> = {
  workspace: '.PseudoClaude/skills',
  claude: '.claude/skills',
  agents: '.agents/skills',
  user: '~/.PseudoClaude/skills',
  builtin: 'built in',
};

export const REVIEW_HOOKS = "Review this folder's hooks…";

/** Whether the folder's own `hooks.yaml` has hooks that do not run for want of an approval. */
export function hooksWait(hooks: readonly HookEntry[]): boolean {
  return hooks.some((h) => h.source === 'workspace' && (h.status === 'needsApproval' || h.status === 'denied'));
}

/**
 * Every hook: its name, event, where it is defined and whether it runs (what it runs below, or
 * why it cannot be read); first, when the folder's own hooks wait, the entry that asks again.
 */
export function hookItems(hooks: readonly HookEntry[]): PickItem<HookPick>[] {
  const items: PickItem<HookPick>[] = [];
  if (hooksWait(hooks)) {
    items.push({
      label: `$(shield) ${REVIEW_HOOKS}`,
      description: 'let .PseudoClaude/hooks.yaml run',
      value: { kind: 'review' },
    });
  }
  for (const h of hooks) {
    const status = HOOK_STATUS[h.status] ?? { icon: '$(question)', words: h.status };
    items.push({
      label: `${status.icon} ${h.name}`,
      description: [h.event, HOOK_SOURCES[h.source] ?? h.source, status.words].join(' · '),
      detail: h.error ?? h.action,
      value: { kind: 'show' },
    });
  }
  return items;
}

/** Every skill (`/<name>`, where it is defined, loaded or not, what it does), then those that cannot be read. */
export function skillItems(result: SkillsListResult): PickItem<SkillPick>[] {
  const items: PickItem<SkillPick>[] = result.skills.map((s) => ({
    label: `${s.loaded ? '$(check) ' : ''}${s.command ? '/' : ''}${s.name}${s.hint ? ` ${s.hint}` : ''}`,
    description: [SKILL_SOURCES[s.source] ?? s.source, s.loaded ? 'loaded' : '', s.command ? '' : 'the model loads it'].filter(Boolean).join(' · '),
    detail: s.description,
    value: { kind: 'skill', skill: s },
  }));
  if (result.problems.length > 0) {
    items.push({ label: 'Cannot be read', separator: true, value: { kind: 'problem' } });
    items.push(...result.problems.map((p) => problemItem(p)));
  }
  return items;
}

function problemItem(p: SkillProblem): PickItem<SkillPick> {
  return {
    label: `$(error) ${p.name || p.path}`,
    description: SKILL_SOURCES[p.source] ?? p.source,
    detail: `${p.path}${p.line !== null ? `:${p.line}` : ''}: ${p.message}`,
    value: { kind: 'problem' },
  };
}

/** What a review of the folder's hooks changed, in one line. */
export function reviewedNotice(before: readonly HookEntry[], after: readonly HookEntry[]): { level: 'info' | 'warning'; text: string } {
  const ours = (list: readonly HookEntry[]) => list.filter((h) => h.source === 'workspace' && h.status !== 'invalid');
  const running = ours(after).filter((h) => h.status === 'active');
  if (!hooksWait(after) && running.length > 0) {
    const names = running.map((h) => h.name).join(', ');
    return { level: 'info', text: `This folder's hooks run now: ${names}.` };
  }
  if (ours(before).length === 0 && ours(after).length === 0) {
    return { level: 'info', text: "This folder has no hooks of its own to approve (.PseudoClaude/hooks.yaml)." };
  }
  return { level: 'warning', text: "This folder's hooks stay off: they were not approved." };
}
