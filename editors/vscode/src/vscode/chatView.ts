/**
 * The VS Code side of the chat: the webview view `pseudoclaude.chat` (its document, its messages
 * to and from `ChatHost`), the virtual documents of approval diffs, and the editor services the
 * host asks for (`ChatEnv`; the MCP menu's from `./mcp`). Everything else of the chat is in
 * `src/chat/` (no `vscode` there).
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { DIFF_SCHEME, DiffStore, diffIdOf } from '../chat/diffs';
import type { ChatEnv, ChatHost, ChatPickOptions, DiffRequest, WorktreeDiff } from '../chat/host';
import { chatHtml, makeNonce } from '../chat/html';
import { isAllowedLink } from '../chat/escape';
import type { ChatFolder } from '../chat/model';
import type { KeepOpenItem } from '../chat/rewind';
import { askModal, openMcpConfig, readFolderFile, showMcpMenu } from './mcp';
import { openDiff } from './ui';

export const CHAT_VIEW = 'pseudoclaude.chat';

/** The chat's webview view: a fresh document (and nonce) each time VS Code resolves it. */
export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly host: () => ChatHost,
  ) {}

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    const bundle = vscode.Uri.joinPath(this.extensionUri, 'out', 'webview');
    view.webview.options = { enableScripts: true, localResourceRoots: [media, bundle] };
    const host = this.host();
    const panel = { post: (m: unknown) => void view.webview.postMessage(m) };
    host.attach(panel);
    const received = view.webview.onDidReceiveMessage((m: unknown) => void host.handle(m));
    view.onDidDispose(() => {
      received.dispose();
      host.detach(panel);
      if (this.view === view) {
        this.view = undefined;
      }
    });
    view.webview.html = chatHtml({
      cspSource: view.webview.cspSource,
      nonce: makeNonce((n) => randomBytes(n)),
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(bundle, 'chat.js')).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css')).toString(),
    });
  }

  /** Show the view (resolving it when needed). */
  async reveal(preserveFocus = true): Promise<void> {
    if (this.view) {
      this.view.show(preserveFocus);
      return;
    }
    await vscode.commands.executeCommand(`${CHAT_VIEW}.focus`);
  }
}

/**
 * The texts of approval diffs, as read-only virtual documents (`pseudoclaude-diff:`); another
 * instance serves the files of a rewind preview (`pseudoclaude-rewind:`).
 */
export class DiffDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  readonly store: DiffStore;
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(
    readonly scheme = DIFF_SCHEME,
    private readonly gone = '(this change was already answered)\n',
  ) {
    this.store = new DiffStore(scheme);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.store.text(uri.path) ?? this.gone;
  }

  async show(diff: DiffRequest): Promise<void> {
    await openDiff(this.store.add(diff.id, diff.path, diff.tool, diff.before, diff.after, diff.title), true);
  }

  /** Close the diff editors of approval `id` and forget its texts. */
  close(id: string): void {
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => {
      const input = t.input;
      return (
        input instanceof vscode.TabInputTextDiff &&
        input.modified.scheme === this.scheme &&
        diffIdOf(input.modified.path) === id
      );
    });
    this.store.remove(id);
    if (tabs.length > 0) {
      void vscode.window.tabGroups.close(tabs, true);
    }
  }

  /** The approval id of the diff in the active editor group, if it shows one of ours. */
  activeId(): string | undefined {
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    if (input instanceof vscode.TabInputTextDiff && input.modified.scheme === this.scheme) {
      return diffIdOf(input.modified.path);
    }
    return undefined;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

type PickRow<T> = vscode.QuickPickItem & { value: T; keepOpen?: boolean };

/**
 * A quick pick for the chat: it stays up when the editor gets the focus (a diff it opened);
 * choosing a `keepOpen` item runs `onKeep` (its answer becomes the item's detail line) and the
 * list stays. Escape answers undefined.
 */
export function chatPick<T>(items: KeepOpenItem<T>[], options: ChatPickOptions<T>): Promise<T | undefined> {
  const qp = vscode.window.createQuickPick<PickRow<T>>();
  qp.title = options.title;
  qp.placeholder = options.placeHolder;
  qp.matchOnDescription = true;
  qp.ignoreFocusOut = true;
  qp.items = items.map((i) =>
    i.separator
      ? { label: i.label, kind: vscode.QuickPickItemKind.Separator, value: i.value }
      : {
          label: i.label,
          description: i.description,
          detail: i.detail,
          value: i.value,
          ...(i.keepOpen ? { keepOpen: true } : {}),
        },
  );
  return new Promise<T | undefined>((resolve) => {
    let done = false;
    const finish = (value: T | undefined): void => {
      if (!done) {
        done = true;
        resolve(value);
        qp.dispose();
      }
    };
    qp.onDidAccept(async () => {
      const row = qp.selectedItems[0];
      if (!row) {
        return;
      }
      if (!row.keepOpen) {
        finish(row.value);
        return;
      }
      qp.busy = true;
      const note = await options.onKeep?.(row.value).catch((e: unknown) => String(e));
      qp.busy = false;
      if (!done && note !== undefined && note !== row.detail) {
        const active = qp.items.indexOf(row);
        qp.items = qp.items.map((r) => (r === row ? { ...r, detail: note } : r));
        const again = qp.items[active];
        if (again) {
          qp.activeItems = [again];
        }
      }
    });
    qp.onDidHide(() => finish(undefined));
    qp.show();
  });
}

/** The empty side of a worktree diff (a file new in the worktree, or deleted there). */
export const EMPTY_SCHEME = 'pseudoclaude-empty';

/** Empty read-only documents (`pseudoclaude-empty:`): the missing side of a diff. */
export class EmptyDocuments implements vscode.TextDocumentContentProvider {
  provideTextDocumentContent(): string {
    return '';
  }
}

/**
 * VS Code's diff editor on a worktree session's file: the folder's file (left) and the
 * worktree's (right); a side the file does not exist on is empty.
 */
export async function showWorktreeDiff(diff: WorktreeDiff): Promise<void> {
  const parts = diff.file.path.split('/').filter(Boolean);
  const empty = vscode.Uri.from({ scheme: EMPTY_SCHEME, path: `/${diff.file.path}` });
  const left = diff.file.action === 'create' ? empty : vscode.Uri.joinPath(vscode.Uri.parse(diff.folder), ...parts);
  const right = diff.file.action === 'delete' ? empty : vscode.Uri.joinPath(vscode.Uri.file(diff.worktree), ...parts);
  await vscode.commands.executeCommand('vscode.diff', left, right, diff.title, { preview: true, preserveFocus: true });
}

function chatFolder(f: vscode.WorkspaceFolder): ChatFolder {
  return { uri: f.uri.toString(), name: f.name };
}

/** `ChatEnv` for VS Code. */
export function chatEnv(
  log: vscode.LogOutputChannel,
  provider: ChatViewProvider,
  diffs: DiffDocuments,
  rewindDiffs: DiffDocuments,
  state: vscode.Memento,
  hooks: {
    cancelOtherRun(): Promise<void>;
    sessionsChanged(folder: ChatFolder): void;
    showMemory(): Promise<void>;
    showTranscript: ChatEnv['showTranscript'];
  },
): ChatEnv {
  const key = (folder: string): string => `pseudoclaude.chat.session:${folder}`;
  return {
    rememberedSession: (folder) => state.get<string>(key(folder)),
    rememberSession: (folder, sessionId) => void state.update(key(folder), sessionId),
    folders: () => (vscode.workspace.workspaceFolders ?? []).map(chatFolder),
    activeFolder: () => {
      const doc = vscode.window.activeTextEditor?.document;
      const folder = doc ? vscode.workspace.getWorkspaceFolder(doc.uri) : undefined;
      return folder ? chatFolder(folder) : undefined;
    },
    log: (message) => log.info(message),
    copy: async (text) => {
      await vscode.env.clipboard.writeText(text);
    },
    openLink: async (href, folder) => {
      if (!isAllowedLink(href)) {
        throw new Error('only web, mail and workspace links open from the chat');
      }
      if (/^(https?|mailto):/i.test(href)) {
        await vscode.env.openExternal(vscode.Uri.parse(href, true));
        return;
      }
      if (!folder) {
        throw new Error('no workspace folder');
      }
      const base = vscode.Uri.parse(folder.uri);
      const path = decodeURIComponent(href.replace(/[#?].*$/, ''));
      const target = vscode.Uri.joinPath(base, path);
      if (!target.path.startsWith(`${base.path.replace(/\/$/, '')}/`)) {
        throw new Error('the path is outside the workspace folder');
      }
      await vscode.window.showTextDocument(target, { preview: true });
    },
    showDiff: (diff) => diffs.show(diff),
    closeDiff: (id) => diffs.close(id),
    pick: (items, options) => chatPick(items, options),
    showRewindDiff: (diff) => rewindDiffs.show(diff),
    closeRewindDiff: (id) => rewindDiffs.close(id),
    reveal: (focus) => provider.reveal(!focus),
    cancelOtherRun: hooks.cancelOtherRun,
    showTranscript: hooks.showTranscript,
    sessionsChanged: hooks.sessionsChanged,
    showMemory: hooks.showMemory,
    mcpMenu: (menu) => showMcpMenu(menu),
    ask: (message, detail, actions) => askModal(message, detail, actions),
    readFile: (folder, path) => readFolderFile(folder, path),
    openMcpConfig: (where, folder) => openMcpConfig(where, folder),
    showWorktreeDiff: (diff) => showWorktreeDiff(diff),
    notify: async (message, actions) => vscode.window.showInformationMessage(message, ...actions),
  };
}
