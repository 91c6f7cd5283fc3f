import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { factCheckText, previewNumbers, previewPlan, said } from '../src/compaction';
import type { CompactPreviewResult } from '../src/protocol';

const PREVIEW: CompactPreviewResult = {
  wouldSummarize: true, beforeTokens: 50_000, estimatedAfterTokens: 9_000, summarizedMessages: 1,
  keptMessages: 1, firstKeptIndex: 0, spill: { results: 0, bytes: 0 },
  message: 'Would summarize the 1 oldest message and keep the 1 newest message as they are: about 50k → 9k tokens.',
};

describe('compaction preview', () => {
  it('asks with the server\'s sentence; the detail has only the numbers (an empty spill left out)', () => {
    const plan = previewPlan(PREVIEW, 'lib');
    assert.equal(plan.kind, 'confirm');
    assert.equal(plan.message, PREVIEW.message);
    assert.equal(plan.kind === 'confirm' ? plan.detail : '',
      'Tokens: 50,000 → about 9,000\nSummarized: 1 message; kept: 1 (from message 1)\nFolder: lib');
    assert.deepEqual(previewNumbers({ ...PREVIEW, spill: { results: 2, bytes: 2048 } }).at(-1), 'Offloaded: 2 tool results (2.0 KB)');
  });
  it('nothing to do says the server\'s line; a spill with no session is still nothing to do', () => {
    const nothing = { ...PREVIEW, wouldSummarize: false, reason: 'nothing to summarize' as const, message: 'Nothing would be summarized: everything is recent (50k tokens).' };
    assert.deepEqual(previewPlan(nothing, 'lib'), { kind: 'nothing', message: 'PseudoClaude: Nothing would be summarized: everything is recent (50k tokens).' });
    const plan = previewPlan({ ...nothing, reason: 'no session', spill: { results: 2, bytes: 10 } }, 'lib');
    assert.equal(plan.kind, 'nothing');
    assert.equal(previewPlan({ ...nothing, spill: { results: 2, bytes: 10 } }).kind, 'confirm', 'offloading alone is still asked');
  });
  it('names the server\'s line in a notification', () => {
    assert.equal(said('Undone: 3 messages are back.'), 'PseudoClaude: Undone: 3 messages are back.');
  });
  it('counts the facts checked, carried and left over the budget', () => {
    assert.equal(factCheckText({ checked: 1, missing: 0, added: 0 }), 'summary checked: 1 fact, 0 carried by the server');
    assert.equal(factCheckText({ checked: 9, missing: 4, added: 3 }),
      'summary checked: 9 facts, 3 carried by the server, 1 not carried (over the budget)');
  });
});
