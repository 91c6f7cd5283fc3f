import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MeterStore, meterView } from '../src/meter';

const WS = 'file:///work/app';

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

describe('MeterStore', () => {
  it('keeps the breaker from context across usage updates of the same session', () => {
    const m = new MeterStore();
    m.context(WS, {
      sessionId: 's1', messageCount: 4, estimatedTokens: 1000, contextWindow: 200_000,
      autoCompactThreshold: 167_000, autoCompactFailures: 3, autoCompactTripped: true,
    });
    m.usage({ workspace: `${WS}/`, sessionId: 's1', estimatedTokens: 2000, contextWindow: 200_000, autoCompactThreshold: 167_000 });
    assert.equal(m.get(WS)?.estimatedTokens, 2000);
    assert.equal(m.get(WS)?.autoCompactTripped, true);
    m.usage({ workspace: WS, sessionId: 's2', estimatedTokens: 10, contextWindow: 200_000, autoCompactThreshold: 167_000 });
    assert.equal(m.get(WS)?.autoCompactTripped, false);
    assert.equal(m.get('file:///other'), undefined);
  });
});
