/**
 * The VS Code side of memory proposal reviews (SPEC §11 "Memory with consent"): the documents of
 * a proposal's diff as a file system provider (`pseudoclaude-proposal:`, in memory: the left side
 * read-only, the right side editable; saving it keeps the text here, never in the workspace),
 * the diff editor's tabs, and the `ReviewEnv` of `src/chat/proposals.ts`.
 */
import * as vscode from 'vscode';
import { PROPOSAL_SCHEME, ProposalFiles, proposalKey, proposalOf, type ProposalDiff } from '../chat/diffs';
import type { ReviewEnv } from '../chat/proposals';
import { openDiff } from './ui';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function keyOf(uri: vscode.Uri): string {
  return proposalKey(uri.path, uri.query);
}

/** The proposal id of a tab that shows a proposal's diff. */
function proposalIdOfTab(tab: vscode.Tab): string | undefined {
  const input = tab.input;
  if (input instanceof vscode.TabInputTextDiff && input.modified.scheme === PROPOSAL_SCHEME) {
    return proposalOf(input.modified.query)?.id;
  }
  return undefined;
}

function allTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs);
}

export class ProposalDocuments implements vscode.FileSystemProvider, vscode.Disposable {
  readonly files = new ProposalFiles();
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  private readonly closedEmitter = new vscode.EventEmitter<string>();
  /** The user closed a proposal's diff (the id). */
  readonly onDidClose = this.closedEmitter.event;
  private readonly tabs: vscode.Disposable;

  constructor() {
    this.tabs = vscode.window.tabGroups.onDidChangeTabs((e) => {
      if (e.closed.length === 0) {
        return;
      }
      const still = new Set(allTabs().map(proposalIdOfTab));
      for (const tab of e.closed) {
        const id = proposalIdOfTab(tab);
        if (id && !still.has(id)) {
          this.closedEmitter.fire(id);
        }
      }
    });
  }

  // ------------------------------------------------------------------ the file system

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  private file(uri: vscode.Uri) {
    const file = this.files.get(keyOf(uri));
    if (!file) {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    return file;
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const file = this.file(uri);
    return {
      type: vscode.FileType.File,
      ctime: file.ctime,
      mtime: file.mtime,
      size: encoder.encode(file.text).byteLength,
      ...(file.readonly ? { permissions: vscode.FilePermission.Readonly } : {}),
    };
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  readFile(uri: vscode.Uri): Uint8Array {
    return encoder.encode(this.file(uri).text);
  }

  /** A save of the right side: kept in memory only (Accept sends it). */
  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    const refused = this.files.write(keyOf(uri), decoder.decode(content));
    if (refused === 'missing') {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    if (refused === 'readonly') {
      throw vscode.FileSystemError.NoPermissions(uri);
    }
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    vscode.window.setStatusBarMessage('PseudoClaude: saved in the proposal only: Accept writes the note', 5000);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  // ------------------------------------------------------------------ the diff editor

  async show(diff: ProposalDiff): Promise<void> {
    await openDiff(this.files.add(diff), false);
  }

  private documents(id: string): vscode.TextDocument[] {
    return vscode.workspace.textDocuments.filter(
      (d) => d.uri.scheme === PROPOSAL_SCHEME && proposalOf(d.uri.query)?.id === id,
    );
  }

  /** The right side as shown (unsaved edits too), else as last saved. */
  rightText(id: string): string | undefined {
    const key = this.files.afterKey(id);
    if (key === undefined) {
      return undefined;
    }
    const doc = this.documents(id).find((d) => keyOf(d.uri) === key);
    return doc ? doc.getText() : this.files.get(key)?.text;
  }

  /** Close the diff without a "save changes?" question (a save stays in memory anyway). */
  async close(id: string, forget: boolean): Promise<void> {
    for (const doc of this.documents(id).filter((d) => d.isDirty)) {
      await Promise.resolve(doc.save()).catch(() => false);
    }
    const tabs = allTabs().filter((t) => proposalIdOfTab(t) === id);
    if (tabs.length > 0) {
      await vscode.window.tabGroups.close(tabs, true);
    }
    if (forget) {
      this.files.remove(id);
    }
  }

  /** The proposal of the diff a title button was clicked on (its URI), else of the active tab. */
  idOf(resource: unknown): string | undefined {
    if (resource instanceof vscode.Uri && resource.scheme === PROPOSAL_SCHEME) {
      return proposalOf(resource.query)?.id;
    }
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    return tab ? proposalIdOfTab(tab) : undefined;
  }

  dispose(): void {
    this.tabs.dispose();
    this.changed.dispose();
    this.closedEmitter.dispose();
  }
}

/** `ReviewEnv` for VS Code: the diff editor, notifications beside it, errors logged too. */
export function reviewEnv(
  docs: ProposalDocuments,
  error: (message: string, ...actions: string[]) => Promise<string | undefined>,
): ReviewEnv {
  return {
    showDiff: (diff) => docs.show(diff),
    closeDiff: (id, forget) => docs.close(id, forget),
    rightText: (id) => docs.rightText(id),
    choose: async (message, ...actions) => vscode.window.showInformationMessage(message, ...actions),
    info: (message) => void vscode.window.showInformationMessage(message),
    error,
  };
}
