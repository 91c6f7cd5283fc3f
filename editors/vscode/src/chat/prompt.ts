/**
 * The prompt box's keys: Enter sends, Shift+Enter adds a line, Up on the first line and Down on
 * the last line browse earlier prompts (what was being typed comes back after the newest),
 * Shift+Tab switches to the next permission mode.
 * Pure: the webview script feeds it key events and the textarea's value and caret.
 */

export type PromptKey = 'send' | 'newline' | 'previous' | 'next' | 'cycleMode' | 'none';

export interface KeyInfo {
  key: string;
  shiftKey: boolean;
  altKey?: boolean;
  ctrlKey?: boolean;
  metaKey?: boolean;
  /** An IME composition is in progress (Enter confirms it, it does not send). */
  isComposing?: boolean;
}

/** What a key press in the prompt box does, given the text and the caret (selection start/end). */
export function promptKey(e: KeyInfo, value: string, start: number, end: number): PromptKey {
  if (e.isComposing || e.altKey || e.ctrlKey || e.metaKey) {
    return e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !e.isComposing ? 'send' : 'none';
  }
  if (e.key === 'Enter') {
    return e.shiftKey ? 'newline' : 'send';
  }
  if (e.key === 'Tab' && e.shiftKey) {
    return 'cycleMode';
  }
  if (e.shiftKey || start !== end) {
    return 'none';
  }
  if (e.key === 'ArrowUp' && !value.slice(0, start).includes('\n')) {
    return 'previous';
  }
  if (e.key === 'ArrowDown' && !value.slice(end).includes('\n')) {
    return 'next';
  }
  return 'none';
}

/** Earlier prompts, oldest first; browsing keeps the unsent text as the newest entry. */
export class PromptHistory {
  private entries: string[];
  /** The entry shown; `entries.length` is the text being typed. */
  private index: number;
  private draft = '';

  constructor(
    entries: readonly string[] = [],
    private readonly limit = 100,
  ) {
    this.entries = dedupe(entries).slice(-limit);
    this.index = this.entries.length;
  }

  all(): string[] {
    return this.entries.slice();
  }

  /** A sent prompt becomes the newest entry (a repeat of the last one is not added twice). */
  push(prompt: string): void {
    const text = prompt.trim();
    if (text !== '' && this.entries[this.entries.length - 1] !== text) {
      this.entries.push(text);
      this.entries = this.entries.slice(-this.limit);
    }
    this.index = this.entries.length;
    this.draft = '';
  }

  /** Replace the entries (a restored transcript's prompts), keeping newer ones typed here. */
  seed(prompts: readonly string[]): void {
    if (this.entries.length === 0) {
      this.entries = dedupe(prompts).slice(-this.limit);
      this.index = this.entries.length;
    }
  }

  /** The entry before the one shown (`current`: the box's text); undefined at the oldest. */
  previous(current: string): string | undefined {
    if (this.index === 0 || this.entries.length === 0) {
      return undefined;
    }
    if (this.index === this.entries.length) {
      this.draft = current;
    }
    this.index--;
    return this.entries[this.index];
  }

  /** The entry after the one shown; the unsent text after the newest; undefined past it. */
  next(): string | undefined {
    if (this.index >= this.entries.length) {
      return undefined;
    }
    this.index++;
    return this.index === this.entries.length ? this.draft : this.entries[this.index];
  }
}

function dedupe(entries: readonly string[]): string[] {
  const out: string[] = [];
  for (const e of entries) {
    const text = e.trim();
    if (text !== '' && out[out.length - 1] !== text) {
      out.push(text);
    }
  }
  return out;
}
