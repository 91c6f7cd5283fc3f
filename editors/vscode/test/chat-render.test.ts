/** The chat's HTML: Markdown sanitised, cards, the meter, the document and its CSP. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatHtml, contentSecurityPolicy, makeNonce } from '../src/chat/html';
import { escapeHtml, isAllowedLink, renderMarkdown } from '../src/chat/markdown';
import { emptyState, type ChatItem } from '../src/chat/model';
import { barSegments, renderChip, renderEarlier, renderItem, renderMeter, renderSessionOptions, renderWelcome, BAR_UNITS } from '../src/chat/render';
import type { MeterState } from '../src/meter';

/** No attribute starting with `on`, no `style=`, no `<script`, no `javascript:`. */
function assertInert(html: string): void {
  assert.doesNotMatch(html, /<[^>]*\son\w+\s*=/i, 'an inline event handler');
  assert.doesNotMatch(html, /<[^>]*\sstyle\s*=/i, 'an inline style');
  assert.doesNotMatch(html, /<script/i);
  assert.doesNotMatch(html, /(href|src)\s*=\s*"\s*javascript:/i);
}

describe('renderMarkdown', () => {
  it('renders Markdown: headings, lists, emphasis, inline code, tables', () => {
    const html = renderMarkdown('# Title\n\n- one\n- **two**\n\nUse `make test`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n');
    assert.match(html, /<h1>Title<\/h1>/);
    assert.match(html, /<li><strong>two<\/strong><\/li>/);
    assert.match(html, /<code>make test<\/code>/);
    assert.match(html, /<table>/);
  });
  it('escapes raw HTML instead of rendering it', () => {
    const html = renderMarkdown('<img src=x onerror="alert(1)"> <script>alert(2)</script>\n\n<b onclick="x()">b</b>');
    assert.match(html, /&lt;img src=x onerror=&quot;alert\(1\)&quot;&gt;/);
    assert.match(html, /&lt;script&gt;/);
    assertInert(html);
  });
  it('drops script, data and command links, keeps web, mail and relative links', () => {
    const html = renderMarkdown('[a](javascript:alert(1)) [b](data:text/html,x) [c](command:workbench.action.quit) [d](https://example.com) [e](src/app.ts) [f](mailto:a@b.c)');
    assert.doesNotMatch(html, /href="(javascript|data|command):/);
    assert.match(html, /<a href="https:\/\/example.com" title="https:\/\/example.com">d<\/a>/);
    assert.match(html, /<a href="src\/app.ts"/);
    assert.match(html, /<a href="mailto:a@b.c"/);
    assertInert(html);
    assert.equal(isAllowedLink('JavaScript:x'), false);
    assert.equal(isAllowedLink('//evil.example/x'), false);
    assert.equal(isAllowedLink('README.md#intro'), true);
  });
  it('shows images as links (no remote content)', () => {
    const html = renderMarkdown('![logo](https://example.com/logo.png)');
    assert.doesNotMatch(html, /<img/);
    assert.match(html, /<a href="https:\/\/example.com\/logo.png" class="image-link"[^>]*>image: logo<\/a>/);
  });
  it('gives code blocks a language label and a Copy button, escaped', () => {
    const html = renderMarkdown('```ts"><b>\nconst a = "<b>";\n```\n\n    indented <i>\n');
    assert.match(html, /<span class="code-lang">tsb<\/span>/);
    assert.match(html, /<button type="button" class="copy" data-action="copy"[^>]*>Copy<\/button>/);
    assert.match(html, /const a = &quot;&lt;b&gt;&quot;;/);
    assert.match(html, /indented &lt;i&gt;/);
    assert.equal((html.match(/class="code-block"/g) ?? []).length, 2);
    assertInert(html);
  });
  it('renders an unfinished stream (an open fence) without breaking the page', () => {
    const html = renderMarkdown('Here:\n\n```python\nprint(1)\n');
    assert.match(html, /<pre><code class="language-python">print\(1\)\n<\/code><\/pre>/);
  });
  it('escapeHtml escapes the five characters', () => {
    assert.equal(escapeHtml(`<a href="x" title='y'>&</a>`), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});

describe('renderItem', () => {
  it('escapes the user prompt and keeps its lines', () => {
    const html = renderItem({ kind: 'user', id: 'i1', text: '<b>hi</b>\nthere' });
    assert.match(html, /<div class="user-text">&lt;b&gt;hi&lt;\/b&gt;\nthere<\/div>/);
  });
  it('renders the answer as Markdown, marked while streaming', () => {
    const html = renderItem({ kind: 'assistant', id: 'i2', text: '**bold**', streaming: true });
    assert.match(html, /class="msg assistant streaming" data-id="i2"/);
    assert.match(html, /<strong>bold<\/strong>/);
  });
  it('renders a tool call as a collapsible card: name, argument summary, status, result preview', () => {
    const item: ChatItem = {
      kind: 'tool', id: 'i3', callId: 'c', name: 'read_file', arguments: { path: '<README>.md' },
      status: 'done', bytes: 2048, display: '# Demo <x>',
    };
    const closed = renderItem(item);
    assert.match(closed, /^<details class="card tool tool-done" data-id="i3">/);
    assert.match(closed, /<span class="tool-name">read_file<\/span>/);
    assert.match(closed, /path: &lt;README&gt;.md/);
    assert.match(closed, /done · 2.0 KB/);
    assert.match(closed, /<div class="card-label">Result \(start\)<\/div><pre class="card-pre"># Demo &lt;x&gt;/);
    assert.match(renderItem(item, true), /^<details class="card tool tool-done" data-id="i3" open>/);
    assertInert(closed);
    const running = renderItem({ kind: 'tool', id: 'i3', callId: 'c', name: 'read_file', arguments: {}, status: 'running' });
    assert.match(running, /running<\/span>/);
    assert.match(running, /Waiting for the result/);
  });
  it('shows the server\'s readable result as it is (no envelope decoding here)', () => {
    const html = renderItem({ kind: 'tool', id: 'i', callId: 'c', name: 'read_file', arguments: {}, status: 'done', bytes: 26, display: '# Demo\n\nIt keeps "sessions".' });
    assert.match(html, /<pre class="card-pre"># Demo\n\nIt keeps &quot;sessions&quot;.<\/pre>/);
    const envelope = '{"ok":true,"tool":"x","content":"a"}';
    assert.match(renderItem({ kind: 'tool', id: 'i', callId: 'c', name: 'x', arguments: {}, status: 'done', display: envelope }), /\{&quot;ok&quot;:true/);
  });
  it('renders failed, denied and cancelled calls with their own labels and the error', () => {
    const base = { kind: 'tool' as const, id: 'i', callId: 'c', name: 'run_command', arguments: { command: 'make' } };
    const failed = renderItem({ ...base, status: 'failed', display: 'exit 2: make: *** no rule', error: 'exit 2' });
    assert.match(failed, /class="card tool tool-failed"/);
    assert.match(failed, /failed<\/span>/);
    assert.match(failed, /<div class="card-label">Error<\/div><pre class="card-pre">exit 2: make/);
    assert.doesNotMatch(failed, /card-error/, 'an error the display already says is not repeated');
    const denied = renderItem({ ...base, status: 'denied', display: '', error: 'the user denied it' });
    assert.match(denied, /tool-denied/);
    assert.match(denied, /<div class="card-label">Denied<\/div><pre class="card-pre">the user denied it<\/pre>/);
    const canceled = renderItem({ ...base, status: 'canceled', display: 'stopped', error: 'the run was cancelled' });
    assert.match(canceled, /cancelled<\/span>/);
    assert.match(canceled, /<div class="card-label">Cancelled<\/div>/);
    assert.match(canceled, /<div class="card-error">the run was cancelled<\/div>/);
    assertInert(failed + denied + canceled);
  });
  it('dims and marks what the model no longer sees; shows markers, thinking and the earlier count', () => {
    const out = renderItem({ kind: 'user', id: 'u', text: 'old', outOfContext: true });
    assert.match(out, /class="msg user out-of-context"/);
    assert.match(out, /not in context<\/span>/);
    assert.doesNotMatch(renderItem({ kind: 'user', id: 'u', text: 'new' }), /out-of-context|not in context/);
    const summary = renderItem({ kind: 'summary', id: 's', text: 'Earlier', outOfContext: true });
    assert.match(summary, /card summary out-of-context/);
    const marker = renderItem({ kind: 'marker', id: 'm', marker: 'compaction', text: 'The earlier conversation was <summarized>.' });
    assert.match(marker, /event marker marker-compaction/);
    assert.match(marker, /The earlier conversation was &lt;summarized&gt;./);
    // Markers and notices come out of context too (a later compaction): never dimmed.
    for (const item of [
      { kind: 'marker', id: 'm2', marker: 'undo', text: 'Undone.', outOfContext: true },
      { kind: 'notice', id: 'n', level: 'info', text: 'Resumed.', outOfContext: true },
    ] as const) {
      assert.doesNotMatch(renderItem(item), /out-of-context|not in context/);
    }
    const tool = renderItem({ kind: 'tool', id: 't', callId: 'c', name: 'read_file', arguments: {}, status: 'failed', outOfContext: true });
    assert.match(tool, /class="card tool tool-failed out-of-context"/);
    const thought = renderItem({ kind: 'assistant', id: 'a', text: 'Answer', streaming: false, thinking: 'Let me *think*' });
    assert.match(thought, /<details class="thinking"><summary>Thinking<\/summary><div class="markdown"><p>Let me <em>think<\/em>/);
    assert.equal(renderEarlier(1), '<div class="earlier muted">1 earlier entry not shown</div>');
    assertInert(out + summary + marker + thought);
  });
  it('renders an inline approval with its three buttons and the diff link; a modal one without', () => {
    const inline = renderItem({
      kind: 'approval', id: 'ap1', tool: 'write_file', title: 'Allow write_file to change a.txt?', detail: 'a.txt (1 line → 2 lines)',
      mode: 'inline', status: 'pending', path: 'a.txt',
    });
    for (const d of ['allowOnce', 'allowSession', 'deny']) {
      assert.match(inline, new RegExp(`data-action="approve" data-decision="${d}" data-id="ap1"`));
    }
    assert.match(inline, /data-action="showDiff" data-id="ap1">Show diff/);
    assertInert(inline);
    const modal = renderItem({
      kind: 'approval', id: 'ap2', tool: 'run_command', title: 'Allow run_command: make?', detail: 'Arguments: {}',
      mode: 'modal', status: 'pending',
    });
    assert.doesNotMatch(modal, /data-action="approve"/);
    assert.match(modal, /Waiting for your answer in the dialog/);
    const done = renderItem({
      kind: 'approval', id: 'ap2', tool: 'run_command', title: 'Allow?', detail: '', mode: 'modal', status: 'deny',
    });
    assert.match(done, /^<div class="event approval-line approval-deny" data-id="ap2" role="note" title="Allow\?">/);
    assert.match(done, /<strong>Denied:<\/strong>/);
    assert.doesNotMatch(done, /<button/);
  });
  it('renders the compaction preview with instructions, Compact and Cancel; then its result', () => {
    const preview = {
      wouldSummarize: true, beforeTokens: 150_000, estimatedAfterTokens: 12_000, summarizedMessages: 40,
      keptMessages: 5, firstKeptIndex: 40, spill: { results: 2, bytes: 4096 },
      message: 'Would summarize the 40 oldest messages and keep the 5 newest <messages> as they are.',
    };
    const asking = renderItem({ kind: 'preview', id: 'pv1', preview, status: 'asking' });
    assert.match(asking, /<div class="card-title">Would summarize the 40 oldest messages and keep the 5 newest &lt;messages&gt; as they are.<\/div>/);
    assert.match(asking, /<li>Summarized: 40 messages; kept: 5 \(from message 41\)<\/li>/);
    assert.match(asking, /<li>Offloaded: 2 tool results \(4.0 KB\)<\/li>/);
    assert.match(asking, /<input type="text" class="instructions" data-id="pv1"/);
    assert.match(asking, /data-action="compactConfirm" data-id="pv1">Compact</);
    assert.match(asking, /data-action="compactCancel" data-id="pv1">Cancel</);
    const done = renderItem({ kind: 'preview', id: 'pv1', preview, status: 'done', result: 'Compacted: the earlier conversation is now a summary.' });
    assert.doesNotMatch(done, /data-action/);
    assert.match(done, /<div class="preview-result">Compacted: the earlier conversation is now a summary.<\/div>/, 'the result\'s message');
  });
  it('renders compaction with its fact check, memory changes and the end of a run', () => {
    const compact = renderItem({ kind: 'compact', id: 'i1', layer: 2, beforeTokens: 150_000, afterTokens: 20_000, offloaded: 0, factCheck: { checked: 12, missing: 2, added: 2 } });
    assert.match(compact, /Context compacted/);
    assert.match(compact, /150k → 20k tokens · summary checked: 12 facts, 2 carried by the server/);
    const memory = renderItem({ kind: 'memory', id: 'i2', status: 'proposed', changes: [{ action: 'create', level: 'project', filename: 'a.md' }] });
    assert.match(memory, /Memory changes proposed/);
    assert.match(memory, /create a.md \(project\): review them in the Memory view/);
    const end = renderItem({ kind: 'end', id: 'i3', stopReason: 'max_iterations', iterations: 15 });
    assert.match(end, /end end-warn/);
    assert.match(end, /maxIterations limit/);
  });
  it('shows the context breakdown of /context with its table unfolded', () => {
    const meter = { sessionId: 's', estimatedTokens: 5_000, contextWindow: 200_000, autoCompactThreshold: 167_000 };
    const html = renderItem({ kind: 'context', id: 'c1', meter });
    assert.match(html, /<section class="card context-card" data-id="c1"/);
    assert.match(html, /<details class="legend" open>/);
    assert.match(renderItem({ kind: 'context', id: 'c2', meter: null }), /no conversation yet/);
    assertInert(html);
  });
  it('welcomes with the keys, or asks for a folder', () => {
    assert.match(renderWelcome(emptyState({ uri: 'file:///a', name: 'a<b' })), /about <strong>a&lt;b<\/strong>/);
    assert.match(renderWelcome(emptyState()), /Open a folder/);
    const state = emptyState({ uri: 'file:///a', name: 'a' });
    assert.doesNotMatch(renderWelcome(state), /lists the commands/);
    assert.match(renderWelcome({ ...state, commands: [{ name: 'new', description: 'New' }] }), /<kbd>\/<\/kbd> lists the commands/);
  });
});

describe('the meter', () => {
  const meter: MeterState = {
    sessionId: 's', estimatedTokens: 50_000, contextWindow: 200_000, autoCompactThreshold: 167_000,
    breakdown: {
      system: 2_000, rules: 0, memory: 100, skills: 0, tools: 6_000, summary: 0, messages: 20_000, toolCalls: 1_900,
      toolResults: 20_000, spilled: 0, free: 150_000, reserved: 33_000,
    },
  };
  it('stacks the non-empty categories then free, to the full width; tiny ones stay visible', () => {
    const segs = barSegments(meter);
    assert.deepEqual(segs.map((s) => s.key), ['system', 'memory', 'tools', 'messages', 'toolCalls', 'toolResults', 'free']);
    assert.equal(segs.find((s) => s.key === 'memory')?.width, 4);
    assert.equal(segs.find((s) => s.key === 'tools')?.width, 30);
    const last = segs[segs.length - 1];
    assert.ok(last && Math.abs(last.x + last.width - BAR_UNITS) < 0.2);
    assert.equal(segs[0]?.title, 'System: 2,000 tokens (1%)');
  });
  it('renders an SVG bar with a tooltip per segment, the threshold and the breakdown table', () => {
    const html = renderMeter(meter);
    assert.match(html, /<svg class="meter-bar" viewBox="0 0 1000 10" preserveAspectRatio="none" role="img" aria-label="Context: 50,000 of 200,000 tokens \(25%\)">/);
    assert.match(html, /<rect class="seg seg-tools" x="[\d.]+" y="0" width="30" height="10"><title>Tools: 6,000 tokens \(3%\)<\/title><\/rect>/);
    assert.match(html, /<title>Auto-compact at 167,000 tokens<\/title>/);
    assert.match(html, /<td>.*Reserved<\/td><td>33,000<\/td><td>17%<\/td>/);
    assert.match(html, /50k \/ 200k tokens/);
    assertInert(html);
  });
  it('warns near the threshold and when automatic compaction stopped; empty without numbers', () => {
    assert.match(renderMeter({ ...meter, estimatedTokens: 160_000 }), /Close to the auto-compact threshold/);
    assert.match(renderMeter({ ...meter, autoCompactTripped: true }), /stopped after repeated failures/);
    assert.match(renderMeter(null), /no conversation yet/);
  });
  it('works without a breakdown (an older server)', () => {
    const { breakdown: _omit, ...bare } = meter;
    const segs = barSegments(bare);
    assert.deepEqual(segs.map((s) => s.key), ['used', 'free']);
  });
});

describe('pickers', () => {
  it('lists the sessions with the current one selected, names escaped', () => {
    const state = {
      ...emptyState(),
      sessionId: 'b',
      sessions: [
        { id: 'a', title: 'Fix <the> parser', createdAt: '', updatedAt: '2025-06-10T11:00:00Z', messageCount: 4, bytes: 1, model: '', active: false, running: true, worktree: null, answered: true },
        { id: 'b', title: '', createdAt: '', updatedAt: '2025-06-10T12:00:00Z', messageCount: 0, bytes: 1, model: '', active: true, running: false, worktree: null, answered: true },
      ],
    };
    const html = renderSessionOptions(state, new Date('2025-06-10T12:00:30Z'));
    // a session being written now (here or in another window) is marked
    assert.equal(html, '<option value="a" title="Running now">● Fix &lt;the&gt; parser · 1 h ago</option><option value="b" selected>New session · just now</option>');
    assert.equal(renderSessionOptions(emptyState(), new Date()), '<option value="" selected>New session</option>');
  });
});

describe('the document', () => {
  const doc = { cspSource: 'https://file+.vscode-resource.example', nonce: 'N0nce', scriptUri: 'https://x/chat.js', styleUri: 'https://x/chat.css' };
  it('has a strict Content-Security-Policy', () => {
    assert.equal(
      contentSecurityPolicy(doc),
      "default-src 'none'; style-src https://file+.vscode-resource.example; script-src 'nonce-N0nce'; " +
        "img-src https://file+.vscode-resource.example; font-src https://file+.vscode-resource.example; base-uri 'none'; form-action 'none'",
    );
  });
  it('loads only the extension\'s script (with the nonce) and stylesheet, no inline code', () => {
    const html = chatHtml(doc);
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;/);
    assert.match(html, /<script nonce="N0nce" src="https:\/\/x\/chat.js"><\/script>/);
    assert.match(html, /<link rel="stylesheet" href="https:\/\/x\/chat.css">/);
    assert.equal((html.match(/<script/g) ?? []).length, 1);
    assert.doesNotMatch(html, /<style|\sstyle=|\son\w+=/);
    for (const label of ['Prompt. Enter sends', 'Session: pick one', 'Context window', 'Conversation']) {
      assert.ok(html.includes(label), label);
    }
    assert.match(html, /<button type="button" id="mcp" class="mcp-button" data-action="mcp" title="MCP servers">MCP<\/button>/);
  });
  it('makes 32-character nonces from random bytes', () => {
    const nonce = makeNonce((n) => Uint8Array.from({ length: n }, (_, i) => i * 7));
    assert.match(nonce, /^[A-Za-z0-9]{32}$/);
  });
});

describe('editor chips', () => {
  it('the prompt box\'s chip: the folder muted, the file, the lines, an × that leaves it out', () => {
    const html = renderChip({ path: 'src/<app>.py', lines: '10-14', label: 'src/<app>.py:10-14', title: 'Goes with your prompt: src/<app>.py' });
    assert.match(html, /<span class="chip-dir">src\/<\/span><span class="chip-name">&lt;app&gt;.py<\/span><span class="chip-lines">:10-14<\/span>/);
    assert.match(html, /title="Goes with your prompt: src\/&lt;app&gt;.py"/);
    assert.match(html, /<button type="button" class="chip-remove" data-action="removeChip"[^>]*aria-label="Leave src\/&lt;app&gt;.py:10-14 out of the next prompt">×<\/button>/);
    assert.match(html, /chip-icon-lines/, 'a selection: the icon with lines');
    assertInert(html);
    assert.doesNotMatch(renderChip({ path: 'README.md', label: 'README.md', title: 't' }), /chip-dir|chip-lines|chip-icon-lines/);
    assert.equal(renderChip(null), '');
  });
  it('a sent prompt shows the chip it was sent with (and its problems); none without context', () => {
    const range = { start: { line: 9, character: 0 }, end: { line: 14, character: 0 } };
    const html = renderItem({
      kind: 'user', id: 'i1', text: 'Fix it',
      context: {
        activeFile: 'src/app.py',
        selection: { path: 'src/app.py', range, text: 'x' },
        diagnostics: [{ path: 'src/app.py', range, severity: 'error', message: 'm' }, { path: 'src/app.py', range, severity: 'warning', message: 'n' }],
      },
    });
    assert.match(html, /<div class="user-text">Fix it<\/div><div class="sent-context"><span class="chip chip-sent" title="Sent with src\/app.py, lines 10-14 selected; 2 problems the editor reports">/);
    assert.match(html, /<span class="chip-lines">:10-14<\/span><\/span><span class="chip-problems">2 problems<\/span>/);
    assert.doesNotMatch(html, /chip-remove/, 'nothing to remove on a sent prompt');
    assertInert(html);
    assert.doesNotMatch(renderItem({ kind: 'user', id: 'i2', text: 'plain' }), /sent-context/);
    assert.match(renderItem({ kind: 'user', id: 'i3', text: 'x', context: { openFiles: ['a.py'] } }), /1 open file/);
  });
  it('the document has the chip\'s row in the composer, hidden until there is a chip', () => {
    const html = chatHtml({ cspSource: 'c', nonce: 'n', scriptUri: 's', styleUri: 't' });
    assert.match(html, /<div id="chip" class="chip-row" aria-label="Goes with your prompt" hidden><\/div>\n {2}<textarea id="prompt"/);
  });
});
