/**
 * Conversations: completes the threads of another job's tweets. Two kinds of walk, one request a
 * page, each through the limiter like every request:
 *
 * - the parents walk (one slice): missing parents up the reply chains, 100 ids a request
 *   (/v3/tweet-info-bulk). Before each page it asks Postgres which parents are still missing, so
 *   the parents a page stored lead the next page one level further up; it ends when none is
 *   missing. Ids asked for and not returned (deleted, protected) ride in the cursor, so they are
 *   never asked for twice;
 * - the replies of each root: the same two slices a `replies` job walks (`comments` and the
 *   `conversation_id:` search), the roots being the conversations of the job's tweets.
 *
 * Like a refresh, its slices come from Postgres (the source job's tweets), so it is created by
 * submitConversations rather than submitJob.
 */
import { z } from 'zod';
import { quarantineOf } from '../../api-client/index.ts';
import type { Pool, Queryable } from '../../store/db.ts';
import { withTransaction } from '../../store/db.ts';
import { conversationRoots, rootReplyCounts, missingParents } from '../../store/conversations.ts';
import { jobIdSchema } from '../../store/job-id.ts';
import { createJob, insertSlices } from '../../store/jobs.ts';
import type { FetchedPage, JobKind, SliceHandler, SliceSpec } from '../kind.ts';
import type { HarvestQueues } from '../queue.ts';
import { BULK_SIZE } from './hydrate.ts';

export const ConversationsJobParams = z.object({ sourceJobId: jobIdSchema }).strict();
export type ConversationsJobParams = z.infer<typeof ConversationsJobParams>;

export const conversationsJob: JobKind<ConversationsJobParams> = {
  kind: 'conversations',
  params: ConversationsJobParams,
  priority: 'backfill',
  plan() {
    // The roots live in Postgres: submitConversations reads them in the transaction that records the job.
    throw new Error('conversations jobs are created with submitConversations (their threads come from Postgres)');
  },
};

/** The parents walk's cursor: pages walked, and ids asked for that the service did not return. */
const ParentsCursor = z.object({ page: z.number().int().nonnegative(), gone: z.array(z.string().regex(/^\d+$/)) });
type ParentsCursor = z.infer<typeof ParentsCursor>;

function readCursor(cursor: string | null): ParentsCursor {
  return cursor === null ? { page: 0, gone: [] } : ParentsCursor.parse(JSON.parse(cursor));
}

/** Pages made without a request (nothing was missing): empty, but not "none came back". */
const unrequested = new WeakSet<FetchedPage>();
const emptyPage = (): FetchedPage => {
  const page: FetchedPage = { endpoint: 'POST /v3/tweet-info-bulk', tweets: [], users: [], nextCursor: null, quarantined: [], itemCount: 0 };
  unrequested.add(page);
  return page;
};

export const conversationParentsSlice: SliceHandler<ConversationsJobParams> = {
  kind: 'conversation-parents',
  params: ConversationsJobParams,
  async fetchPage(p, cursor, ctx) {
    if (!ctx.db) throw new Error('the conversation-parents walk reads Postgres: its SliceContext needs db');
    const at = readCursor(cursor);
    // One more than a batch: whether this level goes on past this page.
    const missing = await missingParents(ctx.db, p.sourceJobId, at.gone, BULK_SIZE + 1);
    // Nothing missing (another job stored them since the last page): the walk ends without a request.
    if (missing.length === 0) return emptyPage();
    const batch = missing.slice(0, BULK_SIZE);
    const page = await ctx.client.tweetInfoBulk(batch, ctx.call);
    const returned = new Set(page.items.map((t) => t.id));
    const gone = [...at.gone, ...batch.filter((id) => !returned.has(id))];
    // The next level: a parent of what this page brought that was not asked for. One stored in full
    // (by another job) may have a missing parent of its own: the next page asks Postgres, which
    // climbs the stored chain (missingParents), and ends without a request when nothing is missing.
    const goneSet = new Set(gone);
    const more = missing.length > BULK_SIZE || page.items.some((t) => t.inReplyToTweetId !== null && !returned.has(t.inReplyToTweetId) && !goneSet.has(t.inReplyToTweetId));
    return {
      endpoint: 'POST /v3/tweet-info-bulk',
      tweets: page.items,
      users: [],
      nextCursor: more ? JSON.stringify({ page: at.page + 1, gone } satisfies ParentsCursor) : null,
      quarantined: quarantineOf(page),
      itemCount: page.items.length + page.quarantined.length,
    };
  },
  afterPage(_p, page) {
    return page.itemCount === 0 && !unrequested.has(page) ? { note: 'no missing parent was returned (deleted or protected)' } : {};
  },
};

/** Pure: the parents walk, then each root's two reply walks (as a `replies` job plans them). */
export function planConversations(p: ConversationsJobParams, roots: readonly string[]): SliceSpec[] {
  return [
    { kind: conversationParentsSlice.kind, params: { sourceJobId: p.sourceJobId } },
    ...roots.flatMap((tweetId) => [
      { kind: 'comments', params: { tweetId } },
      { kind: 'search', params: { query: `conversation_id:${tweetId}`, order: 'latest' } },
    ]),
  ];
}

export interface ConversationsEstimate {
  /** Parents missing one level up (each further level is known only once this one is fetched). */
  missingParents: number;
  roots: number;
  /** Direct replies the stored roots say they have (their reply_count), summed. */
  rootReplies: number;
  /**
   * At least: a request per 100 missing parents, plus each root's two reply walks, each a page per
   * 20 of the replies its stored reply_count gives (one page when the root is not stored).
   */
  requests: number;
}

/** Replies a walk's page holds at most (comments and search both answer up to 20). */
const REPLY_PAGE = 20;

/**
 * Counted in Postgres: no request. A lower bound: further levels of parents, and replies to
 * replies (a conversation search reads them too), add to it.
 */
export async function estimateConversations(db: Queryable, params: ConversationsJobParams): Promise<ConversationsEstimate> {
  const p = ConversationsJobParams.parse(params);
  const missing = await missingParents(db, p.sourceJobId, [], 1_000_000);
  const roots = await conversationRoots(db, p.sourceJobId);
  const replies = await rootReplyCounts(db, roots);
  let requests = Math.ceil(missing.length / BULK_SIZE);
  let rootReplies = 0;
  for (const root of roots) {
    const n = replies.get(root) ?? 0;
    rootReplies += n;
    requests += 2 * Math.max(1, Math.ceil(n / REPLY_PAGE));
  }
  return { missingParents: missing.length, roots: roots.length, rootReplies, requests };
}

export interface ConversationsSubmitDeps {
  pool: Pool;
  queues: HarvestQueues;
  budgets: { setBudget(jobId: string, maxRequests: number): Promise<number> };
}

/**
 * Records the job and its slices in one transaction (Postgres first: if the enqueue fails,
 * reconcile finds them), then sets the exact budget and queues the slices.
 */
export async function submitConversations(
  deps: ConversationsSubmitDeps,
  input: { params: unknown; maxRequests?: number; onCreated?: (jobId: string) => void },
): Promise<{ jobId: string; slices: number; roots: number }> {
  const params = ConversationsJobParams.parse(input.params);
  const { id, slices, roots } = await withTransaction(deps.pool, async (client) => {
    const rootIds = await conversationRoots(client, params.sourceJobId);
    const created = await createJob(client, {
      kind: conversationsJob.kind,
      params,
      priority: conversationsJob.priority,
      maxRequests: input.maxRequests ?? null,
    });
    return { id: created, slices: await insertSlices(client, created, planConversations(params, rootIds)), roots: rootIds.length };
  });
  input.onCreated?.(id);
  if (input.maxRequests !== undefined) await deps.budgets.setBudget(id, input.maxRequests);
  for (const s of slices) await deps.queues.enqueueSlice(s.priority, { jobId: id, sliceId: s.id });
  return { jobId: id, slices: slices.length, roots };
}
