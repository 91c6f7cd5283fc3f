/**
 * Memory proposals (SPEC §11 "Memory with consent"): the pending ones for the Memory view, and
 * their review: the whole note before (read-only) and after (editable) in the diff editor, then
 * Accept (the right side as it is then: `content` when it was edited) or Reject, from the diff's
 * title buttons or the notification beside it (`pseudoclaude/memory/review`). A refusal (a stale
 * proposal, an edited text that cannot be a note) keeps the diff open and the proposal queued.
 * Pure: the editor comes in through `ReviewEnv`.
 */
import { describeFailure, errorMessage, isStaleProposal } from '../errors';
import type { AgentClient } from '../ports';
import { Requests, type Proposal, type ReviewParams } from '../protocol';
import { proposalEditable, type ProposalDiff } from './diffs';
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

export type Decision = 'accept' | 'reject';

export interface ReviewEnv {
  /** Open the proposal's diff, or bring it back to the front when it is open. */
  showDiff(diff: ProposalDiff): Promise<void>;
  /**
   * Close the diff (without asking to save the right side); `forget`: drop its texts too (else a
   * saved edit of the right side is there again when the proposal is reviewed again).
   */
  closeDiff(id: string, forget: boolean): Promise<void>;
  /** The right side as the user sees it now (unsaved edits too); undefined when it is gone. */
  rightText(id: string): string | undefined;
  /** A notification beside the diff with these actions (undefined: dismissed). */
  choose(message: string, ...actions: string[]): Promise<string | undefined>;
  info(message: string): void;
  /** An error, with actions (undefined: dismissed). */
  error(message: string, ...actions: string[]): Promise<string | undefined>;
}

/** The diff of a proposal: its note file without and with the change. */
export function proposalDiff(p: Proposal): ProposalDiff {
  return { id: p.id, level: p.level, filename: p.filename, action: p.action, before: p.before, after: p.after };
}

function sentence(text: string): string {
  const t = text.trim();
  return t === '' || /[.!?:]$/.test(t) ? t : `${t}.`;
}

/** The notification beside the diff: what, why, and that the right side can be edited. */
export function reviewMessage(p: Proposal): string {
  const what = `PseudoClaude proposes to ${p.action} ${p.filename} (${p.level} memory)`;
  const why = p.summary.trim() ? `: ${sentence(p.summary)}` : '.';
  const edit = proposalEditable(p) ? ' You can edit the right side before you accept.' : '';
  return `${what}${why}${edit}`;
}

/** The refusal of a proposal whose note changed since (it stays queued). */
export function staleMessage(p: Proposal): string {
  return (
    `PseudoClaude: not accepted: ${p.level}/${p.filename} changed since this proposal was made ` +
    '(a hand edit or another accepted change). Nothing was written; the proposal stays until you reject it.'
  );
}

/**
 * The `content` of an accept: the right side's text (line ends as `\n`) when it differs from the
 * proposed `after`; undefined when it does not, when it is unknown, and for a delete.
 */
export function acceptContent(p: Pick<Proposal, 'action' | 'after'>, right: string | undefined): string | undefined {
  if (right === undefined || !proposalEditable(p)) {
    return undefined;
  }
  const text = right.replace(/\r\n?/g, '\n');
  return text === p.after.replace(/\r\n?/g, '\n') ? undefined : text;
}

interface Review {
  folder: string;
  proposal: Proposal;
  /** Resolves the wait for the user's decision (undefined: the diff was closed). */
  wake?: (decision: Decision | undefined) => void;
  /** A decision that came while nothing waited for one (a click while a request was out). */
  queued?: Decision;
  /** The user closed the diff: decide later. */
  closed?: boolean;
}

type Outcome = 'done' | 'gone' | 'retry';

/**
 * The reviews on screen, one per proposal. `review` opens one and settles it; the diff's title
 * buttons and the notification answer it through `decide`; closing the diff (`closed`) leaves
 * the proposal queued.
 */
export class ProposalReviews {
  private readonly open = new Map<string, Review>();
  /** How the reviews that ended here went (for a late click on an old notification). */
  private readonly ended = new Map<string, 'accepted' | 'rejected' | 'later'>();

  constructor(
    private readonly agent: AgentClient,
    private readonly env: ReviewEnv,
  ) {}

  reviewing(id: string): boolean {
    return this.open.has(id);
  }

  /**
   * Review proposal `id` of `folder` until it is accepted, rejected or its diff is closed.
   * Answers whether the queue changed. A proposal already under review comes to the front.
   */
  async review(folder: string, id: string): Promise<boolean> {
    const current = this.open.get(id);
    if (current) {
      await this.env.showDiff(proposalDiff(current.proposal)).catch(() => undefined);
      return false;
    }
    let proposal: Proposal | undefined;
    try {
      const r = await this.agent.request(Requests.memoryProposals, { workspace: folder });
      proposal = r.proposals.find((p) => p.id === id);
    } catch (e) {
      void this.env.error(describeFailure('Review', e));
      return false;
    }
    if (!proposal) {
      this.env.info('PseudoClaude: that proposal was already reviewed.');
      return true;
    }
    if (this.open.has(id)) {
      return false; // a second click while the list was on its way
    }
    const review: Review = { folder, proposal };
    this.open.set(id, review);
    this.ended.delete(id);
    try {
      await this.env.showDiff(proposalDiff(proposal));
    } catch (e) {
      this.open.delete(id);
      void this.env.error(describeFailure('Review', e));
      return false;
    }
    void this.env.choose(reviewMessage(proposal), ACCEPT, REJECT).then((choice) => {
      if (choice === ACCEPT || choice === REJECT) {
        this.decide(id, choice === ACCEPT ? 'accept' : 'reject');
      }
    });
    for (;;) {
      const decision = await this.next(review);
      if (decision === undefined || review.closed) {
        await this.finish(id, 'later');
        return false;
      }
      const outcome = await this.send(review, decision);
      if (review.queued === decision) {
        review.queued = undefined; // the same button twice: one request
      }
      if (outcome !== 'retry') {
        await this.finish(id, outcome === 'gone' ? 'later' : decision === 'accept' ? 'accepted' : 'rejected');
        return true;
      }
      if (review.closed) {
        await this.finish(id, 'later');
        return false;
      }
    }
  }

  /** Accept or reject the proposal under review (a title button, the notification, a retry). */
  decide(id: string, decision: Decision): void {
    const review = this.open.get(id);
    if (!review) {
      const how = this.ended.get(id);
      this.env.info(
        how === 'accepted' || how === 'rejected'
          ? `PseudoClaude: that proposal was already ${how}.`
          : 'PseudoClaude: that review is closed: open the proposal again from the Memory view.',
      );
      return;
    }
    if (review.wake) {
      review.wake(decision);
    } else {
      review.queued = decision;
    }
  }

  /** The user closed the proposal's diff: the proposal stays queued. */
  closed(id: string): void {
    const review = this.open.get(id);
    if (!review) {
      return;
    }
    review.closed = true;
    review.wake?.(undefined);
  }

  private next(review: Review): Promise<Decision | undefined> {
    const queued = review.queued;
    review.queued = undefined;
    if (queued || review.closed) {
      return Promise.resolve(review.closed ? undefined : queued);
    }
    return new Promise((resolve) => {
      review.wake = (d) => {
        review.wake = undefined;
        resolve(d);
      };
    });
  }

  private async finish(id: string, how: 'accepted' | 'rejected' | 'later'): Promise<void> {
    this.open.delete(id);
    this.ended.set(id, how);
    await this.env.closeDiff(id, how !== 'later').catch(() => undefined);
  }

  private async send(review: Review, decision: Decision): Promise<Outcome> {
    const p = review.proposal;
    const content = decision === 'accept' ? acceptContent(p, this.env.rightText(p.id)) : undefined;
    if (content !== undefined && content.trim() === '') {
      void this.env.error('PseudoClaude: the right side is empty: write the note there, or reject the proposal.');
      return 'retry';
    }
    const params: ReviewParams = { workspace: review.folder, id: p.id, decision };
    if (content !== undefined) {
      params.content = content;
    }
    try {
      const r = await this.agent.request(Requests.memoryReview, params);
      this.env.info(`PseudoClaude: ${r.message}`);
      return 'done';
    } catch (e) {
      if (isStaleProposal(e)) {
        void this.env.error(staleMessage(p), REJECT).then((choice) => {
          if (choice === REJECT) {
            this.decide(p.id, 'reject');
          }
        });
        return 'retry';
      }
      if (!(await this.pending(review))) {
        this.env.info('PseudoClaude: that proposal was already reviewed.');
        return 'gone';
      }
      void this.env.error(describeFailure(decision === 'accept' ? 'Accept' : 'Reject', e));
      return 'retry';
    }
  }

  /** Whether the server still has the proposal (true when it cannot tell). */
  private async pending(review: Review): Promise<boolean> {
    try {
      const r = await this.agent.request(Requests.memoryProposals, { workspace: review.folder });
      return r.proposals.some((p) => p.id === review.proposal.id);
    } catch {
      return true;
    }
  }
}
