import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatAge, formatBytes, formatCount, formatTokens, oneLine, plural } from '../src/format';

describe('formatTokens', () => {
  it('writes the meter numbers of SPEC §8b', () => {
    assert.equal(formatTokens(12_000), '12k');
    assert.equal(formatTokens(200_000), '200k');
    assert.equal(formatTokens(12_345), '12k');
    assert.equal(formatTokens(167_600), '168k');
  });
  it('keeps small counts exact and one decimal below 10k', () => {
    assert.equal(formatTokens(0), '0');
    assert.equal(formatTokens(850), '850');
    assert.equal(formatTokens(1_000), '1k');
    assert.equal(formatTokens(1_500), '1.5k');
    assert.equal(formatTokens(9_949), '9.9k');
  });
  it('switches to millions without showing 1000k', () => {
    assert.equal(formatTokens(999_499), '999k');
    assert.equal(formatTokens(999_600), '1M');
    assert.equal(formatTokens(1_200_000), '1.2M');
  });
  it('shows ? for nonsense', () => {
    assert.equal(formatTokens(Number.NaN), '?');
    assert.equal(formatTokens(-1), '?');
  });
});

describe('small formatters', () => {
  it('formatCount groups thousands', () => {
    assert.equal(formatCount(167000), '167,000');
    assert.equal(formatCount(999), '999');
    assert.equal(formatCount(1234567), '1,234,567');
  });
  it('plural', () => {
    assert.equal(plural(1, 'message'), '1 message');
    assert.equal(plural(0, 'message'), '0 messages');
    assert.equal(plural(2, 'repair'), '2 repairs');
  });
  it('formatBytes', () => {
    assert.equal(formatBytes(512), '512 B');
    assert.equal(formatBytes(4300), '4.2 KB');
    assert.equal(formatBytes(3 * 1024 * 1024), '3.0 MB');
  });
  it('formatAge', () => {
    const now = new Date('2025-06-10T12:00:00Z');
    assert.equal(formatAge('2025-06-10T11:59:30Z', now), 'just now');
    assert.equal(formatAge('2025-06-10T11:55:00Z', now), '5 min ago');
    assert.equal(formatAge('2025-06-10T09:00:00+00:00', now), '3 h ago');
    assert.equal(formatAge('2025-06-09T10:00:00Z', now), 'yesterday');
    assert.equal(formatAge('2025-06-01T12:00:00Z', now), '9 days ago');
    assert.equal(formatAge('not a date', now), 'not a date');
  });
  it('oneLine collapses whitespace and cuts with an ellipsis', () => {
    assert.equal(oneLine('a\n  b\tc', 10), 'a b c');
    assert.equal(oneLine('abcdefghij', 5), 'abcd…');
  });
});
