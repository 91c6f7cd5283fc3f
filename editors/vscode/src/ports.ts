/**
 * The narrow interfaces the command logic needs from VS Code and from the language client.
 * The adapters in `src/vscode/` implement them; tests implement them with fakes.
 */
import type { MeterView } from './meter';
import type { PickItem } from './pickers';
import type { ParamsOf, RequestMethod, ResultOf, WorkDoneProgress } from './protocol';

export interface Disposable {
  dispose(): void;
}

/** Structurally a `vscode.CancellationToken` and a vscode-jsonrpc `CancellationToken`. */
export interface CancelToken {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: (e: unknown) => unknown): Disposable;
}

export interface RequestOptions {
  /** Cancelling sends `$/cancelRequest`. */
  token?: CancelToken;
  /** Work-done progress of this request (a client-created `workDoneToken`). */
  onProgress?: (value: WorkDoneProgress) => void;
}

export interface AgentClient {
  request<M extends RequestMethod>(
    method: M,
    params: ParamsOf<M>,
    options?: RequestOptions,
  ): Promise<ResultOf<M>>;
}

export interface Folder {
  uri: string;
  name: string;
}

export interface InputOptions {
  title: string;
  prompt: string;
  placeHolder?: string;
  /** Accept an empty answer (Escape still answers undefined). */
  allowEmpty?: boolean;
}

export interface PickOptions<T> {
  title: string;
  placeHolder?: string;
  /** Called for the "forget" button of a `forgettable` item; true removes the item. */
  onForget?: (value: T) => Promise<boolean>;
}

export interface Ui {
  folders(): Folder[];
  /** The folder of the active editor, if any. */
  activeFolder(): Folder | undefined;
  input(options: InputOptions): Promise<string | undefined>;
  pick<T>(items: PickItem<T>[], options: PickOptions<T>): Promise<T | undefined>;
  info(message: string, ...actions: string[]): Promise<string | undefined>;
  warn(message: string, ...actions: string[]): Promise<string | undefined>;
  error(message: string, ...actions: string[]): Promise<string | undefined>;
  /** A modal question with `action` and Cancel (and `detail` under it); true when `action` was chosen. */
  confirm(message: string, action: string, detail?: string): Promise<boolean>;
  /** A cancellable progress notification around `task`. */
  progress<T>(
    title: string,
    task: (report: (message: string) => void, token: CancelToken) => Promise<T>,
  ): Promise<T>;
  /** Open a file (by URI) in an editor; rejects with a readable error when it cannot. */
  openUri(uri: string): Promise<void>;
  /**
   * Open a document with this content: untitled; with a `title`, read-only (a report, opened
   * again with new content under the same title; closing it asks nothing).
   */
  openText(content: string, language: string, title?: string): Promise<void>;
  showTranscript(): void;
  setStatus(view: MeterView): void;
  /** A line in the extension's log channel. */
  log(message: string): void;
}
