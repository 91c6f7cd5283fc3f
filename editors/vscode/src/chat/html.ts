/**
 * The chat webview's document: a strict Content-Security-Policy (nothing by default; the script
 * only with its nonce; styles, images and fonts only from the extension's own files), the
 * stylesheet and the bundled script from the extension, and the empty regions the script fills.
 * No inline script, no inline style, no inline event handler.
 */
import { escapeHtml as esc } from './escape';

export interface ChatDocument {
  /** `webview.cspSource`: the origin of the extension's files in the webview. */
  cspSource: string;
  /** A fresh random nonce per document. */
  nonce: string;
  /** `webview.asWebviewUri` of the bundled script and of the stylesheet. */
  scriptUri: string;
  styleUri: string;
}

/** The Content-Security-Policy of the chat. */
export function contentSecurityPolicy(d: Pick<ChatDocument, 'cspSource' | 'nonce'>): string {
  return [
    "default-src 'none'",
    `style-src ${d.cspSource}`,
    `script-src 'nonce-${d.nonce}'`,
    `img-src ${d.cspSource}`,
    `font-src ${d.cspSource}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** A nonce of 32 characters from `random` (bytes in 0..255). */
export function makeNonce(random: (n: number) => Uint8Array): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(random(32), (b) => chars[b % chars.length]).join('');
}

export function chatHtml(d: ChatDocument): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(contentSecurityPolicy(d))}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${esc(d.styleUri)}">
<title>PseudoClaude Chat</title>
</head>
<body>
<header class="toolbar" role="toolbar" aria-label="Chat">
  <select id="folder" class="folder" aria-label="Workspace folder" hidden></select>
  <select id="session" class="session" aria-label="Session: pick one to resume it"></select>
  <div class="toolbar-buttons">
    <button type="button" id="new" data-action="newSession" title="Start a new session">New</button>
    <button type="button" id="compact" data-action="compactPreview" title="Preview a compaction of the context, then confirm">Compact…</button>
    <button type="button" id="undo" data-action="undo" title="Bring back what the last compaction summarized">Undo</button>
    <button type="button" id="mcp" class="mcp-button" data-action="mcp" title="MCP servers">MCP</button>
  </div>
</header>
<div id="worktree" class="worktree-bar" role="group" aria-label="Worktree of this session" hidden></div>
<section id="meter" class="meter" aria-label="Context window"></section>
<main id="transcript" class="transcript" role="log" aria-label="Conversation" aria-live="polite" tabindex="-1"></main>
<footer class="composer">
  <section id="bg-tasks" class="tasks bg-tasks" aria-label="Background tasks" hidden></section>
  <section id="tasks" class="tasks" aria-label="Task list" hidden></section>
  <ul id="slash" class="slash-list" role="listbox" aria-label="Slash commands" hidden></ul>
  <div id="chip" class="chip-row" aria-label="Goes with your prompt" hidden></div>
  <textarea id="prompt" rows="3" placeholder="Ask PseudoClaude… (/ for commands)" aria-label="Prompt. Enter sends, Shift+Enter adds a line, Up and Down browse earlier prompts, / lists commands, Shift+Tab switches the permission mode" aria-describedby="status" aria-autocomplete="list" aria-controls="slash"></textarea>
  <div id="mode-error" class="mode-error" role="alert" hidden></div>
  <div class="composer-row">
    <div class="mode-picker">
      <button type="button" id="mode" class="mode-button" data-action="modeMenu" aria-haspopup="menu" aria-expanded="false" aria-controls="mode-menu" hidden></button>
      <div id="mode-menu" class="mode-menu" role="menu" aria-label="Permission mode" hidden></div>
    </div>
    <span id="status" class="status" role="status"></span>
    <button type="button" id="cancel" data-action="cancel" title="Cancel the run" hidden>Stop</button>
    <button type="button" id="send" class="primary" data-action="send" title="Send (Enter)">Send</button>
  </div>
</footer>
<script nonce="${esc(d.nonce)}" src="${esc(d.scriptUri)}"></script>
</body>
</html>
`;
}
