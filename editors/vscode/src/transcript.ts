/**
 * The transcript: `pseudoclaude/event` notifications and run results rendered as text for the
 * `PseudoClaude` output channel. The answer streams as it arrives; each tool call and its
 * result fold into one short line.
 */
import { factCheckText } from './compaction';
import { formatBytes, formatTokens, oneLine, plural } from './format';
import type { AgentEvent, LogMessage, RunResult } from './protocol';
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

  /** The header of a new question. */
  beginRun(workspace: string, prompt: string): void {
    this.streamed = 0;
    this.current = undefined;
    if (this.written) {
      this.line('');
    }
    this.line(`━━ You · ${baseName(workspace)} ━━`);
    this.line(prompt.trimEnd());
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

  /** Messages of a resumed session, replayed briefly. */
  history(messages: LogMessage[], skipped: number): void {
    if (skipped > 0) {
      this.line(`· (${plural(skipped, 'earlier message')} not shown)`);
    }
    for (const m of messages) {
      if (m.tool_result) {
        const mark = m.tool_result.is_error ? '✗' : '✓';
        this.line(`  ${mark} ${m.tool_result.name} · ${formatBytes(m.tool_result.content.length)}`);
        continue;
      }
      const who = m.role === 'user' ? 'You' : 'PseudoClaude';
      if (m.content) {
        this.line(`${who}: ${oneLine(m.content, 400)}`);
      }
      for (const call of m.tool_calls ?? []) {
        this.line(`  ▸ ${call.name}(${summarizeArguments(call.arguments)})`);
      }
    }
  }

  event(e: AgentEvent): void {
    if (
      !this.current ||
      !sameUri(this.current.workspace, e.workspace) ||
      (this.current.sessionId !== '' && this.current.sessionId !== e.sessionId)
    ) {
      this.line(`── ${baseName(e.workspace)} · session ${e.sessionId} ──`);
    }
    this.current = { workspace: e.workspace, sessionId: e.sessionId };
    switch (e.kind) {
      case 'text':
        this.streamed += e.delta.length;
        this.write(e.delta);
        break;
      case 'toolCall':
        this.line(`  ▸ ${e.name}(${summarizeArguments(e.arguments)})`);
        break;
      case 'toolResult':
        if (e.isError) {
          this.line(`  ✗ ${e.name} failed: ${oneLine(e.preview, 160)}`);
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
      case 'usage':
      case 'stop':
        break;
    }
  }
}
