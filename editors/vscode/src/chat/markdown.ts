/**
 * Markdown of the answers, rendered by markdown-it with raw HTML disabled (so the model's text
 * can never inject markup), links limited to http(s), mailto and workspace-relative paths, images
 * shown as links (the webview loads nothing remote), and code blocks with a Copy button.
 * Pure: the same module renders in the webview and in the node tests.
 */
import MarkdownIt from 'markdown-it';
import { escapeHtml, isAllowedLink } from './escape';

export { escapeHtml, isAllowedLink };

type Md = InstanceType<typeof MarkdownIt>;

/** The language name of a fence's info string, reduced to safe characters. */
function fenceLanguage(info: string): string {
  const first = info.trim().split(/\s+/)[0] ?? '';
  return first.replace(/[^\w+#.-]/g, '').slice(0, 30);
}

export function codeBlock(code: string, language: string): string {
  const lang = fenceLanguage(language);
  const cls = lang ? ` class="language-${escapeHtml(lang)}"` : '';
  return (
    '<div class="code-block">' +
    '<div class="code-head">' +
    `<span class="code-lang">${escapeHtml(lang || 'text')}</span>` +
    '<button type="button" class="copy" data-action="copy" title="Copy to the clipboard" aria-label="Copy code">Copy</button>' +
    '</div>' +
    `<pre><code${cls}>${escapeHtml(code)}</code></pre>` +
    '</div>'
  );
}

function createRenderer(): Md {
  const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: false });
  md.validateLink = isAllowedLink;
  md.renderer.rules.fence = (tokens, idx) => {
    const token = tokens[idx];
    return token ? codeBlock(token.content, token.info) : '';
  };
  md.renderer.rules.code_block = (tokens, idx) => {
    const token = tokens[idx];
    return token ? codeBlock(token.content, '') : '';
  };
  // Images become links: the webview loads no remote content.
  md.renderer.rules.image = (tokens, idx) => {
    const token = tokens[idx];
    if (!token) {
      return '';
    }
    const src = String(token.attrGet('src') ?? '');
    const alt = token.children ? md.renderer.renderInlineAsText(token.children, md.options, {}) : token.content;
    return `<a href="${escapeHtml(src)}" class="image-link" title="${escapeHtml(src)}">${escapeHtml(`image: ${alt || src}`)}</a>`;
  };
  const defaultLink = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    const href = token?.attrGet('href');
    if (token && href) {
      token.attrSet('title', String(href));
    }
    return defaultLink(tokens, idx, options, env, self);
  };
  return md;
}

let renderer: Md | undefined;

/** HTML of `text` as Markdown (safe to insert: no raw HTML, no script URLs). */
export function renderMarkdown(text: string): string {
  renderer ??= createRenderer();
  return renderer.render(text);
}
