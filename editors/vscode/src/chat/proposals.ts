/**
 * Memory proposals (SPEC §11 "Memory with consent"): the pending ones for the Memory view, and a
 * review that shows the whole note before and after in the diff editor, then accepts or rejects
 * it (`pseudoclaude/memory/review`). Pure: the editor comes in through `ReviewEnv`.
 */
import { describeFailure, errorMessage } from '../errors';
import type { AgentClient } from '../ports';
import { Requests, type Proposal } from '../protocol';
import type { DiffRequest } from './host';
import type { PendingProposal, ProposalSource } from './trees';

export function pendingOf(proposals: Proposal[]): PendingProposal[] {
  return proposals.map((p) => ({
    id: p.id,
    action: p.action,
    level: p.level,
    title: p.title,
    filename: p.filename,
    summary: p.summary,
    createdAt: p.createdAt,
  }));
}

/** The server's pending proposals; `undefined` when it cannot list them (an older server). */
export function serverProposals(agent: AgentClient, log: (message: string) => void): ProposalSource {
  return {
    async list(folder) {
      try {
        const r = await agent.request(Requests.memoryProposals, { workspace: folder });
        return pendingOf(r.proposals);
      } catch (e) {
        log(`memory proposals: ${errorMessage(e)}`);
        return undefined;
      }
    },
  };
}

export const ACCEPT = 'Accept';
export const REJECT = 'Reject';

export interface ReviewEnv {
  showDiff(diff: DiffRequest): Promise<void>;
  closeDiff(id: string): void;
  /** A question beside the diff with these actions (undefined: dismissed, decide later). */
  choose(message: string, ...actions: string[]): Promise<string | undefined>;
  info(message: string): void;
  error(message: string): void;
}

/** The diff of a proposal: its note file without and with the change. */
export function proposalDiff(p: Proposal, folder: string): DiffRequest {
  return {
    id: `memory-${p.id}`,
    path: `${p.level}/${p.filename}`,
    folder,
    before: p.before,
    after: p.after,
    tool: `memory ${p.action}`,
  };
}

/**
 * Review proposal `id` of `folder`: its diff, then Accept / Reject; the answer goes to the server.
 * Answers whether the queue changed.
 */
export async function reviewProposal(agent: AgentClient, env: ReviewEnv, folder: string, id: string): Promise<boolean> {
  let proposal: Proposal | undefined;
  try {
    const r = await agent.request(Requests.memoryProposals, { workspace: folder });
    proposal = r.proposals.find((p) => p.id === id);
  } catch (e) {
    env.error(describeFailure('Review', e));
    return false;
  }
  if (!proposal) {
    env.info('PseudoClaude: that proposal was already reviewed.');
    return true;
  }
  const diff = proposalDiff(proposal, folder);
  await env.showDiff(diff).catch(() => undefined);
  const what = `${proposal.action} ${proposal.filename} (${proposal.level} memory)`;
  const choice = await env.choose(
    `PseudoClaude proposes to ${what}${proposal.summary ? `: ${proposal.summary}` : ''}`,
    ACCEPT,
    REJECT,
  );
  env.closeDiff(diff.id);
  if (choice !== ACCEPT && choice !== REJECT) {
    return false;
  }
  try {
    const r = await agent.request(Requests.memoryReview, {
      workspace: folder,
      id,
      decision: choice === ACCEPT ? 'accept' : 'reject',
    });
    env.info(
      choice === REJECT
        ? `PseudoClaude: rejected the proposal to ${what}.`
        : r.applied
          ? `PseudoClaude: accepted: ${r.filename ?? proposal.filename} (${proposal.level} memory).`
          : `PseudoClaude: the proposal to ${what} was not applied.`,
    );
  } catch (e) {
    env.error(describeFailure('Review', e));
  }
  return true;
}
