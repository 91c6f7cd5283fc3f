/**
 * Escaping and the links the chat may open: shared by the webview (through `markdown.ts`) and the
 * extension host, which must not load markdown-it (it is bundled into the webview script only).
 */

/** `&`, `<`, `>`, `"` and `'` as entities: safe in element text and in quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;',
  );
}

/** Link targets an answer may use: web pages, mail, and paths inside the workspace. */
export function isAllowedLink(href: string): boolean {
  const url = href.trim();
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url);
  if (!scheme) {
    return !url.startsWith('//');
  }
  return ['http', 'https', 'mailto'].includes((scheme[1] ?? '').toLowerCase());
}
