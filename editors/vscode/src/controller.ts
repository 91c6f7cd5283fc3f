/**
 * What each PseudoClaude command does, against the narrow `AgentClient` and `Ui` ports.
 * No `vscode` import: the whole flow is unit-tested with fakes.
 */
import { CancelSource } from './cancel';
import { COMMANDS } from './commands';
import { COMPACT_ACTION, previewPlan, said } from './compaction';
import { contextChip } from './editorContext';
import { describeFailure, errorMessage, isCancelled } from './errors';
import { formatCount, oneLine, plural } from './format';
import { meterView, MeterStore } from './meter';
import { permissionsReport } from './permissions';
import { levelItems, memoryItems, sessionItems, typeItems } from './pickers';
import type { MemoryPick } from './pickers';
import type { AgentClient, Folder, Ui } from './ports';
import {
  Requests,
  type AgentEvent,
  type ContextResult,
  type ContextUsageParams,
  type EditorContext,
  type MemoryChangedParams,
  type MemoryLevel,
  type MemoryStore,
  type ParamsOf,
  type RequestMethod,
  type ResultOf,
  type RunResult,
  type WorkDoneProgress,
} from './protocol';
import type { Transcript } from './transcript';
import { normalizeUri, sameUri, uriToPath } from './uri';

/** How many items of a resumed session's transcript the output channel replays (the newest). */
export const HISTORY_ITEMS = 20;

/** A request's params without `workspace` (the folder's URI goes there). */
export type ParamsBody<M extends RequestMethod> = Omit<ParamsOf<M>, 'workspace'>;

/**
 * What a command asks of the server, for `Controller.folderRequest`: `params` builds the params for
 * the folder (prompting as needed; `undefined` stops quietly, as when a prompt is dismissed) and is
 * optional only for requests that need nothing but the workspace; `onResult` uses the result.
 */
export type FolderRequest<M extends RequestMethod, T> = {
  /** The command, as a failure names it: `PseudoClaude: <what> failed: <message>`. */
  what: string;
  method: M;
  onResult: (result: ResultOf<M>, folder: Folder, params: ParamsOf<M>) => T | Promise<T>;
  /** The folder, when the command already has one (else it is picked). */
  folder?: Folder;
  /** Run the request in a cancellable progress notification with this title. */
  progress?: string;
  /** Refresh the context meter once the request was sent, whatever its outcome. */
  refresh?: boolean;
} & ({} extends ParamsBody<M> ? { params?: ParamsBuilder<M> } : { params: ParamsBuilder<M> });

type ParamsBuilder<M extends RequestMethod> = (
  folder: Folder,
) => ParamsBody<M> | undefined | Promise<ParamsBody<M> | undefined>;

/** Who else shows what the commands do (the chat view): told of runs and session changes. */
export interface ControllerListener {
  runStarted?(folder: Folder, prompt: string, context?: EditorContext): void;
  runFinished?(folder: Folder, result: RunResult | undefined, canceled: boolean): void;
  /** Resumed, new, or a compaction undone: the folder's transcript changed. */
  sessionChanged?(folder: Folder): void;
}

interface ActiveRun {
  folder: Folder;
  source: CancelSource;
  report?: (message: string) => void;
}

export class Controller {
  readonly meter = new MeterStore();
  private readonly runs = new Map<string, ActiveRun>();
  private lastFolder: Folder | undefined;
  listener: ControllerListener = {};
  /** What a prompt sent now in a folder carries (the editor's active file and selection, as the chat's chip shows them). */
  editorContext: (folder: Folder) => EditorContext | undefined = () => undefined;
  /** The session the chat shows in a folder (Show Permissions is about it), if any. */
  chatSession: (folder: Folder) => string | undefined = () => undefined;

  constructor(
    private readonly agent: AgentClient,
    private readonly ui: Ui,
    private readonly transcript: Transcript,
    private readonly now: () => Date = () => new Date(),
  ) {}

  // ---------------------------------------------------------------- folders and status

  /** The folder a command works on: the active editor's, the only one, or a pick. */
  async pickFolder(): Promise<Folder | undefined> {
    const folders = this.ui.folders();
    if (folders.length === 0) {
      await this.ui.error('PseudoClaude: open a folder first: the agent works inside a workspace folder.');
      return undefined;
    }
    const folder =
      this.ui.activeFolder() ??
      (folders.length === 1
        ? folders[0]
        : await this.ui.pick(
            folders.map((f) => ({ label: f.name, description: uriToPath(f.uri) ?? f.uri, value: f })),
            { title: 'PseudoClaude: which workspace folder?' },
          ));
    if (folder) {
      this.lastFolder = folder;
      this.refreshStatus();
    }
    return folder;
  }

  /** The folder whose meter the status bar shows. */
  private statusFolder(): Folder | undefined {
    const folders = this.ui.folders();
    return this.ui.activeFolder() ?? this.lastFolder ?? (folders.length === 1 ? folders[0] : undefined);
  }

  refreshStatus(): void {
    const folder = this.statusFolder();
    const state = folder ? this.meter.get(folder.uri) : undefined;
    const running = folder ? this.runs.has(normalizeUri(folder.uri)) : false;
    const named = this.ui.folders().length > 1 ? folder?.name : undefined;
    const empty = { sessionId: null, estimatedTokens: 0, contextWindow: 0, autoCompactThreshold: 0 };
    this.ui.setStatus(meterView(state || running ? { ...(state ?? empty), running } : undefined, named));
  }

  /** Ask the server for the context state of a folder (quietly: failures only go to the log). */
  async refreshContext(folder: Folder | undefined = this.statusFolder()): Promise<void> {
    if (!folder) {
      this.refreshStatus();
      return;
    }
    try {
      const c = await this.agent.request(Requests.context, { workspace: folder.uri });
      this.meter.context(folder.uri, c);
    } catch (e) {
      this.ui.log(`context of ${folder.name}: ${errorMessage(e)}`);
    }
    this.refreshStatus();
  }

  /**
   * Pick the folder, build the params, call the request and hand its result to `onResult` (whose
   * value it answers). A failure of any step, the request's included, is shown as
   * `PseudoClaude: <what> failed: <message>` and answers `undefined`; so do a cancelled request
   * (silently), no folder and a dismissed prompt.
   */
  async folderRequest<M extends RequestMethod, T>(req: FolderRequest<M, T>): Promise<T | undefined> {
    const folder = req.folder ?? (await this.pickFolder());
    if (!folder) {
      return undefined;
    }
    const build = (req as { params?: ParamsBuilder<M> }).params;
    let sent = false;
    try {
      const body = build ? await build(folder) : {};
      if (body === undefined) {
        return undefined;
      }
      const params = { ...body, workspace: folder.uri } as ParamsOf<M>;
      sent = true;
      const result = req.progress
        ? await this.ui.progress(req.progress, (report, token) =>
            this.agent.request(req.method, params, { token, onProgress: progressReporter(report) }),
          )
        : await this.agent.request(req.method, params);
      return await req.onResult(result, folder, params);
    } catch (e) {
      if (!isCancelled(e)) {
        void this.ui.error(describeFailure(req.what, e));
      }
      return undefined;
    } finally {
      if (req.refresh && sent) {
        void this.refreshContext(folder);
      }
    }
  }

  // ---------------------------------------------------------------- notifications

  onEvent(e: AgentEvent): void {
    this.transcript.event(e);
    const run = this.findRun(e.workspace);
    if (run?.report && e.kind === 'toolCall') {
      run.report(`${e.name}…`);
    }
    if (e.kind === 'error' || e.kind === 'compact') {
      void this.refreshContext(this.folderOf(e.workspace));
    }
  }

  onContextUsage(u: ContextUsageParams): void {
    this.meter.usage(u);
    this.refreshStatus();
  }

  onMemoryChanged(m: MemoryChangedParams): void {
    this.ui.log(`${m.level} memory changed (${m.source}) in ${m.workspace}`);
  }

  private findRun(workspace: string): ActiveRun | undefined {
    return this.runs.get(normalizeUri(workspace));
  }

  private folderOf(workspace: string): Folder | undefined {
    return this.ui.folders().find((f) => sameUri(f.uri, workspace));
  }

  // ---------------------------------------------------------------- commands

  async ask(promptArg?: string): Promise<RunResult | undefined> {
    const folder = await this.pickFolder();
    if (!folder) {
      return undefined;
    }
    const key = normalizeUri(folder.uri);
    if (this.runs.has(key)) {
      await this.ui.error(
        `PseudoClaude: a run is already in progress in ${folder.name}: wait for it or use ` +
          `"${COMMANDS.cancelRun.title}".`,
      );
      return undefined;
    }
    const prompt =
      typeof promptArg === 'string' && promptArg.trim() !== ''
        ? promptArg
        : await this.ui.input({
            title: COMMANDS.ask.title,
            prompt: `Ask the agent working in ${folder.name}`,
            placeHolder: 'What should PseudoClaude do?',
          });
    if (prompt === undefined || prompt.trim() === '') {
      return undefined;
    }
    const context = this.editorContext(folder);
    const run: ActiveRun = { folder, source: new CancelSource() };
    this.runs.set(key, run);
    this.transcript.beginRun(folder.uri, prompt, context ? contextChip(context)?.label : undefined);
    this.listener.runStarted?.(folder, prompt, context);
    this.ui.showTranscript();
    this.refreshStatus();
    try {
      const result = await this.ui.progress(`PseudoClaude: ${oneLine(prompt, 50)}`, (report, token) => {
        run.report = report;
        token.onCancellationRequested(() => run.source.cancel());
        return this.agent.request(
          Requests.run,
          { prompt, workspace: folder.uri, ...(context ? { context } : {}) },
          { token: run.source.token, onProgress: progressReporter(report) },
        );
      });
      this.transcript.endRun(result);
      this.listener.runFinished?.(folder, result, false);
      await this.reportStop(result);
      return result;
    } catch (e) {
      const canceled = isCancelled(e) || run.source.token.isCancellationRequested;
      this.listener.runFinished?.(folder, undefined, canceled);
      if (canceled) {
        this.transcript.abortRun('canceled');
      } else {
        this.transcript.abortRun(`failed: ${errorMessage(e)}`);
        void this.ui.error(describeFailure('Ask', e));
      }
      return undefined;
    } finally {
      this.runs.delete(key);
      void this.refreshContext(folder);
    }
  }

  private async reportStop(result: RunResult): Promise<void> {
    if (result.error) {
      void this.ui.error(`PseudoClaude: the run stopped with an error: ${oneLine(result.error, 400)}`);
    } else if (result.stopReason === 'max_iterations') {
      void this.ui.warn(
        `PseudoClaude: stopped after ${plural(result.iterations, 'iteration')} (the maxIterations ` +
          'limit). Ask again to continue.',
      );
    } else if (result.stopReason === 'unknown_tool_limit') {
      void this.ui.warn('PseudoClaude: stopped: the model called unknown tools twice in a row.');
    }
  }

  async cancelRun(): Promise<void> {
    if (this.runs.size === 0) {
      await this.ui.info('PseudoClaude: no run in progress.');
      return;
    }
    const active = this.ui.activeFolder();
    const run = active ? this.findRun(active.uri) : undefined;
    const targets = run ? [run] : [...this.runs.values()];
    for (const r of targets) {
      r.source.cancel();
    }
  }

  /**
   * Compact Context: optional instructions, then the preview (`pseudoclaude/compact/preview`: what
   * would be summarized and kept, the estimate after, what would be offloaded), a modal asking
   * before anything changes, the compaction, and its report with the summary's fact check.
   */
  async compact(): Promise<void> {
    await this.folderRequest({
      what: 'Compact Context',
      method: Requests.compactPreview,
      params: async () => {
        const instructions = await this.ui.input({
          title: COMMANDS.compact.title,
          prompt: 'Optional instructions for the summary (Enter for none)',
          placeHolder: 'e.g. focus on the parser changes',
          allowEmpty: true,
        });
        if (instructions === undefined) {
          return undefined;
        }
        return instructions.trim() === '' ? {} : { instructions: instructions.trim() };
      },
      onResult: async (preview, folder, params) => {
        const plan = previewPlan(preview, folder.name);
        if (plan.kind === 'nothing') {
          void this.ui.info(plan.message);
          return;
        }
        if (!(await this.ui.confirm(plan.message, COMPACT_ACTION, plan.detail))) {
          return;
        }
        const instructions = params.instructions;
        await this.folderRequest({
          what: 'Compact Context',
          method: Requests.compact,
          folder,
          progress: 'PseudoClaude: compacting the context',
          refresh: true,
          params: () => (instructions === undefined ? {} : { instructions }),
          onResult: (r) => {
            void this.ui.info(said(r.message));
          },
        });
      },
    });
  }

  /** Undo Compaction: the messages the last compaction summarized come back (`compact/undo`). */
  async undoCompaction(): Promise<void> {
    await this.folderRequest({
      what: 'Undo Compaction',
      method: Requests.compactUndo,
      progress: 'PseudoClaude: undoing the last compaction',
      refresh: true,
      onResult: (r, folder) => {
        if (r.restored) {
          this.listener.sessionChanged?.(folder);
          this.transcript.note(r.message);
          void this.ui.info(said(r.message));
        } else {
          void this.ui.warn(said(r.message));
        }
      },
    });
  }

  async showMemory(): Promise<void> {
    await this.folderRequest({
      what: 'Show Memory',
      method: Requests.memoryShow,
      onResult: async (shown, folder) => {
        const picked = await this.ui.pick<MemoryPick>(memoryItems(shown), {
          title: COMMANDS.showMemory.title,
          placeHolder: 'Open the index, a MEMORY.md or a note (the trash button forgets a note)',
          onForget: (value) => this.forget(folder, value),
        });
        if (picked?.kind === 'index') {
          await this.ui.openText(shown.index.trim() === '' ? '(the memory index is empty)\n' : shown.index, 'markdown');
        } else if (picked) {
          await this.open(picked.uri);
        }
      },
    });
  }

  private async forget(folder: Folder, value: MemoryPick): Promise<boolean> {
    if (value.kind !== 'file' || !value.filename) {
      return false;
    }
    const { level, filename } = value;
    const forgotten = await this.folderRequest({
      what: 'Forget',
      method: Requests.memoryForget,
      folder,
      params: async () =>
        (await this.ui.confirm(`Forget ${filename} (${level} memory)?`, 'Forget')) ? { level, filename } : undefined,
      onResult: (r) => {
        if (!r.removed) {
          void this.ui.warn(`PseudoClaude: ${filename} was already gone.`);
        }
        return true;
      },
    });
    return forgotten ?? false;
  }

  private async open(uri: string): Promise<void> {
    try {
      await this.ui.openUri(uri);
    } catch (e) {
      void this.ui.error(`PseudoClaude: cannot open ${uriToPath(uri) ?? uri}: ${errorMessage(e)}`);
    }
  }

  async remember(textArg?: string): Promise<void> {
    await this.folderRequest({
      what: 'Remember',
      method: Requests.memoryRemember,
      params: async () => {
        const text =
          typeof textArg === 'string' && textArg.trim() !== ''
            ? textArg
            : await this.ui.input({
                title: COMMANDS.remember.title,
                prompt: 'What should PseudoClaude remember?',
                placeHolder: 'e.g. run the tests with make test',
              });
        if (text === undefined || text.trim() === '') {
          return undefined;
        }
        const level = await this.ui.pick(levelItems(), {
          title: COMMANDS.remember.title,
          placeHolder: 'Remember it for this project or for all your projects?',
        });
        if (!level) {
          return undefined;
        }
        const type = await this.ui.pick(typeItems(), {
          title: COMMANDS.remember.title,
          placeHolder: 'What kind of memory is it?',
        });
        return type ? { text: text.trim(), level, type } : undefined;
      },
      onResult: async (r, _folder, params) => {
        const where = `${r.filename} (${params.level} memory)`;
        const choice = await this.ui.info(`PseudoClaude: remembered in ${where}.`, 'Open');
        if (choice === 'Open') {
          await this.open(r.uri);
        }
      },
    });
  }

  async openMemoryIndex(): Promise<void> {
    await this.folderRequest({
      what: 'Open MEMORY.md',
      method: Requests.memoryShow,
      onResult: (shown) => this.openIndex(shown.stores),
    });
  }

  /** Open the `MEMORY.md` of a store (asking which when there are two). */
  private async openIndex(stores: MemoryStore[]): Promise<void> {
    let level: MemoryLevel | undefined = stores.length === 1 ? stores[0]?.level : undefined;
    if (stores.length > 1) {
      const present = new Set(stores.map((s) => s.level));
      level = await this.ui.pick(
        levelItems().filter((i) => present.has(i.value)),
        { title: COMMANDS.openMemoryIndex.title, placeHolder: 'Which MEMORY.md?' },
      );
    }
    const store = stores.find((s) => s.level === level);
    if (!store) {
      if (stores.length === 0) {
        void this.ui.error('PseudoClaude: memory is disabled for this workspace (memory.enabled).');
      }
      return;
    }
    try {
      await this.ui.openUri(store.indexUri);
    } catch (e) {
      const where = uriToPath(store.indexUri) ?? store.indexUri;
      const hint =
        store.notes.length === 0
          ? ` (no ${store.level} memory yet: "${COMMANDS.remember.title}" creates it)`
          : '';
      void this.ui.error(`PseudoClaude: cannot open ${where}${hint}: ${errorMessage(e)}`);
    }
  }

  /** Resume Session: `sessionArg` (else a pick) in `folder` (else the usual folder). */
  async resumeSession(sessionArg?: string, folder?: Folder): Promise<void> {
    await this.folderRequest({
      what: 'Resume Session',
      method: Requests.sessionsResume,
      refresh: true,
      ...(folder ? { folder } : {}),
      params: async (folder) => {
        const sessionId =
          typeof sessionArg === 'string' && sessionArg !== '' ? sessionArg : await this.pickSession(folder);
        return sessionId === undefined ? undefined : { sessionId };
      },
      onResult: async (r, folder) => {
        this.transcript.note(`resumed session ${r.sessionId} (${plural(r.messageCount, 'message')})`);
        this.listener.sessionChanged?.(folder);
        await this.replayHistory(folder, r.sessionId);
        this.ui.showTranscript();
        if (r.badLines > 0 || r.repaired > 0) {
          void this.ui.warn(
            `PseudoClaude: resumed ${r.sessionId}: ${plural(r.badLines, 'unreadable line')} skipped, ` +
              `${plural(r.repaired, 'repair')} made to the history.`,
          );
        } else {
          void this.ui.info(`PseudoClaude: resumed session ${r.sessionId} (${plural(r.messageCount, 'message')}).`);
        }
      },
    });
  }

  /** A session of the folder picked from its list (none: undefined); a failed list throws. */
  private async pickSession(folder: Folder): Promise<string | undefined> {
    const list = await this.agent.request(Requests.sessionsList, { workspace: folder.uri });
    if (list.sessions.length === 0) {
      void this.ui.info(`PseudoClaude: no sessions yet in ${folder.name}.`);
      return undefined;
    }
    const picked = await this.ui.pick(sessionItems(list.sessions, this.now()), {
      title: COMMANDS.resumeSession.title,
      placeHolder: 'Pick a session to continue (newest first)',
    });
    return picked?.id;
  }

  private async replayHistory(folder: Folder, sessionId: string): Promise<void> {
    try {
      const params = { workspace: folder.uri, sessionId };
      const head = await this.agent.request(Requests.sessionsMessages, { ...params, offset: 0, limit: 1 });
      const offset = Math.max(0, head.total - HISTORY_ITEMS);
      const page =
        head.total <= 1 ? head : await this.agent.request(Requests.sessionsMessages, { ...params, offset, limit: HISTORY_ITEMS });
      this.transcript.history(page.items, offset);
    } catch (e) {
      this.ui.log(`messages of ${sessionId}: ${errorMessage(e)}`);
    }
  }

  async newSession(): Promise<void> {
    await this.folderRequest({
      what: 'New Session',
      method: Requests.sessionsNew,
      refresh: true,
      onResult: (r, folder) => {
        this.transcript.note(`new session ${r.sessionId} in ${folder.name}`);
        this.listener.sessionChanged?.(folder);
        void this.ui.info(`PseudoClaude: new session ${r.sessionId}.`);
      },
    });
  }

  /**
   * Show Permissions: the mode (of the chat's session), the modes offered, the sandbox, the rules
   * by decision with their source, the problems and the permission files waiting for an approval,
   * as a Markdown document.
   */
  async showPermissions(): Promise<void> {
    await this.folderRequest({
      what: 'Show Permissions',
      method: Requests.permissions,
      params: (folder) => {
        const sessionId = this.chatSession(folder);
        return sessionId ? { sessionId } : {};
      },
      onResult: (r, folder, params) =>
        this.ui.openText(permissionsReport(r, folder.name, params.sessionId), 'markdown', `Permissions of ${folder.name}`),
    });
  }

  async showContext(): Promise<void> {
    await this.folderRequest({
      what: 'Show Context',
      method: Requests.context,
      onResult: (c, folder) => this.describeContext(c, folder),
    });
  }

  /** The context state in a message offering Compact Context and Show Transcript. */
  private async describeContext(c: ContextResult, folder: Folder): Promise<void> {
    this.meter.context(folder.uri, c);
    this.refreshStatus();
    const parts = [
      `PseudoClaude (${folder.name}): ${formatCount(c.estimatedTokens)} of ${formatCount(c.contextWindow)} tokens`,
      plural(c.messageCount, 'message'),
      c.sessionId ? `session ${c.sessionId}` : 'no session yet',
      `auto-compact at ${formatCount(c.autoCompactThreshold)}`,
    ];
    const tripped = c.autoCompactTripped
      ? ` Auto-compact stopped after ${plural(c.autoCompactFailures, 'failure')}: compact by hand.`
      : '';
    const show = tripped ? this.ui.warn.bind(this.ui) : this.ui.info.bind(this.ui);
    const choice = await show(`${parts.join(' · ')}.${tripped}`, 'Compact Context', 'Show Transcript');
    if (choice === 'Compact Context') {
      await this.compact();
    } else if (choice === 'Show Transcript') {
      this.ui.showTranscript();
    }
  }
}

function progressReporter(report: (message: string) => void): (value: WorkDoneProgress) => void {
  return (value) => {
    if (value.message) {
      report(value.message);
    }
  };
}
