/**
 * The context meter of the status bar: per workspace folder, fed by `pseudoclaude/contextUsage`
 * (tokens and their breakdown) and `pseudoclaude/context` (the same plus the auto-compact breaker).
 */
import { COMMANDS } from './commands';
import { formatCount, formatTokens } from './format';
import { BREAKDOWN_CATEGORIES, type Breakdown, type ContextResult, type ContextUsageParams } from './protocol';
import { sameUri } from './uri';

export type MeterLevel = 'normal' | 'warning' | 'error';

export interface MeterView {
  /** `PseudoClaude` before any numbers are known, else `12k/200k` (`$(warning) ` when tripped). */
  text: string;
  /** Markdown (the adapter trusts only the `TOOLTIP_COMMANDS` links in it). */
  tooltip: string;
  level: MeterLevel;
}

export interface MeterState {
  sessionId: string | null;
  estimatedTokens: number;
  contextWindow: number;
  autoCompactThreshold: number;
  autoCompactFailures?: number;
  autoCompactTripped?: boolean;
  /** What fills the context (absent from a server that does not send it). */
  breakdown?: Breakdown;
  running?: boolean;
}

/** Share of the auto-compact threshold at which the meter turns to the warning colour. */
export const WARNING_RATIO = 0.85;

/** The commands the tooltip links to (`command:` links VS Code runs only when trusted). */
export const TOOLTIP_COMMANDS: readonly string[] = [
  COMMANDS.showContext.id,
  COMMANDS.compact.id,
  COMMANDS.undoCompaction.id,
];

/** Display names of the breakdown's keys. */
export const BREAKDOWN_LABELS: Record<keyof Breakdown, string> = {
  system: 'System',
  rules: 'Rules',
  memory: 'Memory',
  skills: 'Skills',
  tools: 'Tools',
  summary: 'Summary',
  messages: 'Messages',
  toolCalls: 'Tool calls',
  toolResults: 'Tool results',
  spilled: 'Spilled',
  free: 'Free',
  reserved: 'Reserved',
};

export interface BreakdownRow {
  key: keyof Breakdown;
  label: string;
  tokens: number;
  /** Share of the context window: `12%`, `<1%` for a small non-zero count, `—` without a window. */
  share: string;
}

/** `12%` of the window; `<1%` for a count that rounds to nothing; `—` when the window is unknown. */
export function formatShare(tokens: number, window: number): string {
  if (!(window > 0)) {
    return '—';
  }
  const pct = (Math.max(0, tokens) / window) * 100;
  if (pct > 0 && pct < 0.5) {
    return '<1%';
  }
  return `${Math.round(pct)}%`;
}

/**
 * The rows of a breakdown: the ten categories (which add up to the estimate), then `free` and
 * `reserved`; each with its share of the context window. Negative or missing counts show as 0.
 */
export function breakdownRows(b: Breakdown, contextWindow: number): BreakdownRow[] {
  const keys: (keyof Breakdown)[] = [...BREAKDOWN_CATEGORIES, 'free', 'reserved'];
  return keys.map((key) => {
    const tokens = Math.max(0, Number(b[key]) || 0);
    return { key, label: BREAKDOWN_LABELS[key], tokens, share: formatShare(tokens, contextWindow) };
  });
}

/** A Markdown table of the breakdown (free and reserved in italics after the categories). */
export function breakdownTable(b: Breakdown, contextWindow: number): string {
  const lines = ['| context | tokens | share |', '|:--|--:|--:|'];
  for (const row of breakdownRows(b, contextWindow)) {
    const label = row.key === 'free' || row.key === 'reserved' ? `*${row.label}*` : row.label;
    lines.push(`| ${label} | ${formatCount(row.tokens)} | ${row.share} |`);
  }
  return lines.join('\n');
}

/** `text` with the Markdown punctuation escaped (folder names go into the tooltip). */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, (c) => `\\${c}`);
}

export function meterView(state: MeterState | undefined, folderName?: string): MeterView {
  const where = folderName ? ` (${escapeMarkdown(folderName)})` : '';
  if (!state || (state.sessionId === null && state.estimatedTokens === 0)) {
    const running = state?.running ? '$(sync~spin) ' : '';
    return {
      text: `${running}PseudoClaude`,
      tooltip: `PseudoClaude${where}: no conversation yet. Click for details.`,
      level: 'normal',
    };
  }
  const tokens = `${formatTokens(state.estimatedTokens)}/${formatTokens(state.contextWindow)}`;
  const blocks = [
    `**PseudoClaude context${where}**: ${formatCount(state.estimatedTokens)} of ` +
      `${formatCount(state.contextWindow)} tokens`,
  ];
  if (state.breakdown) {
    blocks.push(breakdownTable(state.breakdown, state.contextWindow));
  }
  const facts = [`Auto-compact at ${formatCount(state.autoCompactThreshold)} tokens`];
  if (state.sessionId) {
    facts.push(`Session ${state.sessionId}`);
  }
  blocks.push(facts.join(' · '));
  let level: MeterLevel = 'normal';
  if (state.autoCompactTripped) {
    level = 'error';
    blocks.push(
      `Auto-compact stopped after ${state.autoCompactFailures ?? 3} failures: ` +
        `run "${COMMANDS.compact.title}" to compact by hand.`,
    );
  } else if (
    state.autoCompactThreshold > 0 &&
    state.estimatedTokens >= state.autoCompactThreshold * WARNING_RATIO
  ) {
    level = 'warning';
    blocks.push('Close to the auto-compact threshold.');
  }
  if (state.running) {
    blocks.push('A run is in progress.');
  }
  blocks.push(
    `[Details](command:${COMMANDS.showContext.id}) · [Compact…](command:${COMMANDS.compact.id}) · ` +
      `[Undo compaction](command:${COMMANDS.undoCompaction.id})`,
  );
  const icon = level === 'error' ? '$(warning) ' : state.running ? '$(sync~spin) ' : '';
  return { text: `${icon}${tokens}`, tooltip: blocks.join('\n\n'), level };
}

/** Meter states by workspace folder URI. */
export class MeterStore {
  private readonly states = new Map<string, MeterState>();

  get(workspace: string): MeterState | undefined {
    for (const [key, state] of this.states) {
      if (sameUri(key, workspace)) {
        return state;
      }
    }
    return undefined;
  }

  private put(workspace: string, state: MeterState): void {
    for (const key of this.states.keys()) {
      if (sameUri(key, workspace)) {
        this.states.set(key, state);
        return;
      }
    }
    this.states.set(workspace, state);
  }

  /** A `pseudoclaude/contextUsage` notification: tokens change, the breaker state stays. */
  usage(u: ContextUsageParams): void {
    const old = this.get(u.workspace);
    const sameSession = old?.sessionId === u.sessionId;
    this.put(u.workspace, {
      sessionId: u.sessionId,
      estimatedTokens: u.estimatedTokens,
      contextWindow: u.contextWindow,
      autoCompactThreshold: u.autoCompactThreshold,
      breakdown: u.breakdown ?? (sameSession ? old?.breakdown : undefined),
      autoCompactFailures: sameSession ? old?.autoCompactFailures : 0,
      autoCompactTripped: sameSession ? old?.autoCompactTripped : false,
      running: old?.running,
    });
  }

  /** A `pseudoclaude/context` answer: the full picture. */
  context(workspace: string, c: ContextResult): void {
    const old = this.get(workspace);
    this.put(workspace, {
      sessionId: c.sessionId,
      estimatedTokens: c.estimatedTokens,
      contextWindow: c.contextWindow,
      autoCompactThreshold: c.autoCompactThreshold,
      autoCompactFailures: c.autoCompactFailures,
      autoCompactTripped: c.autoCompactTripped,
      breakdown: c.breakdown,
      running: old?.running,
    });
  }

  setRunning(workspace: string, running: boolean): void {
    const old = this.get(workspace);
    if (old) {
      this.put(workspace, { ...old, running });
    }
  }

  clear(): void {
    this.states.clear();
  }
}
