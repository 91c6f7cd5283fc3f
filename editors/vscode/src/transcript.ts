/**
 * The transcript: `pseudoclaude/event` notifications and run results rendered as text for the
 * `PseudoClaude` output channel. The answer streams as it arrives; each tool call and its
 * result fold into one short line.
 */
import { factCheckText } from './compaction';
import { formatBytes, formatTokens, oneLine, plural } from './format';
import type { AgentEvent, RunResult, TranscriptItem } from './protocol';
import { baseName, sameUri } from './uri';

/** Where the text goes (an OutputChannel in VS Code, an array in tests). */
export interface TextSink {
  append(text: string): void;
}

/** `path: README.md, limit: 20` from a tool call's arguments (an object, or a raw string). */
export function summarizeArguments(args: unknown, max = 100): string {
  if (args === null || args === undefined) {
    return '';
  }
  if (typeof args === 'string') {
    return oneLine(args, max);
  }
  if (typeof args !== 'object' || Array.isArray(args)) {
    return oneLine(JSON.stringify(args), max);
  }
  const parts = Object.entries(args as Record<string, unknown>).map(([k, v]) => {
    const value = typeof v === 'string' ? v : JSON.stringify(v);
    return `${k}: ${value}`;
  });
  return oneLine(parts.join(', '), max);
}

export class Transcript {
  private atLineStart = true;
  private written = false;
  private streamed = 0;
  private current: { workspace: string; sessionId: string } | undefined;

  constructor(private readonly sink: TextSink) {}

  /** Characters of answer text streamed since the last `beginRun`. */
  get streamedChars(): number {
    return this.streamed;
  }

  private write(text: string): void {
    if (text.length === 0) {
      return;
    }
    this.sink.append(text);
    this.written = true;
    this.atLineStart = text.endsWith('\n');
  }

  private line(text: string): void {
    if (!this.atLineStart) {
      this.write('\n');
    }
    this.write(`${text}\n`);
  }

  /** The header of a new question (`about`: the editor context it was sent with, `src/app.py:10-14`). */
  beginRun(workspace: string, prompt: string, about?: string): void {
    this.streamed = 0;
    this.current = undefined;
    if (this.written) {
      this.line('');
    }
    this.line(`━━ You · ${baseName(workspace)} ━━`);
    this.line(prompt.trimEnd());
    if (about) {
      this.line(`(with ${about})`);
    }
    this.line('━━ PseudoClaude ━━');
    this.current = { workspace, sessionId: '' };
  }

  /** The footer of a finished run; prints `result.text` when nothing streamed. */
  endRun(result: RunResult): void {
    if (this.streamed === 0 && result.text) {
      this.write(result.text);
    }
    const usage = result.usage
      ? ` · ${formatTokens(result.usage.inputTokens)} in / ${formatTokens(result.usage.outputTokens)} out`
      : '';
    this.line(
      `── ${result.stopReason} · ${plural(result.iterations, 'iteration')}${usage} · ` +
        `session ${result.sessionId} ──`,
    );
    if (result.error) {
      this.line(`✗ ${oneLine(result.error, 300)}`);
    }
  }

  /** A run that ended without a result (cancelled, or the request failed). */
  abortRun(reason: string): void {
    this.line(`── ${reason} ──`);
  }

  /** A note from the extension itself (resume, new session...). */
  note(text: string): void {
    this.line(`· ${text}`);
  }

  /**
   * Items of a resumed session, replayed briefly; what the model no longer sees (summarized
   * away, undone) is marked `(not in context)`.
   */
  history(items: readonly TranscriptItem[], skipped: number): void {
    if (skipped > 0) {
      this.line(`· (${plural(skipped, 'earlier entry', 'earlier entries')} not shown)`);
    }
    for (const item of items) {
      const out = item.inContext === false ? ' (not in context)' : '';
      switch (item.kind) {
        case 'user':
        case 'assistant':
          if (item.text.trim() !== '') {
            this.line(`${item.kind === 'user' ? 'You' : 'PseudoClaude'}${out}: ${oneLine(item.text, 400)}`);
          }
          break;
        case 'toolCall': {
          const call = `${item.name}(${summarizeArguments(item.arguments)})`;
          const size = item.bytes !== undefined ? ` · ${formatBytes(item.bytes)}` : '';
          const why = item.error ?? item.preview;
          const line =
            item.status === 'done'
              ? `✓ ${call}${size}`
              : item.status === 'pending'
                ? `○ ${call}: no result`
                : `✗ ${call} ${item.status === 'error' ? 'failed' : item.status}${why ? `: ${oneLine(why, 160)}` : ''}`;
          this.line(`  ${line}${out}`);
          break;
        }
        case 'summary':
          this.line(`  ⇣ summary${out}: ${oneLine(item.text, 400)}`);
          break;
        case 'compaction':
        case 'undo':
        case 'rewind':
          this.line(`· ${item.message}`);
          break;
        case 'notice':
          this.line(`· ${item.text}`);
          break;
      }
    }
  }

  event(e: AgentEvent): void {
    if (e.kind === 'tasks') {
      return; // the task list shows in the chat (it comes after each change and each resume)
    }
    if (
      !this.current ||
      !sameUri(this.current.workspace, e.workspace) ||
      (this.current.sessionId !== '' && this.current.sessionId !== e.sessionId)
    ) {
      this.line(`── ${baseName(e.workspace)} · session ${e.sessionId} ──`);
    }
    this.current = { workspace: e.workspace, sessionId: e.sessionId };
    if (e.agentId && e.kind !== 'task') {
      // A sub-agent's: its calls, marked, never mixed into the answer (Open transcript has it all).
      if (e.kind === 'toolCall') {
        this.line(`    ↳ ${e.agentId} ▸ ${e.name}(${summarizeArguments(e.arguments)})`);
      } else if (e.kind === 'toolResult' && (e.isError || (e.status !== undefined && e.status !== 'done'))) {
        this.line(`    ↳ ${e.agentId} ✗ ${e.name}: ${oneLine(e.error ?? e.display ?? e.preview, 160)}`);
      }
      return;
    }
    switch (e.kind) {
      case 'text':
        this.streamed += e.delta.length;
        this.write(e.delta);
        break;
      case 'toolCall':
        this.line(`  ▸ ${e.name}(${summarizeArguments(e.arguments)})`);
        break;
      case 'toolResult':
        if (e.isError || (e.status !== undefined && e.status !== 'done')) {
          const how = e.status === undefined || e.status === 'error' ? 'failed' : e.status;
          this.line(`  ✗ ${e.name} ${how}: ${oneLine(e.error ?? e.display ?? e.preview, 160)}`);
        } else {
          this.line(`  ✓ ${e.name} · ${formatBytes(e.bytes)}`);
        }
        break;
      case 'compact':
        this.line(
          `  ⇣ compacted (layer ${e.layer}): ${formatTokens(e.beforeTokens)} → ` +
            `${formatTokens(e.afterTokens)} tokens` +
            (e.offloaded > 0 ? `, ${plural(e.offloaded, 'result')} offloaded` : '') +
            (e.factCheck ? `; ${factCheckText(e.factCheck)}` : ''),
        );
        break;
      case 'memory':
        if (e.status === 'failed') {
          this.line(`  ! memory update failed: ${oneLine(e.error ?? 'unknown error', 200)}`);
        } else if (e.status === 'updated') {
          const changes = e.changes.map((c) => `${c.action} ${c.level} ${c.filename}`).join(', ');
          this.line(`  ✎ memory updated${changes ? `: ${changes}` : ''}`);
        }
        break;
      case 'warning':
        this.line(`  ! ${oneLine(e.message, 300)}`);
        break;
      case 'error':
        this.line(`  ✗ ${oneLine(e.message, 300)}`);
        break;
      case 'mode':
        this.line(`  · permission mode: ${e.mode}`);
        break;
      case 'usage':
      case 'stop':
        break;
    }
  }
}
