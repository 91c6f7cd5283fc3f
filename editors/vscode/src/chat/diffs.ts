/**
 * The virtual documents of a write approval's diff (`vscode.diff` between "before" and "after"),
 * served by a TextDocumentContentProvider from memory: nothing is written to the workspace.
 * URIs `pseudoclaude-diff:/<approval id>/<before|after>/<path>` keep the file's name, so the
 * editor picks the language from it.
 */
export const DIFF_SCHEME = 'pseudoclaude-diff';

export interface DiffSides {
  before: string;
  after: string;
  title: string;
}

function encodePath(path: string): string {
  return path
    .replace(/\\/g, '/')
    .split('/')
    .filter((p) => p !== '' && p !== '.' && p !== '..')
    .map(encodeURIComponent)
    .join('/');
}

/** The two URIs (as strings) and the editor title of a diff. */
export function diffUris(id: string, path: string, tool: string): DiffSides {
  const rel = encodePath(path) || 'file';
  const base = `${DIFF_SCHEME}:/${encodeURIComponent(id)}`;
  return {
    before: `${base}/before/${rel}`,
    after: `${base}/after/${rel}`,
    title: `${path} (${tool}: proposed change) — PseudoClaude`,
  };
}

/** The approval id of a diff document's decoded URI path (`/<id>/...`). */
export function diffIdOf(uriPath: string): string | undefined {
  const m = /^\/([^/]+)\/(before|after)\//.exec(uriPath);
  return m?.[1];
}

/** The texts of the open diffs, by URI path. */
export class DiffStore {
  private readonly texts = new Map<string, string>();

  /** Keep both sides of approval `id`; answers the URIs to open. */
  add(id: string, path: string, tool: string, before: string, after: string): DiffSides {
    const sides = diffUris(id, path, tool);
    this.texts.set(pathOf(sides.before), before);
    this.texts.set(pathOf(sides.after), after);
    return sides;
  }

  /** The text of a diff document (by its decoded URI path); undefined when it is gone. */
  text(uriPath: string): string | undefined {
    return this.texts.get(uriPath);
  }

  remove(id: string): void {
    for (const key of [...this.texts.keys()]) {
      if (diffIdOf(key) === id) {
        this.texts.delete(key);
      }
    }
  }
}

/** The path of a `pseudoclaude-diff:` URI string, decoded (as `vscode.Uri.path` gives it). */
export function pathOf(uri: string): string {
  const path = uri.slice(DIFF_SCHEME.length + 1);
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
