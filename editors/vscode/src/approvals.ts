/**
 * Approval prompts (SPEC §8): the server asks with `window/showMessageRequest` (type Warning,
 * actions `Allow once`, `Allow for this session`, `Deny`). The extension shows them as modal
 * dialogs; anything else keeps the usual non-modal message.
 */
import { ApprovalActions } from './protocol';

export interface MessageAction {
  title: string;
}

export interface ShowMessageRequest {
  type: number;
  message: string;
  actions?: MessageAction[] | null;
}

/** LSP `MessageType.Warning`. */
const WARNING = 2;

export function isApproval(p: ShowMessageRequest): boolean {
  const titles = new Set((p.actions ?? []).map((a) => a.title));
  return p.type === WARNING && titles.has(ApprovalActions.once) && titles.has(ApprovalActions.deny);
}

export interface ModalPrompt {
  message: string;
  detail: string | undefined;
  /** Buttons in order; `Deny` is the dialog's close affordance (Esc answers Deny). */
  buttons: { title: string; isCloseAffordance: boolean }[];
}

/** Title line as the message, the rest (the tool's arguments) as the detail. */
export function approvalPrompt(p: ShowMessageRequest): ModalPrompt {
  const text = p.message.trim();
  const cut = text.indexOf('\n');
  const message = cut < 0 ? text : text.slice(0, cut).trim();
  const detail = cut < 0 ? undefined : text.slice(cut + 1).trim() || undefined;
  return {
    message: /^pseudoclaude\b/i.test(message) ? message : `PseudoClaude: ${message}`,
    detail,
    buttons: (p.actions ?? []).map((a) => ({
      title: a.title,
      isCloseAffordance: a.title === ApprovalActions.deny,
    })),
  };
}

/** The LSP answer for a picked button: the action object, or null (a denial) when dismissed. */
export function approvalAnswer(p: ShowMessageRequest, picked: string | undefined): MessageAction | null {
  if (picked === undefined) {
    return null;
  }
  return (p.actions ?? []).find((a) => a.title === picked) ?? null;
}
