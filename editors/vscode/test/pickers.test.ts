import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { approvalAnswer, approvalPrompt, isApproval } from '../src/approvals';
import { levelItems, memoryItems, sessionItems, typeItems } from '../src/pickers';
import { MEMORY_TYPES } from '../src/protocol';

describe('sessionItems', () => {
  it('shows title, age, message count and model; marks the active one', () => {
    const now = new Date('2025-06-10T12:00:00Z');
    const items = sessionItems([
      { id: '20250610-115500-abcd', title: 'fix the parser', createdAt: '2025-06-10T11:00:00Z', updatedAt: '2025-06-10T11:55:00Z', messageCount: 12, bytes: 4300, model: 'claude-sonnet-4-6', active: true, running: false, worktree: null, answered: true },
      { id: '20250601-090000-0000', title: '', createdAt: '2025-06-01T09:00:00Z', updatedAt: '2025-06-01T09:00:00Z', messageCount: 1, bytes: 100, model: '', active: false, running: false, worktree: null, answered: true },
    ], now);
    assert.equal(items[0]?.label, '$(circle-filled) fix the parser');
    assert.equal(items[0]?.description, '5 min ago · 12 messages · claude-sonnet-4-6');
    assert.equal(items[0]?.detail, '20250610-115500-abcd · 4.2 KB · active');
    assert.equal(items[1]?.label, '(no messages yet)');
    assert.equal(items[1]?.description, '9 days ago · 1 message');
    assert.equal(items[1]?.value.id, '20250601-090000-0000');
  });
});

describe('memoryItems', () => {
  it('lists the index, then each store with MEMORY.md and its notes', () => {
    const items = memoryItems({
      index: '## Project Memory\n- [project_knowledge] Tests — make test (project_knowledge_tests.md)',
      truncated: false,
      health: { lines: 2, bytes: 80, maxLines: 200, maxBytes: 25_600 },
      stores: [
        { level: 'project', dir: '/w/.PseudoClaude/memory', indexUri: 'file:///w/.PseudoClaude/memory/MEMORY.md', notes: [
          { filename: 'project_knowledge_tests.md', uri: 'file:///w/.PseudoClaude/memory/project_knowledge_tests.md', type: 'project_knowledge', title: 'Tests', summary: 'make test' },
        ] },
        { level: 'user', dir: '/home/u/.PseudoClaude/memory', indexUri: 'file:///home/u/.PseudoClaude/memory/MEMORY.md', notes: [] },
      ],
    });
    assert.deepEqual(items.map((i) => [i.label, !!i.separator, !!i.forgettable]), [
      ['$(book) Memory index as the model sees it', false, false],
      ['Project memory', true, false],
      ['$(list-unordered) MEMORY.md', false, false],
      ['Tests', false, true],
      ['User memory', true, false],
      ['$(list-unordered) MEMORY.md', false, false],
      ['(no notes yet)', false, false],
    ]);
    assert.deepEqual(items[3]?.value, { kind: 'file', uri: 'file:///w/.PseudoClaude/memory/project_knowledge_tests.md', level: 'project', filename: 'project_knowledge_tests.md' });
    assert.equal(items[3]?.detail, 'make test');
  });
  it('says when the index was truncated', () => {
    assert.equal(memoryItems({ index: '', truncated: true, stores: [], health: { lines: 2, bytes: 80, maxLines: 200, maxBytes: 25_600 } })[0]?.description, 'truncated');
  });
  it('offers both levels and the four memory types', () => {
    assert.deepEqual(levelItems().map((i) => i.value), ['project', 'user']);
    assert.deepEqual(typeItems().map((i) => i.value), [...MEMORY_TYPES]);
  });
});

describe('approvals', () => {
  const request = {
    type: 2,
    message: 'PseudoClaude wants to run a command:\nmake test',
    actions: [{ title: 'Allow once' }, { title: 'Allow for this session' }, { title: 'Deny' }],
  };
  it('recognises an approval request', () => {
    assert.ok(isApproval(request));
    assert.ok(!isApproval({ ...request, type: 3 }));
    assert.ok(!isApproval({ type: 2, message: 'x', actions: [{ title: 'OK' }] }));
    assert.ok(!isApproval({ type: 2, message: 'x', actions: null }));
  });
  it('shows it as a modal with Deny as the close affordance', () => {
    const p = approvalPrompt(request);
    assert.equal(p.message, 'PseudoClaude wants to run a command:');
    assert.equal(approvalPrompt({ ...request, message: 'run_command make test' }).message, 'PseudoClaude: run_command make test');
    assert.equal(approvalPrompt({ ...request, message: 'run_command make test' }).detail, undefined);
    assert.equal(p.detail, 'make test');
    assert.deepEqual(p.buttons, [
      { title: 'Allow once', isCloseAffordance: false },
      { title: 'Allow for this session', isCloseAffordance: false },
      { title: 'Deny', isCloseAffordance: true },
    ]);
  });
  it('answers the picked action, or null (a denial) when dismissed', () => {
    assert.deepEqual(approvalAnswer(request, 'Allow for this session'), { title: 'Allow for this session' });
    assert.equal(approvalAnswer(request, undefined), null);
    assert.equal(approvalAnswer(request, 'Something else'), null);
  });
});
