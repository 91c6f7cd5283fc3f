/**
 * Compact Context and Undo Compaction (SPEC §11 "Compaction preview", "Undo", "Summary fact
 * check"): what a preview asks before compacting. The sentences are the server's (`message` of
 * each result); only the numbers are laid out here. Pure: the controller shows these through the
 * `Ui` port.
 */
import { formatBytes, formatCount, plural } from './format';
import type { CompactPreviewResult, FactCheck } from './protocol';

/** The action of the confirmation dialog (VS Code adds Cancel itself). */
export const COMPACT_ACTION = 'Compact';

/** A notification's text: the server's line, named. */
export function said(message: string): string {
  return `PseudoClaude: ${message}`;
}

/** What Compact Context does with a preview: ask first, or only say why there is nothing to do. */
export type PreviewPlan =
  | { kind: 'confirm'; message: string; detail: string }
  | { kind: 'nothing'; message: string };

/** The numbers of a preview, one per line (the sentence is the server's `message`). */
export function previewNumbers(preview: CompactPreviewResult): string[] {
  const lines = [`Tokens: ${formatCount(preview.beforeTokens)} → about ${formatCount(preview.estimatedAfterTokens)}`];
  if (preview.wouldSummarize) {
    lines.push(
      `Summarized: ${plural(preview.summarizedMessages, 'message')}; kept: ${preview.keptMessages} ` +
        `(from message ${preview.firstKeptIndex + 1})`,
    );
  }
  const spill = preview.spill;
  if (spill && spill.results > 0) {
    lines.push(`Offloaded: ${plural(spill.results, 'tool result')} (${formatBytes(spill.bytes)})`);
  }
  return lines;
}

/**
 * The dialog (or the message) of a preview: its sentence is the server's, the detail its numbers
 * (and the folder `where`, when there may be several).
 */
export function previewPlan(preview: CompactPreviewResult, where?: string): PreviewPlan {
  const spill = (preview.spill?.results ?? 0) > 0 && preview.reason !== 'no session';
  if (preview.wouldSummarize || spill) {
    return { kind: 'confirm', message: preview.message, detail: [...previewNumbers(preview), ...(where ? [`Folder: ${where}`] : [])].join('\n') };
  }
  return { kind: 'nothing', message: said(preview.message) };
}

/** `summary checked: 12 facts, 2 carried by the server` (and how many did not fit). */
export function factCheckText(f: FactCheck): string {
  const left = f.missing - f.added;
  return (
    `summary checked: ${plural(f.checked, 'fact')}, ${f.added} carried by the server` +
    (left > 0 ? `, ${left} not carried (over the budget)` : '')
  );
}
