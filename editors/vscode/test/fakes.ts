/** Fakes of the ports, recording what the controller does. */
import type { MeterView } from '../src/meter';
import type { PickItem } from '../src/pickers';
import type { AgentClient, CancelToken, Folder, InputOptions, PickOptions, RequestOptions, Ui } from '../src/ports';
import type { EditorSnapshot } from '../src/editorContext';
import type { ParamsOf, RequestMethod, ResultOf } from '../src/protocol';
import type { TextSink } from '../src/transcript';

export interface Call {
  method: string;
  params: unknown;
  options: RequestOptions | undefined;
}

type Answer = unknown | ((params: unknown, options: RequestOptions | undefined) => unknown);

/** Answers requests from a table; a missing method rejects like an unknown method. */
export class FakeAgent implements AgentClient {
  readonly calls: Call[] = [];
  constructor(public answers: Partial<Record<RequestMethod, Answer>> = {}) {}

  async request<M extends RequestMethod>(
    method: M,
    params: ParamsOf<M>,
    options?: RequestOptions,
  ): Promise<ResultOf<M>> {
    this.calls.push({ method, params, options });
    if (!(method in this.answers)) {
      throw Object.assign(new Error(`Unhandled method ${method}`), { code: -32601 });
    }
    const answer = this.answers[method];
    const value = typeof answer === 'function' ? await (answer as (p: unknown, o?: RequestOptions) => unknown)(params, options) : answer;
    return value as ResultOf<M>;
  }

  methods(): string[] {
    return this.calls.map((c) => c.method);
  }
}

/** A request error as vscode-jsonrpc's ResponseError looks (code + message). */
export function rpcError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

export class FakeUi implements Ui {
  inputs: (string | undefined)[] = [];
  /** Each pick answers with the item whose label includes this text (undefined = Escape). */
  picks: (string | undefined)[] = [];
  confirms: boolean[] = [];
  readonly confirmations: { message: string; action: string; detail: string | undefined }[] = [];
  /** What info/warn/error answer (an action title). */
  choice: string | undefined;
  readonly messages: { level: 'info' | 'warn' | 'error'; text: string; actions: string[] }[] = [];
  readonly pickedFrom: { title: string; items: PickItem<unknown>[] }[] = [];
  readonly inputOptions: InputOptions[] = [];
  readonly opened: string[] = [];
  readonly texts: { content: string; language: string; title?: string }[] = [];
  readonly progressTitles: string[] = [];
  readonly progressReports: string[] = [];
  readonly logs: string[] = [];
  status: MeterView | undefined;
  transcriptShown = 0;
  openFails: Error | undefined;
  /** Cancels the progress token when set (as the notification's Cancel button would). */
  cancelProgress: ((token: { cancel(): void }) => void) | undefined;
  forgetOnPick: boolean[] = [];

  constructor(
    public folderList: Folder[] = [{ uri: 'file:///work/app', name: 'app' }],
    public active: Folder | undefined = undefined,
  ) {}

  folders(): Folder[] {
    return this.folderList;
  }
  activeFolder(): Folder | undefined {
    return this.active;
  }
  async input(options: InputOptions): Promise<string | undefined> {
    this.inputOptions.push(options);
    return this.inputs.shift();
  }
  async pick<T>(items: PickItem<T>[], options: PickOptions<T>): Promise<T | undefined> {
    this.pickedFrom.push({ title: options.title, items: items as PickItem<unknown>[] });
    const want = this.picks.shift();
    if (want === undefined) {
      return undefined;
    }
    const item = items.find((i) => !i.separator && i.label.includes(want));
    if (!item) {
      throw new Error(`no item with ${want} in ${items.map((i) => i.label).join(' | ')}`);
    }
    if (this.forgetOnPick.shift()) {
      await options.onForget?.(item.value);
      return undefined;
    }
    return item.value;
  }
  private say(level: 'info' | 'warn' | 'error', text: string, actions: string[]): Promise<string | undefined> {
    this.messages.push({ level, text, actions });
    return Promise.resolve(this.choice);
  }
  info(message: string, ...actions: string[]): Promise<string | undefined> {
    return this.say('info', message, actions);
  }
  warn(message: string, ...actions: string[]): Promise<string | undefined> {
    return this.say('warn', message, actions);
  }
  error(message: string, ...actions: string[]): Promise<string | undefined> {
    return this.say('error', message, actions);
  }
  async confirm(message: string, action: string, detail?: string): Promise<boolean> {
    this.confirmations.push({ message, action, detail });
    this.messages.push({ level: 'warn', text: message, actions: [] });
    return this.confirms.shift() ?? false;
  }
  async progress<T>(title: string, task: (report: (m: string) => void, token: CancelToken) => Promise<T>): Promise<T> {
    this.progressTitles.push(title);
    let cancelled = false;
    const listeners: ((e: unknown) => unknown)[] = [];
    const token: CancelToken = {
      get isCancellationRequested() {
        return cancelled;
      },
      onCancellationRequested(l) {
        listeners.push(l);
        return { dispose: () => undefined };
      },
    };
    const promise = task((m) => this.progressReports.push(m), token);
    this.cancelProgress?.({
      cancel: () => {
        cancelled = true;
        for (const l of listeners) l(undefined);
      },
    });
    return promise;
  }
  async openUri(uri: string): Promise<void> {
    if (this.openFails) {
      throw this.openFails;
    }
    this.opened.push(uri);
  }
  async openText(content: string, language: string, title?: string): Promise<void> {
    this.texts.push({ content, language, ...(title !== undefined ? { title } : {}) });
  }
  showTranscript(): void {
    this.transcriptShown++;
  }
  setStatus(view: MeterView): void {
    this.status = view;
  }
  log(message: string): void {
    this.logs.push(message);
  }
  errors(): string[] {
    return this.messages.filter((m) => m.level === 'error').map((m) => m.text);
  }
  infos(): string[] {
    return this.messages.filter((m) => m.level === 'info').map((m) => m.text);
  }
}

export class StringSink implements TextSink {
  text = '';
  append(text: string): void {
    this.text += text;
  }
}

/** Let queued promise callbacks run. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A fake editor state for `EditorTracker` / `ChatHost.editorChanged`: the active document (a
 * `file:` URI) with its text and its selection (`[startLine, startChar, endLine, endChar]`,
 * 0-based; none: the caret at the start), and the other open documents.
 */
export function fakeEditor(
  active: { uri: string; text?: string; selection?: [number, number, number, number] } | undefined,
  open: string[] = [],
): EditorSnapshot {
  if (!active) {
    return { open };
  }
  const [sl, sc, el, ec] = active.selection ?? [0, 0, 0, 0];
  const lines = (active.text ?? '').split('\n');
  const offset = (line: number, ch: number): number =>
    lines.slice(0, line).reduce((n, l) => n + l.length + 1, 0) + ch;
  return {
    active: {
      uri: active.uri,
      selection: { start: { line: sl, character: sc }, end: { line: el, character: ec } },
      selectedText: () => (active.text ?? '').slice(offset(sl, sc), offset(el, ec)),
    },
    open: [active.uri, ...open],
  };
}
