/** The VS Code side of the `Ui` port: messages, pickers, progress, editors, status bar. */
import * as vscode from 'vscode';
import { COMMANDS } from '../commands';
import { TOOLTIP_COMMANDS, type MeterView } from '../meter';
import type { PickItem } from '../pickers';
import type { CancelToken, Folder, InputOptions, PickOptions, Ui } from '../ports';

const FORGET_BUTTON: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('trash'),
  tooltip: 'Forget this note',
};

type VsItem<T> = vscode.QuickPickItem & { value?: T; source?: PickItem<T> };

/** The scheme of the read-only reports `openText` opens with a title (Show Permissions). */
export const TEXT_SCHEME = 'pseudoclaude-text';

/** The reports' texts, by path (`/<title>.<ext>`), as read-only documents. */
class TextDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? '';
  }

  set(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.path, text);
    this.changed.fire(uri);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** Open VS Code's diff editor on the two sides of a change (`before`, `after`: document URIs). */
export async function openDiff(
  sides: { before: string; after: string; title: string },
  preview: boolean,
): Promise<void> {
  await vscode.commands.executeCommand(
    'vscode.diff',
    vscode.Uri.parse(sides.before),
    vscode.Uri.parse(sides.after),
    sides.title,
    { preview, preserveFocus: true },
  );
}

export class VsCodeUi implements Ui, vscode.Disposable {
  private readonly status: vscode.StatusBarItem;
  private readonly reports = new TextDocuments();
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(TEXT_SCHEME, this.reports);

  constructor(
    private readonly transcriptChannel: vscode.OutputChannel,
    private readonly logChannel: vscode.LogOutputChannel,
  ) {
    this.status = vscode.window.createStatusBarItem('pseudoclaude.context', vscode.StatusBarAlignment.Left, 100);
    this.status.name = 'PseudoClaude Context';
    this.status.command = COMMANDS.showContext.id;
    this.status.text = 'PseudoClaude';
    this.status.show();
  }

  folders(): Folder[] {
    return (vscode.workspace.workspaceFolders ?? []).map((f) => ({ uri: f.uri.toString(), name: f.name }));
  }

  activeFolder(): Folder | undefined {
    const doc = vscode.window.activeTextEditor?.document;
    const folder = doc ? vscode.workspace.getWorkspaceFolder(doc.uri) : undefined;
    return folder ? { uri: folder.uri.toString(), name: folder.name } : undefined;
  }

  async input(options: InputOptions): Promise<string | undefined> {
    return vscode.window.showInputBox({
      title: options.title,
      prompt: options.prompt,
      placeHolder: options.placeHolder,
      ignoreFocusOut: true,
      validateInput: options.allowEmpty
        ? undefined
        : (value) => (value.trim() === '' ? 'Type something, or press Escape to cancel' : undefined),
    });
  }

  pick<T>(items: PickItem<T>[], options: PickOptions<T>): Promise<T | undefined> {
    const qp = vscode.window.createQuickPick<VsItem<T>>();
    qp.title = options.title;
    qp.placeholder = options.placeHolder;
    qp.matchOnDescription = true;
    qp.matchOnDetail = true;
    qp.ignoreFocusOut = true;
    qp.items = items.map((i) =>
      i.separator
        ? { label: i.label, kind: vscode.QuickPickItemKind.Separator }
        : {
            label: i.label,
            description: i.description,
            detail: i.detail,
            buttons: i.forgettable && options.onForget ? [FORGET_BUTTON] : undefined,
            value: i.value,
            source: i,
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
      qp.onDidAccept(() => finish(qp.selectedItems[0]?.value));
      qp.onDidHide(() => finish(undefined));
      qp.onDidTriggerItemButton(async (e) => {
        const value = e.item.value;
        if (value === undefined || !options.onForget) {
          return;
        }
        qp.busy = true;
        const removed = await options.onForget(value);
        qp.busy = false;
        if (removed) {
          qp.items = qp.items.filter((i) => i !== e.item);
        }
      });
      qp.show();
    });
  }

  info(message: string, ...actions: string[]): Promise<string | undefined> {
    return Promise.resolve(vscode.window.showInformationMessage(message, ...actions));
  }

  warn(message: string, ...actions: string[]): Promise<string | undefined> {
    return Promise.resolve(vscode.window.showWarningMessage(message, ...actions));
  }

  error(message: string, ...actions: string[]): Promise<string | undefined> {
    this.logChannel.error(message);
    return Promise.resolve(vscode.window.showErrorMessage(message, ...actions));
  }

  async confirm(message: string, action: string, detail?: string): Promise<boolean> {
    return (await vscode.window.showWarningMessage(message, { modal: true, detail }, action)) === action;
  }

  progress<T>(
    title: string,
    task: (report: (message: string) => void, token: CancelToken) => Promise<T>,
  ): Promise<T> {
    return Promise.resolve(
      vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: true },
        (progress, token) => task((message) => progress.report({ message }), token),
      ),
    );
  }

  async openUri(uri: string): Promise<void> {
    await vscode.window.showTextDocument(vscode.Uri.parse(uri), { preview: false });
  }

  async openText(content: string, language: string, title?: string): Promise<void> {
    if (title === undefined) {
      const doc = await vscode.workspace.openTextDocument({ content, language });
      await vscode.window.showTextDocument(doc, { preview: true });
      return;
    }
    const ext = language === 'markdown' ? 'md' : 'txt';
    const uri = vscode.Uri.from({ scheme: TEXT_SCHEME, path: `/${title.replace(/[/\\]/g, '-')}.${ext}` });
    this.reports.set(uri, content);
    let doc = await vscode.workspace.openTextDocument(uri);
    if (doc.languageId !== language) {
      doc = await vscode.languages.setTextDocumentLanguage(doc, language);
    }
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  showTranscript(): void {
    this.transcriptChannel.show(true);
  }

  setStatus(view: MeterView): void {
    this.status.text = view.text;
    const tooltip = new vscode.MarkdownString(view.tooltip);
    tooltip.isTrusted = { enabledCommands: [...TOOLTIP_COMMANDS] };
    this.status.tooltip = tooltip;
    this.status.backgroundColor =
      view.level === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : view.level === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
  }

  log(message: string): void {
    this.logChannel.info(message);
  }

  dispose(): void {
    this.status.dispose();
    this.registration.dispose();
    this.reports.dispose();
  }
}
