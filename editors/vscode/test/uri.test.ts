import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorMessage, describeFailure, isCancelled } from '../src/errors';
import { baseName, normalizeUri, sameUri, uriToPath } from '../src/uri';

describe('uri', () => {
  it('compares folder URIs across encodings and trailing slashes', () => {
    assert.ok(sameUri('file:///tmp/my%20ws/', 'file:///tmp/my ws'));
    assert.ok(sameUri('file:///c%3A/Users/x', 'file:///C:/Users/x'));
    assert.ok(!sameUri('file:///tmp/a', 'file:///tmp/b'));
    assert.equal(normalizeUri('file:///tmp/a///'), 'file:///tmp/a');
  });
  it('turns file URIs into paths', () => {
    assert.equal(uriToPath('file:///tmp/my%20ws'), '/tmp/my ws');
    assert.equal(uriToPath('file:///c%3A/Users/x'), 'c:\\Users\\x');
    assert.equal(uriToPath('untitled:Untitled-1'), undefined);
  });
  it('names a folder by its last segment', () => {
    assert.equal(baseName('file:///tmp/proj/'), 'proj');
    assert.equal(baseName('file:///home/u/my%20app'), 'my app');
  });
});

describe('errors', () => {
  it('uses the server message of a JSON-RPC error, first line only', () => {
    const e = Object.assign(new Error('a run is already in progress\nTraceback ...'), { code: -32803 });
    assert.equal(errorMessage(e), 'a run is already in progress');
    assert.equal(describeFailure('Ask', e), 'PseudoClaude: Ask failed: a run is already in progress');
  });
  it('recognises a cancelled request', () => {
    assert.ok(isCancelled({ code: -32800, message: 'cancelled' }));
    assert.ok(!isCancelled({ code: -32803, message: 'failed' }));
    assert.ok(!isCancelled(new Error('x')));
  });
  it('never answers with an empty message', () => {
    assert.equal(errorMessage(undefined), 'unknown error');
    assert.equal(errorMessage({ code: -32603, message: '' }), 'error -32603');
    assert.equal(errorMessage('  spawn ENOENT '), 'spawn ENOENT');
  });
});
