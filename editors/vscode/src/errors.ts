/** Turning request failures into one clear line for the user. */
import { ErrorCodes } from './protocol';

interface CodedError {
  code: number;
  message: string;
}

function isCoded(e: unknown): e is CodedError {
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof (e as { code?: unknown }).code === 'number' &&
    typeof (e as { message?: unknown }).message === 'string'
  );
}

/** A run or compact cancelled by the user (JSON-RPC RequestCancelled). */
export function isCancelled(e: unknown): boolean {
  return isCoded(e) && e.code === ErrorCodes.RequestCancelled;
}

/**
 * A memory proposal the server refused because its note changed since it was proposed
 * (`ProposalStale`: RequestFailed, "... changed since it was proposed ...").
 */
export function isStaleProposal(e: unknown): boolean {
  return isCoded(e) && e.code === ErrorCodes.RequestFailed && /changed since/i.test(e.message);
}

/** The message of a failed request: the server's own text, without stack traces. */
export function errorMessage(e: unknown): string {
  if (isCoded(e) || e instanceof Error) {
    const first = e.message.split('\n').find((l) => l.trim() !== '') ?? '';
    return first.trim() || `error ${isCoded(e) ? e.code : e.name}`;
  }
  if (typeof e === 'string' && e.trim() !== '') {
    return e.trim();
  }
  return 'unknown error';
}

/** `PseudoClaude: <what> failed: <message>`. */
export function describeFailure(what: string, e: unknown): string {
  return `PseudoClaude: ${what} failed: ${errorMessage(e)}`;
}

/**
 * The JSON-RPC code of `SessionBusy`: another writer (another window, a terminal, another request)
 * holds the session.
 */
export const SESSION_BUSY: number = ErrorCodes.SessionBusy;

/** What a `SessionBusy` refusal says: the session, the process writing it (`null`: not known), the server's line. */
export interface BusyRefusal {
  sessionId: string;
  pid: number | null;
  message: string;
}

/** The refusal when `e` is a `SessionBusy` error (its `data`: `{sessionId, pid}`), else undefined. */
export function sessionBusy(e: unknown): BusyRefusal | undefined {
  if (!isCoded(e) || e.code !== SESSION_BUSY) {
    return undefined;
  }
  const data = (e as { data?: unknown }).data;
  const d = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
  const fromText = /session (\S+) is busy/.exec(e.message)?.[1];
  const sessionId = typeof d.sessionId === 'string' && d.sessionId !== '' ? d.sessionId : (fromText ?? '');
  const pid = typeof d.pid === 'number' && Number.isSafeInteger(d.pid) ? d.pid : null;
  return { sessionId, pid, message: errorMessage(e) };
}
