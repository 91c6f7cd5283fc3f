/**
 * The words of Compact Context and Undo Compaction (SPEC §11 "Compaction preview", "Undo",
 * "Summary fact check"): what a preview says before asking, what a compaction and an undo report.
 * Pure: the controller shows these through the `Ui` port.
 */
import { formatBytes, formatCount, formatTokens, plural } from './format';
import type { CompactPreviewResult, CompactResult, FactCheck, UndoResult } from './protocol';

/** The action of the confirmation dialog (VS Code adds Cancel itself). */
export const COMPACT_ACTION = 'Compact';

/** What Compact Context does with a preview: ask first, or only say why there is nothing to do. */
export type PreviewPlan =
  | { kind: 'confirm'; message: string; detail: string }
  | { kind: 'nothing'; message: string };

/** A preview's `reason` in words (unknown reasons as the server said them). */
export function previewReason(reason: string | undefined): string {
  switch (reason) {
    case 'no session':
      return 'no conversation yet';
    case 'nothing to summarize':
      return 'everything is in the recent window';
    case 'would not shrink':
      return 'a summary would not make it smaller';
    case undefined:
    case '':
      return 'nothing older than the recent window';
    default:
      return reason;
  }
}

function spillLine(preview: CompactPreviewResult): string | undefined {
  const spill = preview.spill;
  if (!spill || spill.results <= 0) {
    return undefined;
  }
  return `${plural(spill.results, 'tool result')} (${formatBytes(spill.bytes)}) would be offloaded to files.`;
}

/** The dialog (or the message) of a preview, for the folder `where`. */
export function previewPlan(preview: CompactPreviewResult, where: string): PreviewPlan {
  const estimate =
    `Estimate: ${formatCount(preview.beforeTokens)} → about ` +
    `${formatCount(preview.estimatedAfterTokens)} tokens.`;
  const spill = spillLine(preview);
  if (preview.wouldSummarize) {
    const lines = [
      `${plural(preview.summarizedMessages, 'message')} would be summarized, ` +
        `${plural(preview.keptMessages, 'recent message')} kept as they are ` +
        `(from message ${preview.firstKeptIndex + 1}).`,
      estimate,
    ];
    if (spill) {
      lines.push(spill);
    }
    return { kind: 'confirm', message: `Compact the context of ${where}?`, detail: lines.join('\n') };
  }
  const why = previewReason(preview.reason);
  if (spill && preview.reason !== 'no session') {
    return {
      kind: 'confirm',
      message: `Nothing to summarize in ${where} (${why}). Offload tool results?`,
      detail: [spill, estimate].join('\n'),
    };
  }
  return {
    kind: 'nothing',
    message: `PseudoClaude: nothing to compact in ${where}: ${why} (${formatCount(preview.beforeTokens)} tokens).`,
  };
}

/** `summary checked: 12 facts, 2 carried by the server` (and how many did not fit). */
export function factCheckText(f: FactCheck): string {
  const left = f.missing - f.added;
  return (
    `summary checked: ${plural(f.checked, 'fact')}, ${f.added} carried by the server` +
    (left > 0 ? `, ${left} not carried (over the budget)` : '')
  );
}

/** The message after `pseudoclaude/compact`. */
export function compactMessage(r: CompactResult): string {
  const change = `${formatTokens(r.beforeTokens)} → ${formatTokens(r.afterTokens)} tokens`;
  const spilled = r.offloaded > 0 ? `, ${plural(r.offloaded, 'tool result')} offloaded` : '';
  if (r.summarized) {
    const checked = r.factCheck ? `; ${factCheckText(r.factCheck)}` : '';
    return `PseudoClaude: context compacted (${change}${spilled})${checked}.`;
  }
  if (r.offloaded > 0) {
    return (
      `PseudoClaude: ${plural(r.offloaded, 'tool result')} offloaded (${change}); nothing older ` +
      'than the recent window to summarize.'
    );
  }
  return `PseudoClaude: nothing to compact (${formatTokens(r.beforeTokens)} tokens, all in the recent window).`;
}

/** The message after `pseudoclaude/compact/undo`, and whether it restored anything. */
export function undoMessage(r: UndoResult, where: string): string {
  if (!r.restored) {
    const why = r.reason && r.reason.trim() !== '' ? r.reason : 'no compaction left to undo';
    return `PseudoClaude: nothing to undo in ${where}: ${why}.`;
  }
  return (
    `PseudoClaude: compaction undone in ${where}: ${plural(r.messageCount, 'message')}, ` +
    `${formatTokens(r.beforeTokens)} → ${formatTokens(r.afterTokens)} tokens.`
  );
}
