import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compactMessage, factCheckText, previewPlan, previewReason, undoMessage } from '../src/compaction';
import type { CompactPreviewResult } from '../src/protocol';

const PREVIEW: CompactPreviewResult = {
  wouldSummarize: true, beforeTokens: 50_000, estimatedAfterTokens: 9_000, summarizedMessages: 1,
  keptMessages: 1, firstKeptIndex: 0, spill: { results: 0, bytes: 0 },
};

describe('compaction words', () => {
  it('explains the reasons of a preview that would summarize nothing', () => {
    assert.equal(previewReason('no session'), 'no conversation yet');
    assert.equal(previewReason('nothing to summarize'), 'everything is in the recent window');
    assert.equal(previewReason('would not shrink'), 'a summary would not make it smaller');
    assert.equal(previewReason('something new'), 'something new');
    assert.equal(previewReason(undefined), 'nothing older than the recent window');
  });
  it('asks with the counts, leaving out an empty spill', () => {
    const plan = previewPlan(PREVIEW, 'lib');
    assert.equal(plan.kind, 'confirm');
    assert.equal(plan.message, 'Compact the context of lib?');
    assert.equal(plan.kind === 'confirm' ? plan.detail : '',
      '1 message would be summarized, 1 recent message kept as they are (from message 1).\n' +
      'Estimate: 50,000 → about 9,000 tokens.');
  });
  it('a spill with no session is still nothing to do', () => {
    const plan = previewPlan({ ...PREVIEW, wouldSummarize: false, reason: 'no session', spill: { results: 2, bytes: 10 } }, 'lib');
    assert.equal(plan.kind, 'nothing');
  });
  it('counts the facts checked, carried and left over the budget', () => {
    assert.equal(factCheckText({ checked: 1, missing: 0, added: 0 }), 'summary checked: 1 fact, 0 carried by the server');
    assert.equal(factCheckText({ checked: 9, missing: 4, added: 3 }),
      'summary checked: 9 facts, 3 carried by the server, 1 not carried (over the budget)');
  });
  it('reports a compaction without a fact check (an older server) as before', () => {
    const r = { beforeTokens: 170_000, afterTokens: 20_000, offloaded: 0, summarized: true } as never;
    assert.equal(compactMessage(r), 'PseudoClaude: context compacted (170k → 20k tokens).');
  });
  it('reports an undo', () => {
    assert.equal(undoMessage({ restored: true, beforeTokens: 9_000, afterTokens: 50_000, messageCount: 1 }, 'lib'),
      'PseudoClaude: compaction undone in lib: 1 message, 9k → 50k tokens.');
    assert.equal(undoMessage({ restored: false, reason: ' ', beforeTokens: 0, afterTokens: 0, messageCount: 0 }, 'lib'),
      'PseudoClaude: nothing to undo in lib: no compaction left to undo.');
  });
});
