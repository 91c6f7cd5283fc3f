/** The prompt box: Enter / Shift+Enter and the Up/Down history. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PromptHistory, promptKey } from '../src/chat/prompt';

describe('promptKey', () => {
  const key = (key: string, extra: Partial<{ shiftKey: boolean; ctrlKey: boolean; isComposing: boolean }> = {}) => ({
    key, shiftKey: false, ...extra,
  });
  it('Enter sends, Shift+Enter adds a line, Ctrl+Enter sends, Enter while composing does nothing', () => {
    assert.equal(promptKey(key('Enter'), 'hi', 2, 2), 'send');
    assert.equal(promptKey(key('Enter', { shiftKey: true }), 'hi', 2, 2), 'newline');
    assert.equal(promptKey(key('Enter', { ctrlKey: true }), 'hi', 2, 2), 'send');
    assert.equal(promptKey(key('Enter', { isComposing: true }), 'hi', 2, 2), 'none');
  });
  it('Up browses back only from the first line, Down forward only from the last', () => {
    assert.equal(promptKey(key('ArrowUp'), 'one\ntwo', 2, 2), 'previous');
    assert.equal(promptKey(key('ArrowUp'), 'one\ntwo', 5, 5), 'none');
    assert.equal(promptKey(key('ArrowDown'), 'one\ntwo', 5, 5), 'next');
    assert.equal(promptKey(key('ArrowDown'), 'one\ntwo', 1, 1), 'none');
    assert.equal(promptKey(key('ArrowUp'), 'one', 0, 3), 'none', 'not with a selection');
  });
});

describe('PromptHistory', () => {
  it('goes back through the prompts and forward to the unsent text', () => {
    const h = new PromptHistory(['first', 'second']);
    assert.equal(h.previous('draft'), 'second');
    assert.equal(h.previous('second'), 'first');
    assert.equal(h.previous('first'), undefined);
    assert.equal(h.next(), 'second');
    assert.equal(h.next(), 'draft');
    assert.equal(h.next(), undefined);
  });
  it('adds sent prompts once, trimmed, within the limit; seeds only when empty', () => {
    const h = new PromptHistory([], 2);
    h.seed(['a', 'a', 'b']);
    assert.deepEqual(h.all(), ['a', 'b']);
    h.push(' c ');
    h.push('c');
    h.push('   ');
    assert.deepEqual(h.all(), ['b', 'c']);
    h.seed(['x']);
    assert.deepEqual(h.all(), ['b', 'c']);
  });
});
