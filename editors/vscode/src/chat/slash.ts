/**
 * Slash commands of the chat (`/compact focus on the parser`): the list comes from the server
 * (`Requests.slashCommands`, with its words); what each runs is the chat's. Typing `/` in the
 * prompt box offers the list; Tab or Enter completes the one picked. Text that is not one of the
 * commands (unknown `/words` included) is a prompt for the model, and so is a skill's
 * (`/review src`, listed with `skill: true`): the server turns it into the skill's instructions.
 * Pure: no DOM, no `vscode`.
 */
import type { SlashCommand } from '../protocol';

/** The commands the chat knows how to run. */
export const RUNNABLE = ['compact', 'undo', 'context', 'status', 'memory', 'rewind', 'new', 'mcp', 'hooks', 'worktree', 'plan', 'do'] as const;
export type SlashName = (typeof RUNNABLE)[number];

export interface SlashRun {
  name: SlashName;
  /** The text after the name (trimmed; `''` when none). */
  argument: string;
}

function runnable(name: string): name is SlashName {
  return (RUNNABLE as readonly string[]).includes(name);
}

/**
 * The command `text` runs, if any: `/name` and its argument, where the name is one the chat runs
 * and the server lists (`commands === null`: the server could not list them, so the chat's own
 * names count). Anything else is a prompt.
 */
export function parseSlash(text: string, commands: readonly SlashCommand[] | null): SlashRun | undefined {
  const stripped = text.trim();
  if (!stripped.startsWith('/')) {
    return undefined;
  }
  const body = stripped.slice(1);
  const space = body.indexOf(' ');
  const head = space < 0 ? body : body.slice(0, space);
  const rest = space < 0 ? '' : body.slice(space + 1);
  const newline = head.indexOf('\n');
  const name = newline < 0 ? head : head.slice(0, newline);
  const more = newline < 0 ? '' : head.slice(newline + 1);
  if (!runnable(name) || (commands !== null && !commands.some((c) => c.name === name))) {
    return undefined;
  }
  return { name, argument: `${more} ${rest}`.trim() };
}

/**
 * The word being typed as a command: the text before the caret when it is `/` and letters on the
 * first line, with no space yet (`/com` → `com`); undefined otherwise.
 */
export function slashWord(value: string, caret: number = value.length): string | undefined {
  const before = value.slice(0, caret);
  const m = /^\/([\w-]*)$/.exec(before);
  if (!m || value.slice(caret).trim() !== '') {
    return undefined;
  }
  return m[1] ?? '';
}

/** The commands offered for the prompt box's text: names starting with the word first, then names containing it. */
export function slashCompletions(
  value: string,
  caret: number,
  commands: readonly SlashCommand[] | null,
): SlashCommand[] {
  const word = slashWord(value, caret);
  if (word === undefined || !commands || commands.length === 0) {
    return [];
  }
  const w = word.toLowerCase();
  const starts = commands.filter((c) => c.name.toLowerCase().startsWith(w));
  const contains = commands.filter((c) => !c.name.toLowerCase().startsWith(w) && c.name.toLowerCase().includes(w));
  return [...starts, ...contains];
}

/** The prompt box's text once `command` is completed: `/name ` (a space for its argument). */
export function completeSlash(command: SlashCommand): string {
  return `/${command.name} `;
}

export type SlashKey = 'next' | 'previous' | 'complete' | 'close' | 'none';

/**
 * What a key does while the completion list is open: ↓/↑ move, Tab and Enter complete (Enter on a
 * name typed in full sends it instead: `none`), Escape closes.
 */
export function slashKey(
  e: { key: string; shiftKey?: boolean; altKey?: boolean; ctrlKey?: boolean; metaKey?: boolean; isComposing?: boolean },
  typed: string | undefined,
  selected: SlashCommand | undefined,
): SlashKey {
  if (e.isComposing || e.altKey || e.ctrlKey || e.metaKey || !selected) {
    return 'none';
  }
  switch (e.key) {
    case 'ArrowDown':
      return 'next';
    case 'ArrowUp':
      return 'previous';
    case 'Tab':
      return e.shiftKey ? 'none' : 'complete';
    case 'Enter':
      return e.shiftKey || typed === selected.name ? 'none' : 'complete';
    case 'Escape':
      return 'close';
    default:
      return 'none';
  }
}

/** The completion list as HTML (`esc` escapes the server's words). */
export function renderSlashList(
  items: readonly SlashCommand[],
  selected: number,
  esc: (s: string) => string,
): string {
  return items
    .map((c, i) => {
      const on = i === selected;
      return (
        `<li class="slash-item${on ? ' selected' : ''}" role="option" id="slash-${i}" data-index="${i}" aria-selected="${on}">` +
        `<span class="slash-name">/${esc(c.name)}</span>` +
        (c.hint ? ` <span class="slash-hint">${esc(c.hint)}</span>` : '') +
        (c.skill ? ' <span class="slash-skill">skill</span>' : '') +
        `<span class="slash-description">${esc(c.description)}</span></li>`
      );
    })
    .join('');
}
