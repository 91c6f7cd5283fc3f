/**
 * The Sessions and Memory tree views of the `pseudoclaude` container. The nodes come from
 * `src/chat/trees.ts` (pure); this file only turns them into VS Code tree items and asks the
 * server for their data (for the chat's folder).
 */
import * as vscode from 'vscode';
import { errorMessage } from '../errors';
import type { AgentClient } from '../ports';
import { Requests } from '../protocol';
import { memoryNodes, sessionNodes, type ProposalSource, type TreeNode } from '../chat/trees';

/** A tree of `TreeNode`s rebuilt by `load` on each refresh; a failure shows as one node. */
abstract class NodeTree implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    protected readonly agent: AgentClient,
    protected readonly folder: () => string | undefined,
  ) {}

  protected abstract load(folder: string): Promise<TreeNode[]>;

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(node?: TreeNode): Promise<TreeNode[]> {
    if (node) {
      return node.children ?? [];
    }
    const folder = this.folder();
    if (!folder) {
      return [];
    }
    try {
      return await this.load(folder);
    } catch (e) {
      return [{ id: 'error', label: 'Not available', description: errorMessage(e), tooltip: errorMessage(e), icon: 'warning' }];
    }
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    const item = new vscode.TreeItem(
      node.label,
      node.children
        ? node.collapsed
          ? vscode.TreeItemCollapsibleState.Collapsed
          : vscode.TreeItemCollapsibleState.Expanded
        : vscode.TreeItemCollapsibleState.None,
    );
    item.id = node.id;
    item.description = node.description;
    item.tooltip = node.tooltip;
    item.contextValue = node.contextValue;
    if (node.icon) {
      item.iconPath = new vscode.ThemeIcon(node.icon);
    }
    if (node.command) {
      const args = node.command.id === 'vscode.open'
        ? node.command.args.map((a) => (typeof a === 'string' ? vscode.Uri.parse(a) : a))
        : node.command.args;
      item.command = { command: node.command.id, title: node.command.title, arguments: args };
    }
    return item;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export class SessionsTree extends NodeTree {
  protected async load(folder: string): Promise<TreeNode[]> {
    const list = await this.agent.request(Requests.sessionsList, { workspace: folder });
    return sessionNodes(list.sessions, new Date(), folder);
  }
}

export class MemoryTree extends NodeTree {
  /** Pending proposals (SPEC §11 "Memory with consent"): none until a source is set. */
  proposals: ProposalSource | undefined;

  protected async load(folder: string): Promise<TreeNode[]> {
    const shown = await this.agent.request(Requests.memoryShow, { workspace: folder });
    const pending = await this.proposals?.list(folder).catch(() => undefined);
    const nodes = memoryNodes(shown, pending, new Date());
    return nodes.length > 0
      ? nodes
      : [{ id: 'disabled', label: 'Memory is disabled', description: 'memory.enabled', icon: 'circle-slash' }];
  }
}
