/** Slash commands: parsing what was sent, the completion list and its keys. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeHtml } from '../src/chat/markdown';
import { completeSlash, parseSlash, renderSlashList, slashCompletions, slashKey, slashWord } from '../src/chat/slash';
import type { SlashCommand } from '../src/protocol';

const COMMANDS: SlashCommand[] = [
  { name: 'compact', description: 'Summarize the earlier conversation now', hint: 'what the summary should focus on (optional)' },
  { name: 'undo', description: 'Bring back what the last compaction summarized' },
  { name: 'context', description: 'Show what fills the context window' },
  { name: 'memory', description: 'Show the memory' },
  { name: 'new', description: 'Start a new session' },
];

describe('parseSlash', () => {
  it('runs the listed commands with the text after the name', () => {
    assert.deepEqual(parseSlash('/compact focus on X', COMMANDS), { name: 'compact', argument: 'focus on X' });
    assert.deepEqual(parseSlash('  /undo  ', COMMANDS), { name: 'undo', argument: '' });
    assert.deepEqual(parseSlash('/compact\nkeep the parser', COMMANDS), { name: 'compact', argument: 'keep the parser' });
  });
  it('sends unknown /words, unlisted commands and other text to the model', () => {
    assert.equal(parseSlash('/usr/bin is on the PATH?', COMMANDS), undefined);
    assert.equal(parseSlash('/compacted', COMMANDS), undefined);
    assert.equal(parseSlash('please /compact', COMMANDS), undefined);
    assert.equal(parseSlash('/new', COMMANDS.filter((c) => c.name !== 'new')), undefined, 'not listed by this server');
  });
  it('sends a skill\'s command as a prompt (the server turns it into the skill)', () => {
    const withSkill: SlashCommand[] = [...COMMANDS, { name: 'review', description: 'Review code', hint: '[path]', skill: true }];
    assert.equal(parseSlash('/review src', withSkill), undefined);
    assert.deepEqual(slashCompletions('/re', 3, withSkill).map((c) => c.name), ['review']);
    assert.match(renderSlashList(withSkill.slice(-1), 0, escapeHtml), /<span class="slash-skill">skill<\/span>/);
    assert.doesNotMatch(renderSlashList(COMMANDS, 0, escapeHtml), /slash-skill/);
  });
  it('an older server that lists nothing: the chat\'s own names still run', () => {
    assert.deepEqual(parseSlash('/context', null), { name: 'context', argument: '' });
    assert.equal(parseSlash('/help', null), undefined);
  });
});

describe('slash completion', () => {
  it('offers the commands while a /word is typed on the first line, names starting with it first', () => {
    assert.deepEqual(slashCompletions('/', 1, COMMANDS).map((c) => c.name), ['compact', 'undo', 'context', 'memory', 'new']);
    assert.deepEqual(slashCompletions('/co', 3, COMMANDS).map((c) => c.name), ['compact', 'context']);
    assert.deepEqual(slashCompletions('/n', 2, COMMANDS).map((c) => c.name), ['new', 'undo', 'context'], 'then names containing it');
    assert.deepEqual(slashCompletions('/MEM', 4, COMMANDS).map((c) => c.name), ['memory']);
    assert.deepEqual(slashCompletions('/compact ', 9, COMMANDS), [], 'closed once the argument starts');
    assert.deepEqual(slashCompletions('hi /co', 6, COMMANDS), []);
    assert.deepEqual(slashCompletions('/xyz', 4, COMMANDS), []);
    assert.deepEqual(slashCompletions('/co', 3, null), [], 'an older server: no completion');
    assert.deepEqual(slashCompletions('/co', 3, []), []);
    assert.equal(slashWord('/co', 3), 'co');
    assert.equal(slashWord('/co more', 3), undefined, 'text after the caret');
  });
  it('completes to the name and a space; Tab and Enter complete, Enter on a whole name sends', () => {
    const compact = COMMANDS[0];
    assert.ok(compact);
    assert.equal(completeSlash(compact), '/compact ');
    assert.equal(slashKey({ key: 'Tab' }, 'co', compact), 'complete');
    assert.equal(slashKey({ key: 'Enter' }, 'co', compact), 'complete');
    assert.equal(slashKey({ key: 'Enter' }, 'compact', compact), 'none', 'typed in full: Enter sends');
    assert.equal(slashKey({ key: 'Enter', shiftKey: true }, 'co', compact), 'none');
    assert.equal(slashKey({ key: 'ArrowDown' }, 'co', compact), 'next');
    assert.equal(slashKey({ key: 'ArrowUp' }, 'co', compact), 'previous');
    assert.equal(slashKey({ key: 'Escape' }, 'co', compact), 'close');
    assert.equal(slashKey({ key: 'Tab', isComposing: true }, 'co', compact), 'none');
    assert.equal(slashKey({ key: 'Tab' }, 'co', undefined), 'none', 'nothing offered');
  });
  it('renders the list with names, hints and descriptions, escaped and without inline handlers', () => {
    const html = renderSlashList([...COMMANDS.slice(0, 2), { name: 'x', description: '<b>bold</b>' }], 1, escapeHtml);
    assert.match(html, /<li class="slash-item" role="option" id="slash-0" data-index="0" aria-selected="false"><span class="slash-name">\/compact<\/span> <span class="slash-hint">what the summary should focus on \(optional\)<\/span>/);
    assert.match(html, /<li class="slash-item selected" role="option" id="slash-1" data-index="1" aria-selected="true"><span class="slash-name">\/undo<\/span><span class="slash-description">Bring back/);
    assert.match(html, /&lt;b&gt;bold&lt;\/b&gt;/);
    assert.doesNotMatch(html, /\son\w+=|style=/);
  });
});
