/**
 * The virtual documents of a write approval's diff (`vscode.diff` between "before" and "after"),
 * served by a TextDocumentContentProvider from memory: nothing is written to the workspace.
 * URIs `pseudoclaude-diff:/<approval id>/<before|after>/<path>` keep the file's name, so the
 * editor picks the language from it.
 */
export const DIFF_SCHEME = 'pseudoclaude-diff';

/**
 * The same documents for the files of a rewind preview (the file now, and after the rewind): a
 * scheme of their own, so that the diff editor shows none of the approvals' title buttons.
 */
export const REWIND_SCHEME = 'pseudoclaude-rewind';

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

/** The two URIs (as strings) and the editor title of a diff (`title`: another one than an approval's). */
export function diffUris(id: string, path: string, tool: string, scheme = DIFF_SCHEME, title?: string): DiffSides {
  const rel = encodePath(path) || 'file';
  const base = `${scheme}:/${encodeURIComponent(id)}`;
  return {
    before: `${base}/before/${rel}`,
    after: `${base}/after/${rel}`,
    title: title ?? `${path} (${tool}: proposed change) — PseudoClaude`,
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

  constructor(readonly scheme = DIFF_SCHEME) {}

  /** Keep both sides of approval `id`; answers the URIs to open. */
  add(id: string, path: string, tool: string, before: string, after: string, title?: string): DiffSides {
    const sides = diffUris(id, path, tool, this.scheme, title);
    this.texts.set(pathOf(sides.before, this.scheme), before);
    this.texts.set(pathOf(sides.after, this.scheme), after);
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
export function pathOf(uri: string, scheme = DIFF_SCHEME): string {
  const path = uri.slice(scheme.length + 1);
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * The documents of a memory proposal's diff (SPEC §11 "Memory with consent"), served from memory
 * by a writable file system provider: the left side (the note as it is) is read-only, the right
 * side (as proposed) can be edited and saved before it is accepted. Saving keeps the text here
 * only: nothing is written to the workspace or to the memory folder until Accept.
 * URIs `pseudoclaude-proposal:/<level> memory/<filename>?proposal=<id>&side=<before|after>`: the
 * path is what the breadcrumbs show, the query tells the documents apart.
 */
export const PROPOSAL_SCHEME = 'pseudoclaude-proposal';

/** What a proposal's diff shows. */
export interface ProposalDiff {
  /** The proposal id (one diff per proposal). */
  id: string;
  level: string;
  filename: string;
  action: string;
  before: string;
  after: string;
}

export type ProposalSide = 'before' | 'after';

const ACTION_TITLES: Record<string, string> = { create: 'new note', update: 'change', delete: 'delete' };

/** The tab title: short, the file name first. */
export function proposalTitle(p: Pick<ProposalDiff, 'level' | 'filename' | 'action'>): string {
  return `${p.filename} (${p.level} memory: ${ACTION_TITLES[p.action] ?? p.action})`;
}

/** Whether the right side can be edited (a delete has nothing to edit). */
export function proposalEditable(p: Pick<ProposalDiff, 'action'>): boolean {
  return p.action !== 'delete';
}

/** The two URIs (as strings) and the editor title of a proposal's diff. */
export function proposalUris(p: Pick<ProposalDiff, 'id' | 'level' | 'filename' | 'action'>): DiffSides {
  const rel = encodePath(`${p.level} memory/${p.filename}`) || 'note.md';
  const uri = (side: ProposalSide) =>
    `${PROPOSAL_SCHEME}:/${rel}?proposal=${encodeURIComponent(p.id)}&side=${side}`;
  return { before: uri('before'), after: uri('after'), title: proposalTitle(p) };
}

/** The key of a proposal document: its decoded path and query (`vscode.Uri.path`, `.query`). */
export function proposalKey(path: string, query: string): string {
  return `${path}?${query}`;
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The key of a `pseudoclaude-proposal:` URI string. */
export function proposalKeyOf(uri: string): string {
  const rest = uri.startsWith(`${PROPOSAL_SCHEME}:`) ? uri.slice(PROPOSAL_SCHEME.length + 1) : uri;
  const cut = rest.indexOf('?');
  return cut < 0 ? proposalKey(decoded(rest), '') : proposalKey(decoded(rest.slice(0, cut)), decoded(rest.slice(cut + 1)));
}

/** The proposal id and side of a proposal document (by its URI's decoded query, or its key). */
export function proposalOf(queryOrKey: string): { id: string; side: ProposalSide } | undefined {
  const query = queryOrKey.includes('?') ? queryOrKey.slice(queryOrKey.indexOf('?') + 1) : queryOrKey;
  const m = /(?:^|&)proposal=([^&]+)&side=(before|after)$/.exec(query);
  return m?.[1] && m[2] ? { id: m[1], side: m[2] as ProposalSide } : undefined;
}

export interface ProposalFile {
  text: string;
  readonly: boolean;
  ctime: number;
  mtime: number;
}

/** Why a write was refused. */
export type WriteRefusal = 'missing' | 'readonly';

/** The files of the open proposal diffs, by key (`proposalKey`). */
export class ProposalFiles {
  private readonly files = new Map<string, ProposalFile>();
  private clock = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** A strictly increasing time: each change gets a new mtime (editors reload on it). */
  private tick(): number {
    this.clock = Math.max(this.clock + 1, this.now());
    return this.clock;
  }

  /**
   * Keep both sides of proposal `p`; answers the URIs to open. A right side kept from an earlier
   * review of it (a saved edit) stays as it is.
   */
  add(p: ProposalDiff): DiffSides {
    const sides = proposalUris(p);
    const before = proposalKeyOf(sides.before);
    const after = proposalKeyOf(sides.after);
    if (!this.files.has(before)) {
      const t = this.tick();
      this.files.set(before, { text: p.before, readonly: true, ctime: t, mtime: t });
    }
    if (!this.files.has(after)) {
      const t = this.tick();
      this.files.set(after, { text: p.after, readonly: !proposalEditable(p), ctime: t, mtime: t });
    }
    return sides;
  }

  get(key: string): ProposalFile | undefined {
    return this.files.get(key);
  }

  /** A save of the right side: kept here (undefined), or refused. */
  write(key: string, text: string): WriteRefusal | undefined {
    const file = this.files.get(key);
    if (!file) {
      return 'missing';
    }
    if (file.readonly) {
      return 'readonly';
    }
    file.text = text;
    file.mtime = this.tick();
    return undefined;
  }

  /** The right side's key of proposal `id`, while its diff is kept. */
  afterKey(id: string): string | undefined {
    return [...this.files.keys()].find((k) => {
      const of = proposalOf(k);
      return of?.id === id && of.side === 'after';
    });
  }

  has(id: string): boolean {
    return this.afterKey(id) !== undefined;
  }

  /** Forget proposal `id`'s files; answers their keys. */
  remove(id: string): string[] {
    const gone = [...this.files.keys()].filter((k) => proposalOf(k)?.id === id);
    for (const k of gone) {
      this.files.delete(k);
    }
    return gone;
  }
}
