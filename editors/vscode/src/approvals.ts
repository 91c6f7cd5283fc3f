/**
 * Approval prompts (SPEC §8): the server asks with `window/showMessageRequest` (type Warning,
 * actions `Allow once`, `Allow for this session`, `Always allow` when it has a rule to add,
 * `Deny`). The extension shows them as modal dialogs; anything else keeps the usual non-modal
 * message. `Always allow` reads `Always allow <rule>` (the rule from the message's last line).
 * The question for a project's MCP server (`This project's .mcp.json asks PseudoClaude to start
 * ...`) says what it runs in the detail, and its `Allow for this session` reads `Allow for this
 * project` (it is remembered). A plan (`exit_plan_mode`) comes as an information message
 * (`PseudoClaude's plan:` and its Markdown) with `Approve`, an approve with edits accepted and
 * `Keep planning`: a modal too, its buttons `Approve`, `Approve and accept edits` and `Keep
 * planning` (Escape keeps planning; a message has no field for feedback).
 */
import type { PlanMode } from './chat/model';
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

/** The button shown for the server's `Allow for this session` on a project MCP server's question. */
export const ALLOW_PROJECT = 'Allow for this project';

const SERVER_QUESTION = /^This project's \.mcp\.json asks PseudoClaude to start the MCP server (.+?) of this project: ([\s\S]*)$/;

/** A project MCP server's question: the server and what it runs. */
export function serverQuestionOf(message: string): { server: string; command: string } | undefined {
  const m = SERVER_QUESTION.exec(message.trim());
  return m ? { server: m[1] ?? '', command: (m[2] ?? '').trim() } : undefined;
}

const ALWAYS_LINE = /\n?Always allow adds the rule (.+?) to this folder's \S+\s*$/;

/**
 * The message's last line saying what "Always allow" adds, taken out: the rule, and the
 * message without that line; undefined when it has none.
 */
export function alwaysRuleOf(message: string): { rule: string; message: string } | undefined {
  const text = message.trim();
  const m = ALWAYS_LINE.exec(text);
  const rule = m?.[1]?.trim();
  return m && rule ? { rule, message: text.slice(0, m.index).trim() } : undefined;
}

/** The rule "Always allow" adds, as the message's last line says it. */
export function alwaysRule(message: string): string | undefined {
  return alwaysRuleOf(message)?.rule;
}

/** The button of `Always allow`: with the rule it adds, when the message names it. */
function alwaysTitle(p: ShowMessageRequest): string {
  const rule = alwaysRule(p.message);
  return rule ? `${ApprovalActions.always} ${rule}` : ApprovalActions.always;
}

/** Title line as the message, the rest (the tool's arguments) as the detail. */
export function approvalPrompt(p: ShowMessageRequest): ModalPrompt {
  const server = serverQuestionOf(p.message);
  if (server) {
    return {
      message: `PseudoClaude: this project's .mcp.json wants to start the MCP server ${server.server}`,
      detail:
        `It runs: ${server.command}\n\nIt runs on this machine with your permissions. ` +
        'Allow for this project: remembered on this machine, for this folder and this exact command.',
      buttons: (p.actions ?? []).map((a) => ({
        title: a.title === ApprovalActions.session ? ALLOW_PROJECT : a.title,
        isCloseAffordance: a.title === ApprovalActions.deny,
      })),
    };
  }
  const text = p.message.trim();
  const cut = text.indexOf('\n');
  const message = cut < 0 ? text : text.slice(0, cut).trim();
  const detail = cut < 0 ? undefined : text.slice(cut + 1).trim() || undefined;
  return {
    message: /^pseudoclaude\b/i.test(message) ? message : `PseudoClaude: ${message}`,
    detail,
    buttons: (p.actions ?? []).map((a) => ({
      title: a.title === ApprovalActions.always ? alwaysTitle(p) : a.title,
      isCloseAffordance: a.title === ApprovalActions.deny,
    })),
  };
}

/** The LSP answer for a picked button: the action object, or null (a denial) when dismissed. */
export function approvalAnswer(p: ShowMessageRequest, picked: string | undefined): MessageAction | null {
  if (picked === undefined) {
    return null;
  }
  const title =
    picked === ALLOW_PROJECT && serverQuestionOf(p.message)
      ? ApprovalActions.session
      : picked === alwaysTitle(p)
        ? ApprovalActions.always
        : picked;
  return (p.actions ?? []).find((a) => a.title === title) ?? null;
}

// ------------------------------------------------------------------------------------ plans

/** The buttons of a plan's modal (the server's own titles may differ a little: see `planAnswer`). */
export const PlanActions = {
  approve: 'Approve',
  approveEdits: 'Approve and accept edits',
  keep: 'Keep planning',
} as const;

/** The server's title of the approve with edits accepted (`Approve, accept edits`, or ours). */
const APPROVE_EDITS = /^approve\b.*\bedits?\b/i;

const PLAN_HEAD = /^PseudoClaude's plan:\s*/;

/** A `window/showMessageRequest` asking to approve a plan: `Approve` and `Keep planning` among its actions. */
export function isPlanApproval(p: ShowMessageRequest): boolean {
  const titles = new Set((p.actions ?? []).map((a) => a.title));
  return titles.has(PlanActions.approve) && titles.has(PlanActions.keep);
}

/** The plan (Markdown) of a plan's message: without its first line. */
export function planOf(message: string): string {
  return message.trim().replace(PLAN_HEAD, '').trim();
}

/** Whether a message is a plan's (`PseudoClaude's plan:` first). */
export function isPlanMessage(message: string): boolean {
  return PLAN_HEAD.test(message.trim());
}

/** The modal of a plan: the plan as the detail, Approve / Approve and accept edits / Keep planning (Escape). */
export function planPrompt(p: ShowMessageRequest): ModalPrompt {
  const edits = (p.actions ?? []).some((a) => APPROVE_EDITS.test(a.title));
  return {
    message: 'PseudoClaude: approve this plan and start working?',
    detail: planOf(p.message) || undefined,
    buttons: [
      { title: PlanActions.approve, isCloseAffordance: false },
      ...(edits ? [{ title: PlanActions.approveEdits, isCloseAffordance: false }] : []),
      { title: PlanActions.keep, isCloseAffordance: true },
    ],
  };
}

/** The mode a plan's button approves it in; undefined: not an approval (Keep planning, dismissed). */
export function planModeOf(title: string | undefined | null): PlanMode | undefined {
  if (!title) {
    return undefined;
  }
  if (title === PlanActions.approve) {
    return 'default';
  }
  return APPROVE_EDITS.test(title) ? 'acceptEdits' : undefined;
}

/** The LSP answer for a plan's button: the server's action; dismissed: Keep planning. */
export function planAnswer(p: ShowMessageRequest, picked: string | undefined): MessageAction | null {
  const actions = p.actions ?? [];
  const mode = planModeOf(picked);
  const found =
    mode === 'default'
      ? actions.find((a) => a.title === PlanActions.approve)
      : mode === 'acceptEdits'
        ? actions.find((a) => APPROVE_EDITS.test(a.title))
        : actions.find((a) => a.title === PlanActions.keep);
  return found ?? null;
}
