/**
 * The MCP servers of the chat's folder (`pseudoclaude/mcp/list`): their statuses in words, the
 * header button's count, the rows of the MCP menu (a quick pick: each server with its status,
 * source and tools, Enter doing what the server needs: show its tools, approve it, restart it),
 * the answers of an approval and the command line a `.mcp.json` server would run. Pure: no DOM,
 * no `vscode`; the host runs the flow (`ChatHost.openMcp`), the adapter shows the menu.
 */
import { oneLine, plural } from '../format';
import type { ApprovalDecision, McpServer } from '../protocol';

export type McpStatus = McpServer['status'];
export type McpSource = McpServer['source'];

/** Where a server is configured, in the words of the menu. */
export const SOURCE_LABEL: Record<McpSource, string> = {
  user: 'your settings',
  project: '.mcp.json',
  workspace: 'config.yaml',
  acp: 'the editor',
};

/** A codicon per status (the menu) and a glyph (the chat). */
export const STATUS_ICON: Record<McpStatus, { codicon: string; glyph: string }> = {
  ready: { codicon: 'pass', glyph: '✓' },
  starting: { codicon: 'circle-large-outline', glyph: '○' },
  needsApproval: { codicon: 'shield', glyph: '⚠' },
  failed: { codicon: 'error', glyph: '✗' },
  disabled: { codicon: 'circle-slash', glyph: '⊘' },
};

/** The error of a server denied by the user (`pseudoclaude/mcp/approve` can allow it again). */
const DENIED = 'not approved';

/** The status of a server in words: `ready · 3 tools`, `not started yet`, `failed: <why>`. */
export function statusWords(s: McpServer): string {
  switch (s.status) {
    case 'ready':
      return `ready · ${plural(s.tools.length, 'tool')}`;
    case 'starting':
      // Also "configured, not started yet": servers start when a run first needs their tools.
      return 'not started yet';
    case 'needsApproval':
      return 'waits for your approval';
    case 'failed':
      return `failed: ${oneLine(s.error ?? 'it did not start', 300)}`;
    case 'disabled':
      return s.error ? `disabled: ${oneLine(s.error, 200)}` : 'disabled';
  }
}

/** Whether `pseudoclaude/mcp/approve` applies: waiting for an approval, or denied earlier. */
export function canApprove(s: McpServer): boolean {
  return s.status === 'needsApproval' || (s.status === 'disabled' && s.error === DENIED);
}

/** Whether `pseudoclaude/mcp/restart` applies (a server that failed). */
export function canRestart(s: McpServer): boolean {
  return s.status === 'failed';
}

/** Whether a server needs the user: it failed, or waits for an approval. */
export function needsAttention(s: McpServer): boolean {
  return s.status === 'failed' || s.status === 'needsApproval';
}

/** The chat header's MCP button: its count, whether it warns, its tooltip. */
export interface McpBadge {
  /** The number of servers (none: `null`, the list is not known). */
  count: number | null;
  warn: 'failed' | 'needsApproval' | null;
  title: string;
}

export function mcpBadge(servers: readonly McpServer[] | null): McpBadge {
  if (servers === null) {
    return { count: null, warn: null, title: 'MCP servers' };
  }
  if (servers.length === 0) {
    return { count: 0, warn: null, title: 'MCP servers: none configured (click to see how to add one)' };
  }
  const failed = servers.filter((s) => s.status === 'failed').length;
  const waiting = servers.filter((s) => s.status === 'needsApproval').length;
  const ready = servers.filter((s) => s.status === 'ready').length;
  const bits = [`${ready} ready`];
  if (waiting > 0) {
    bits.push(`${waiting} ${waiting === 1 ? 'waits' : 'wait'} for your approval`);
  }
  if (failed > 0) {
    bits.push(`${failed} failed`);
  }
  return {
    count: servers.length,
    warn: failed > 0 ? 'failed' : waiting > 0 ? 'needsApproval' : null,
    title: `MCP servers: ${plural(servers.length, 'server')} (${bits.join(', ')})`,
  };
}

// ------------------------------------------------------------------------------------ the menu

/** What a row of the menu (or one of its buttons) does. */
export type McpAction =
  | { kind: 'toggle'; server: string }
  | { kind: 'approve'; server: string }
  | { kind: 'restart'; server: string }
  /** Open the `pseudoclaude.mcp.servers` setting. */
  | { kind: 'settings' }
  /** Open the folder's `.mcp.json` (a new one when there is none). */
  | { kind: 'mcpJson' }
  | { kind: 'none' };

/** The actions that close the menu (the host carries them out, then may open it again). */
export type McpExit = Extract<McpAction, { kind: 'approve' | 'settings' | 'mcpJson' }>;

export interface McpButton {
  /** A codicon. */
  icon: string;
  tooltip: string;
  action: McpAction;
}

export interface McpRow {
  /** Stable across updates (the adapter keeps the active row by it). */
  key: string;
  label: string;
  description?: string;
  detail?: string;
  /** A codicon; its theme colour (a `ThemeColor` id) when it has one. */
  icon?: string;
  color?: string;
  separator?: boolean;
  /** What Enter or a click on the row does. */
  action: McpAction;
  buttons: McpButton[];
}

const STATUS_COLOR: Partial<Record<McpStatus, string>> = {
  ready: 'testing.iconPassed',
  needsApproval: 'editorWarning.foreground',
  failed: 'errorForeground',
  disabled: 'disabledForeground',
};

/** How many tool names the collapsed server row lists. */
const TOOLS_SHOWN = 120;

/** What Enter on a server does: approve it, restart it, or show (hide) its tools. */
export function primaryAction(s: McpServer): McpAction {
  if (canApprove(s)) {
    return { kind: 'approve', server: s.name };
  }
  if (canRestart(s)) {
    return { kind: 'restart', server: s.name };
  }
  return s.tools.length > 0 ? { kind: 'toggle', server: s.name } : { kind: 'none' };
}

function serverRow(s: McpServer, open: boolean, note: string | undefined): McpRow {
  const words = note ?? statusWords(s);
  const buttons: McpButton[] = [];
  if (canApprove(s)) {
    buttons.push({ icon: 'shield', tooltip: 'Approve…', action: { kind: 'approve', server: s.name } });
  }
  if (canRestart(s)) {
    buttons.push({ icon: 'debug-restart', tooltip: 'Restart', action: { kind: 'restart', server: s.name } });
  }
  let detail: string;
  const action = primaryAction(s);
  if (note) {
    detail = 'This list follows it.';
  } else if (s.tools.length > 0) {
    detail = open
      ? 'Tools below · Enter hides them'
      : `${oneLine(s.tools.join(', '), TOOLS_SHOWN)} · Enter lists them`;
  } else if (action.kind === 'approve') {
    detail = 'Enter: Approve… (shows the command it would run)';
  } else if (action.kind === 'restart') {
    detail = 'Enter: Restart';
  } else if (s.status === 'starting') {
    detail = 'It starts when a run first needs its tools.';
  } else {
    detail = 'No tools.';
  }
  const color = note ? undefined : STATUS_COLOR[s.status];
  return {
    key: `server:${s.name}`,
    label: s.name,
    description: `${words} · ${SOURCE_LABEL[s.source] ?? s.source}`,
    detail,
    icon: note ? 'loading~spin' : STATUS_ICON[s.status].codicon,
    ...(color ? { color } : {}),
    action,
    buttons,
  };
}

/**
 * The menu's rows: each server (its status, source and tool names; its tools below it when
 * `expanded`; `notes` replace a status while something runs, e.g. `restarting…`), then how to
 * configure more. With no server: how to add one.
 */
export function menuRows(
  servers: readonly McpServer[],
  expanded: ReadonlySet<string> = new Set(),
  notes: ReadonlyMap<string, string> = new Map(),
): McpRow[] {
  const rows: McpRow[] = [];
  if (servers.length === 0) {
    rows.push({
      key: 'empty',
      label: 'No MCP servers in this folder',
      detail: "Add one to the project's .mcp.json, or to the pseudoclaude.mcp.servers setting.",
      icon: 'info',
      action: { kind: 'none' },
      buttons: [],
    });
  }
  for (const s of servers) {
    const open = expanded.has(s.name) && s.tools.length > 0;
    rows.push(serverRow(s, open, notes.get(s.name)));
    if (open) {
      for (const tool of s.tools) {
        rows.push({
          key: `tool:${s.name}:${tool}`,
          label: tool,
          description: `tool of ${s.name}`,
          icon: 'tools',
          action: { kind: 'toggle', server: s.name },
          buttons: [],
        });
      }
    }
  }
  rows.push(
    { key: 'sep:configure', label: 'Configure', separator: true, action: { kind: 'none' }, buttons: [] },
    {
      key: 'mcpJson',
      label: "Open the project's .mcp.json",
      description: 'project servers (each asks for your approval before it starts)',
      icon: 'json',
      action: { kind: 'mcpJson' },
      buttons: [],
    },
    {
      key: 'settings',
      label: 'Open the pseudoclaude.mcp.servers setting',
      description: 'your servers, for every folder',
      icon: 'gear',
      action: { kind: 'settings' },
      buttons: [],
    },
  );
  return rows;
}

/** Whether a server just allowed is still on its way (the answer may not have reached the server yet). */
export function stillLaunching(s: McpServer | undefined): boolean {
  return s?.status === 'starting' || s?.status === 'needsApproval';
}

/**
 * The menu's state while it is up: the servers (updated as the server reports changes), the
 * servers whose tools are unfolded, and the restarts in progress. `act` carries out what stays
 * in the menu (unfold, restart) and returns what closes it (approve, open a file).
 */
export class McpMenu {
  private list: McpServer[];
  private readonly expanded = new Set<string>();
  private readonly notes = new Map<string, string>();
  private readonly listeners = new Set<() => void>();
  /** Servers just allowed: `starting` means "starting now" for them, not "not started yet". */
  private readonly launching: Set<string>;

  /** The row to put the cursor on first (the server just approved). */
  readonly focus: string | undefined;

  constructor(
    readonly folderName: string,
    servers: readonly McpServer[],
    private readonly restart: (server: string) => Promise<McpServer | undefined>,
    options: { launching?: Iterable<string>; focus?: string } = {},
  ) {
    this.list = servers.slice();
    this.launching = new Set(options.launching ?? []);
    this.focus = options.focus === undefined ? undefined : `server:${options.focus}`;
    this.prune();
  }

  private prune(): void {
    for (const name of [...this.launching]) {
      if (!stillLaunching(this.list.find((s) => s.name === name))) {
        this.launching.delete(name);
      }
    }
  }

  get title(): string {
    return `MCP servers of ${this.folderName}`;
  }

  get placeholder(): string {
    return this.list.length === 0
      ? 'No MCP servers yet: open .mcp.json or the setting to add one'
      : 'Enter on a server: list its tools, approve it or restart it';
  }

  get servers(): readonly McpServer[] {
    return this.list;
  }

  rows(): McpRow[] {
    const notes = new Map(this.notes);
    for (const name of this.launching) {
      if (!notes.has(name)) {
        notes.set(name, 'starting…');
      }
    }
    return menuRows(this.list, this.expanded, notes);
  }

  /** The servers changed (the server's `mcpChanged`, an answer). */
  update(servers: readonly McpServer[]): void {
    this.list = servers.slice();
    this.prune();
    this.changed();
  }

  /** One server's new entry (an answer to approve or restart). */
  updateOne(server: McpServer): void {
    const i = this.list.findIndex((s) => s.name === server.name);
    this.list = i < 0 ? [...this.list, server] : this.list.map((s, n) => (n === i ? server : s));
    this.prune();
    this.changed();
  }

  onChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private changed(): void {
    for (const l of [...this.listeners]) {
      l();
    }
  }

  /** Carry out `action`; what closes the menu is returned for the host. */
  async act(action: McpAction): Promise<McpExit | undefined> {
    switch (action.kind) {
      case 'toggle':
        if (this.expanded.has(action.server)) {
          this.expanded.delete(action.server);
        } else {
          this.expanded.add(action.server);
        }
        this.changed();
        return undefined;
      case 'restart': {
        if (this.notes.has(action.server)) {
          return undefined; // already restarting
        }
        this.notes.set(action.server, 'restarting…');
        this.changed();
        try {
          const server = await this.restart(action.server);
          this.notes.delete(action.server);
          if (server) {
            this.updateOne(server);
          } else {
            this.changed();
          }
        } catch (e) {
          this.notes.delete(action.server);
          const i = this.list.findIndex((s) => s.name === action.server);
          const s = this.list[i];
          if (s) {
            this.updateOne({ ...s, status: 'failed', error: `the restart failed: ${e instanceof Error ? e.message : String(e)}` });
          }
        }
        return undefined;
      }
      case 'approve':
      case 'settings':
      case 'mcpJson':
        return action;
      case 'none':
        return undefined;
    }
  }
}

// ------------------------------------------------------------------------------------ approvals

/** The buttons of a project server's approval (the chat's card and the menu's question). */
export const SERVER_ANSWERS: readonly { title: string; decision: ApprovalDecision; hint: string }[] = [
  { title: 'Allow once', decision: 'allowOnce', hint: 'start it now; asked again next time' },
  {
    title: 'Allow for this project',
    decision: 'allowSession',
    hint: 'remembered on this machine, for this folder and this exact command',
  },
  { title: 'Deny', decision: 'deny', hint: 'it does not start' },
];

/** The decision of a button title of `SERVER_ANSWERS` (undefined: dismissed). */
export function serverDecision(title: string | undefined): ApprovalDecision | undefined {
  return SERVER_ANSWERS.find((a) => a.title === title)?.decision;
}

/** The question for a project server (the menu's Approve…): a message and its detail. */
export function serverQuestion(
  server: McpServer,
  command: string | undefined,
): { message: string; detail: string } {
  const where = server.source === 'project' ? "This project's .mcp.json" : `The ${SOURCE_LABEL[server.source]} entry`;
  const run = command
    ? /^[a-z][a-z0-9+.-]*:\/\//i.test(command)
      ? `It connects to ${command}`
      : `It runs: ${command}`
    : 'Its command is in the configuration: read it there before you allow it.';
  const denied = server.status === 'disabled' ? '\n\nYou denied it earlier.' : '';
  return {
    message: `${where} wants to start the MCP server ${server.name}`,
    detail:
      `${run}${denied}\n\n` +
      'It runs on this machine with your permissions. Allow for this project: remembered on this machine, ' +
      'for this folder and this exact command.',
  };
}

/** The name the model sees for a tool of a server: `mcp__<server>__<tool>` (the server's rule, unhashed). */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_');
}

function shellQuote(word: string): string {
  return word !== '' && /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'"'"'`)}'`;
}

/**
 * The command line (or URL) of server `name` in a `.mcp.json` text, as the server shows it
 * (arguments quoted); undefined when it is not there or the file does not parse.
 */
export function mcpJsonCommand(text: string | undefined, name: string): string | undefined {
  if (text === undefined) {
    return undefined;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  const servers = (data as { mcpServers?: unknown } | null)?.mcpServers;
  const entry = typeof servers === 'object' && servers !== null ? (servers as Record<string, unknown>)[name] : undefined;
  if (typeof entry !== 'object' || entry === null) {
    return undefined;
  }
  const e = entry as { command?: unknown; args?: unknown; url?: unknown };
  if (typeof e.url === 'string') {
    return e.url.replace(/[?#].*$/, '');
  }
  if (typeof e.command !== 'string') {
    return undefined;
  }
  const args = Array.isArray(e.args) ? e.args.map(String) : [];
  return [e.command, ...args].map(shellQuote).join(' ');
}

/** A new `.mcp.json` (the menu's "Open .mcp.json" when the folder has none). */
export const MCP_JSON_TEMPLATE = `{
  "mcpServers": {
    "example": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-everything"]
    }
  }
}
`;
