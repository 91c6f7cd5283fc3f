import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { breakdownRows, escapeMarkdown, formatShare, MeterStore, meterView, TOOLTIP_COMMANDS } from '../src/meter';
import type { Breakdown } from '../src/protocol';

const WS = 'file:///work/app';
const BREAKDOWN: Breakdown = {
  system: 2_000, rules: 500, memory: 300, skills: 250, tools: 3_000, summary: 0, messages: 4_000, toolCalls: 700,
  toolResults: 1_400, spilled: 100, free: 188_000, reserved: 33_000,
};

describe('meterView', () => {
  it('says PseudoClaude before any numbers are known', () => {
    const v = meterView(undefined);
    assert.equal(v.text, 'PseudoClaude');
    assert.equal(v.level, 'normal');
    const fresh = meterView({ sessionId: null, estimatedTokens: 0, contextWindow: 200_000, autoCompactThreshold: 167_000 });
    assert.equal(fresh.text, 'PseudoClaude');
    assert.equal(meterView({ sessionId: null, estimatedTokens: 0, contextWindow: 1, autoCompactThreshold: 1, running: true }).text, '$(sync~spin) PseudoClaude');
  });
  it('shows tokens/window', () => {
    const v = meterView({ sessionId: 's1', estimatedTokens: 12_000, contextWindow: 200_000, autoCompactThreshold: 167_000 });
    assert.equal(v.text, '12k/200k');
    assert.equal(v.level, 'normal');
    assert.match(v.tooltip, /12,000 of 200,000 tokens/);
    assert.match(v.tooltip, /Auto-compact at 167,000/);
    assert.match(v.tooltip, /Session s1/);
  });
  it('turns to the warning colour close to the auto threshold', () => {
    const near = meterView({ sessionId: 's', estimatedTokens: 150_000, contextWindow: 200_000, autoCompactThreshold: 167_000 });
    assert.equal(near.level, 'warning');
    assert.equal(near.text, '150k/200k');
    const below = meterView({ sessionId: 's', estimatedTokens: 100_000, contextWindow: 200_000, autoCompactThreshold: 167_000 });
    assert.equal(below.level, 'normal');
  });
  it('warns when the breaker tripped', () => {
    const v = meterView({
      sessionId: 's', estimatedTokens: 170_000, contextWindow: 200_000, autoCompactThreshold: 167_000,
      autoCompactFailures: 3, autoCompactTripped: true,
    });
    assert.equal(v.level, 'error');
    assert.equal(v.text, '$(warning) 170k/200k');
    assert.match(v.tooltip, /stopped after 3 failures/);
  });
  it('spins while a run is in progress and names the folder in multi-root windows', () => {
    const v = meterView({ sessionId: 's', estimatedTokens: 1_000, contextWindow: 128_000, autoCompactThreshold: 95_000, running: true }, 'app');
    assert.equal(v.text, '$(sync~spin) 1k/128k');
    assert.match(v.tooltip, /\(app\)/);
  });
});

describe('the breakdown in the tooltip', () => {
  it('lists the ten categories, then free and reserved, with tokens and share of the window', () => {
    const v = meterView({ sessionId: 's1', estimatedTokens: 12_000, contextWindow: 200_000, autoCompactThreshold: 167_000, breakdown: BREAKDOWN });
    const table = v.tooltip.split('\n\n').find((block) => block.startsWith('| context'));
    assert.deepEqual(table?.split('\n'), [
      '| context | tokens | share |',
      '|:--|--:|--:|',
      '| System | 2,000 | 1% |',
      '| Rules | 500 | <1% |',
      '| Memory | 300 | <1% |',
      '| Skills | 250 | <1% |',
      '| Tools | 3,000 | 2% |',
      '| Summary | 0 | 0% |',
      '| Messages | 4,000 | 2% |',
      '| Tool calls | 700 | <1% |',
      '| Tool results | 1,400 | 1% |',
      '| Spilled | 100 | <1% |',
      '| *Free* | 188,000 | 94% |',
      '| *Reserved* | 33,000 | 17% |',
    ]);
    const blocks = v.tooltip.split('\n\n');
    assert.equal(blocks[0], '**PseudoClaude context**: 12,000 of 200,000 tokens');
    assert.equal(blocks[2], 'Auto-compact at 167,000 tokens · Session s1');
    assert.match(blocks.at(-1) ?? '', /\[Compact…\]\(command:pseudoclaude\.compactContext\) · \[Undo compaction\]\(command:pseudoclaude\.undoCompaction\)/);
    for (const link of (blocks.at(-1) ?? '').matchAll(/\(command:([\w.]+)\)/g)) {
      assert.ok(TOOLTIP_COMMANDS.includes(link[1] ?? ''), `${link[1]} is not trusted`);
    }
  });
  it('leaves the table out when the server sends no breakdown', () => {
    const v = meterView({ sessionId: 's1', estimatedTokens: 12_000, contextWindow: 200_000, autoCompactThreshold: 167_000 });
    assert.doesNotMatch(v.tooltip, /\| context/);
    assert.match(v.tooltip, /12,000 of 200,000 tokens/);
  });
  it('never shows a negative count, and no share without a window', () => {
    const rows = breakdownRows({ ...BREAKDOWN, summary: -5, free: Number.NaN }, 0);
    assert.equal(rows.length, 12);
    assert.deepEqual(rows.find((r) => r.key === 'summary'), { key: 'summary', label: 'Summary', tokens: 0, share: '—' });
    assert.equal(rows.find((r) => r.key === 'free')?.tokens, 0);
    assert.equal(formatShare(1, 200_000), '<1%');
    assert.equal(formatShare(0, 200_000), '0%');
    assert.equal(formatShare(200_000, 200_000), '100%');
  });
  it('escapes the folder name', () => {
    assert.equal(escapeMarkdown('my_[app]'), 'my\\_\\[app\\]');
    const v = meterView({ sessionId: 's', estimatedTokens: 1, contextWindow: 10, autoCompactThreshold: 5 }, '*x*');
    assert.match(v.tooltip, /^\*\*PseudoClaude context \(\\\*x\\\*\)\*\*/);
  });
});

describe('MeterStore', () => {
  it('keeps the breaker from context across usage updates of the same session', () => {
    const m = new MeterStore();
    m.context(WS, {
      sessionId: 's1', checkpoints: { covers: 'all', skipped: [] }, ignoredSettings: [], mode: 'default', sandbox: null, messageCount: 4, estimatedTokens: 1000, contextWindow: 200_000,
      autoCompactThreshold: 167_000, autoCompactFailures: 3, autoCompactTripped: true, breakdown: BREAKDOWN, rules: [],
    });
    m.usage({ workspace: `${WS}/`, sessionId: 's1', estimatedTokens: 2000, contextWindow: 200_000, autoCompactThreshold: 167_000, breakdown: { ...BREAKDOWN, messages: 5_000 } });
    assert.equal(m.get(WS)?.estimatedTokens, 2000);
    assert.equal(m.get(WS)?.autoCompactTripped, true);
    assert.equal(m.get(WS)?.breakdown?.messages, 5_000, 'the breakdown follows the usage');
    m.usage({ workspace: WS, sessionId: 's2', estimatedTokens: 10, contextWindow: 200_000, autoCompactThreshold: 167_000, breakdown: BREAKDOWN });
    assert.equal(m.get(WS)?.autoCompactTripped, false);
    assert.equal(m.get(WS)?.breakdown?.messages, 4_000);
    assert.equal(m.get('file:///other'), undefined);
  });
});
