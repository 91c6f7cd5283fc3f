/**
 * The context meter of the status bar: per workspace folder, fed by `pseudoclaude/contextUsage`
 * (tokens) and `pseudoclaude/context` (tokens plus the auto-compact breaker).
 */
import { formatCount, formatTokens } from './format';
import type { ContextResult, ContextUsageParams } from './protocol';
import { sameUri } from './uri';

export type MeterLevel = 'normal' | 'warning' | 'error';

export interface MeterView {
  /** `PseudoClaude` before any numbers are known, else `12k/200k` (`$(warning) ` when tripped). */
  text: string;
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
  running?: boolean;
}

/** Share of the auto-compact threshold at which the meter turns to the warning colour. */
export const WARNING_RATIO = 0.85;

export function meterView(state: MeterState | undefined, folderName?: string): MeterView {
  const where = folderName ? ` (${folderName})` : '';
  if (!state || (state.sessionId === null && state.estimatedTokens === 0)) {
    const running = state?.running ? '$(sync~spin) ' : '';
    return {
      text: `${running}PseudoClaude`,
      tooltip: `PseudoClaude${where}: no conversation yet. Click for details.`,
      level: 'normal',
    };
  }
  const tokens = `${formatTokens(state.estimatedTokens)}/${formatTokens(state.contextWindow)}`;
  const lines = [
    `PseudoClaude context${where}: ${formatCount(state.estimatedTokens)} of ` +
      `${formatCount(state.contextWindow)} tokens`,
    `Auto-compact at ${formatCount(state.autoCompactThreshold)} tokens`,
  ];
  if (state.sessionId) {
    lines.push(`Session ${state.sessionId}`);
  }
  let level: MeterLevel = 'normal';
  if (state.autoCompactTripped) {
    level = 'error';
    lines.push(
      `Auto-compact stopped after ${state.autoCompactFailures ?? 3} failures: ` +
        'run "PseudoClaude: Compact Context" to compact by hand.',
    );
  } else if (
    state.autoCompactThreshold > 0 &&
    state.estimatedTokens >= state.autoCompactThreshold * WARNING_RATIO
  ) {
    level = 'warning';
    lines.push('Close to the auto-compact threshold.');
  }
  if (state.running) {
    lines.push('A run is in progress.');
  }
  const icon = level === 'error' ? '$(warning) ' : state.running ? '$(sync~spin) ' : '';
  return { text: `${icon}${tokens}`, tooltip: lines.join('\n'), level };
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
