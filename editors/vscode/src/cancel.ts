/** A minimal cancellation source whose token satisfies both VS Code and vscode-jsonrpc. */
import type { CancelToken, Disposable } from './ports';

export class CancelSource {
  private cancelled = false;
  private readonly listeners = new Set<(e: unknown) => unknown>();
  readonly token: CancelToken;

  constructor() {
    const isCancelled = (): boolean => this.cancelled;
    const subscribe = (listener: (e: unknown) => unknown): Disposable => {
      if (this.cancelled) {
        listener(undefined);
        return { dispose: () => undefined };
      }
      this.listeners.add(listener);
      return { dispose: () => void this.listeners.delete(listener) };
    };
    this.token = {
      get isCancellationRequested(): boolean {
        return isCancelled();
      },
      onCancellationRequested: subscribe,
    };
  }

  cancel(): void {
    if (this.cancelled) {
      return;
    }
    this.cancelled = true;
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const listener of listeners) {
      listener(undefined);
    }
  }
}
