/**
 * The VS Code side of the MCP servers: the MCP menu as a quick pick that follows `McpMenu` (its
 * rows change while it is up, as the servers start, fail or get approved), the modal question
 * of Approve…, and opening where servers are configured (the `pseudoclaude.mcp.servers` setting,
 * the folder's `.mcp.json`). What the rows say and do is in `src/chat/mcp.ts`.
 */
import * as vscode from 'vscode';
import { MCP_JSON_TEMPLATE, type McpAction, type McpExit, type McpMenu, type McpRow } from '../chat/mcp';
import type { ChatFolder } from '../chat/model';

type Item = vscode.QuickPickItem & { row: McpRow };
type Button = vscode.QuickInputButton & { action: McpAction };

function icon(row: McpRow): vscode.ThemeIcon | undefined {
  if (!row.icon) {
    return undefined;
  }
  return row.color ? new vscode.ThemeIcon(row.icon, new vscode.ThemeColor(row.color)) : new vscode.ThemeIcon(row.icon);
}

function item(row: McpRow): Item {
  if (row.separator) {
    return { label: row.label, kind: vscode.QuickPickItemKind.Separator, row };
  }
  const buttons: Button[] = row.buttons.map((b) => ({
    iconPath: new vscode.ThemeIcon(b.icon),
    tooltip: b.tooltip,
    action: b.action,
  }));
  return {
    label: row.label,
    description: row.description,
    detail: row.detail,
    iconPath: icon(row),
    buttons,
    row,
  };
}

/**
 * Show `menu` until it is closed (undefined) or a row that leaves it is chosen. Enter on a row
 * (or a click) does what the row does; the rows' buttons do the same for the pointer. The list
 * stays up while the editor takes the focus.
 */
export function showMcpMenu(menu: McpMenu): Promise<McpExit | undefined> {
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = menu.title;
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.ignoreFocusOut = true;
  qp.keepScrollPosition = true;
  let first = menu.focus;
  const render = (): void => {
    const active = first ?? qp.activeItems[0]?.row.key;
    first = undefined;
    qp.placeholder = menu.placeholder;
    qp.items = menu.rows().map(item);
    const again = active ? qp.items.find((i) => i.row.key === active) : undefined;
    if (again) {
      qp.activeItems = [again];
    }
  };
  render();
  return new Promise<McpExit | undefined>((resolve) => {
    let done = false;
    const finish = (exit: McpExit | undefined): void => {
      if (!done) {
        done = true;
        changed.dispose();
        resolve(exit);
        qp.dispose();
      }
    };
    const run = async (action: McpAction): Promise<void> => {
      const exit = await menu.act(action);
      if (exit) {
        finish(exit);
      }
    };
    const changed = menu.onChange(() => {
      if (!done) {
        render();
      }
    });
    qp.onDidAccept(() => {
      const row = qp.selectedItems[0]?.row ?? qp.activeItems[0]?.row;
      if (row) {
        void run(row.action);
      }
    });
    qp.onDidTriggerItemButton((e) => void run((e.button as Button).action));
    qp.onDidHide(() => finish(undefined));
    qp.show();
  });
}

/** A modal warning with `actions` as buttons (VS Code adds Cancel: undefined). */
export async function askModal(message: string, detail: string, actions: readonly string[]): Promise<string | undefined> {
  return vscode.window.showWarningMessage(message, { modal: true, detail }, ...actions);
}

export async function readFolderFile(folder: ChatFolder, path: string): Promise<string | undefined> {
  try {
    const bytes = await vscode.workspace.fs.readFile(vscode.Uri.joinPath(vscode.Uri.parse(folder.uri), path));
    return new TextDecoder().decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The `pseudoclaude.mcp.servers` setting in the Settings editor, or the folder's `.mcp.json`: the
 * file when there is one, else a new one (unsaved, with an example server) to save there.
 */
export async function openMcpConfig(where: 'settings' | 'mcpJson', folder: ChatFolder): Promise<void> {
  if (where === 'settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'pseudoclaude.mcp.servers');
    return;
  }
  const file = vscode.Uri.joinPath(vscode.Uri.parse(folder.uri), '.mcp.json');
  let exists = true;
  try {
    await vscode.workspace.fs.stat(file);
  } catch {
    exists = false;
  }
  if (exists) {
    await vscode.window.showTextDocument(file, { preview: false });
    return;
  }
  const doc = await vscode.workspace.openTextDocument(file.with({ scheme: 'untitled' }));
  const editor = await vscode.window.showTextDocument(doc, { preview: false });
  if (doc.getText() === '') {
    await editor.edit((e) => e.insert(new vscode.Position(0, 0), MCP_JSON_TEMPLATE));
  }
}
