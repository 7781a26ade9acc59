/**
 * Conversations: completes the threads of another job's tweets. Two kinds of walk, one request a
 * page, each through the limiter like every request:
 *
 * - the parents walk (one slice): missing parents up the reply chains, 100 ids a request
 *   (/v3/tweet-info-bulk). Before each page it asks Postgres which parents are still missing, so
 *   the parents a page stored lead the next page one level further up; it ends when none is
 *   missing. Ids asked for and not returned (deleted, protected) ride in the cursor, so they are
 *   never asked for twice, and a page of them, empty, still moves the walk on: it cannot loop,
 *   so the runner's end after empty or stale pages does not apply (endsByItself);
 * - the replies of each root: the same two slices a `replies` job walks (`comments` and the
 *   `conversation_id:` search), the roots being the conversations of the job's tweets, except
 *   those the source job itself walked to the end (rootsWalkedToEnd): they would be bought again.
 *
 * Like a refresh, its slices come from Postgres (the source job's tweets), so it is created by
 * submitConversations rather than submitJob.
 */
import { z } from 'zod';
import { quarantineOf } from '../../api-client/index.ts';
import type { Pool, Queryable } from '../../store/db.ts';
import { withTransaction } from '../../store/db.ts';
import { conversationRoots, missingParents, rootReplyCounts, rootsWalkedToEnd, siblingWalkCursors } from '../../store/conversations.ts';
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

/**
 * The parents walk's cursor: pages walked, ids asked for that the service did not return, and how
 * many ids the walk asked for and got back (its end note; absent from cursors written before).
 */
const count = z.number().int().nonnegative();
const ParentsCursor = z.object({ page: count, gone: z.array(z.string().regex(/^\d+$/)), asked: count.default(0), got: count.default(0) });
type ParentsCursor = z.infer<typeof ParentsCursor>;

/**
 * Where a walk starts: its cursor, or on a first page the ids the job's earlier parents walks found
 * gone (a repair starts a stopped walk again from its first page unless --resume: the ids it asked
 * for and did not get would be bought again).
 */
async function readCursor(cursor: string | null, db: Queryable, sliceId: string): Promise<ParentsCursor> {
  if (cursor !== null) return ParentsCursor.parse(JSON.parse(cursor));
  const gone = new Set<string>();
  for (const raw of await siblingWalkCursors(db, sliceId)) {
    let parsed;
    try {
      parsed = ParentsCursor.safeParse(JSON.parse(raw));
    } catch {
      continue;
    }
    if (parsed.success) for (const id of parsed.data.gone) gone.add(id);
  }
  return { page: 0, gone: [...gone], asked: 0, got: 0 };
}

/** The note a walk that asked for parents ends with when some were not returned; else undefined. */
function goneNote(at: { asked: number; got: number }): string | undefined {
  if (at.asked === 0 || at.got === at.asked) return undefined;
  // Every batch answered empty: parents deleted or protected, or a service answering empty.
  if (at.got === 0) return `none of the ${at.asked} missing parents asked for was returned (deleted or protected, or an outage that answers empty)`;
  return `${at.asked - at.got} of ${at.asked} missing parents asked for were not returned (deleted or protected)`;
}

/** Pages made without a request (nothing was missing): empty, but not "none came back". */
const unrequested = new WeakSet<FetchedPage>();
/** The note of a walk's last page, when it asked for parents that did not come back (goneNote). */
const endNotes = new WeakMap<FetchedPage, string>();
const emptyPage = (at: ParentsCursor): FetchedPage => {
  const page: FetchedPage = { endpoint: 'POST /v3/tweet-info-bulk', tweets: [], users: [], nextCursor: null, quarantined: [], itemCount: 0 };
  unrequested.add(page);
  const note = goneNote(at);
  if (note !== undefined) endNotes.set(page, note);
  return page;
};

export const conversationParentsSlice: SliceHandler<ConversationsJobParams> = {
  kind: 'conversation-parents',
  params: ConversationsJobParams,
  // Every page moves on: what it asked for is stored or joins `gone`, so a run of deleted or
  // protected parents (a suspended account's thread) does not end the walk before the rest.
  endsByItself: true,
  async fetchPage(p, cursor, ctx) {
    if (!ctx.db) throw new Error('the conversation-parents walk reads Postgres: its SliceContext needs db');
    const at = await readCursor(cursor, ctx.db, ctx.sliceId);
    // One more than a batch: whether this level goes on past this page.
    const missing = await missingParents(ctx.db, p.sourceJobId, at.gone, BULK_SIZE + 1);
    // Nothing missing (another job stored them since the last page): the walk ends without a request.
    if (missing.length === 0) return emptyPage(at);
    const batch = missing.slice(0, BULK_SIZE);
    const page = await ctx.client.tweetInfoBulk(batch, ctx.call);
    const returned = new Set(page.items.map((t) => t.id));
    const gone = [...at.gone, ...batch.filter((id) => !returned.has(id))];
    // The next level: a parent of what this page brought that was not asked for. One stored in full
    // (by another job) may have a missing parent of its own: the next page asks Postgres, which
    // climbs the stored chain (missingParents), and ends without a request when nothing is missing.
    const goneSet = new Set(gone);
    const more = missing.length > BULK_SIZE || page.items.some((t) => t.inReplyToTweetId !== null && !returned.has(t.inReplyToTweetId) && !goneSet.has(t.inReplyToTweetId));
    const next: ParentsCursor = { page: at.page + 1, gone, asked: at.asked + batch.length, got: at.got + page.items.length };
    const fetched: FetchedPage = {
      endpoint: 'POST /v3/tweet-info-bulk',
      tweets: page.items,
      users: [],
      nextCursor: more ? JSON.stringify(next) : null,
      quarantined: quarantineOf(page),
      itemCount: page.items.length + page.quarantined.length,
    };
    const note = more ? undefined : goneNote(next);
    if (note !== undefined) endNotes.set(fetched, note);
    return fetched;
  },
  afterPage(_p, page) {
    // Only the page that ends a walk has its notes kept: that one sums up the walk.
    const note = endNotes.get(page) ?? (page.itemCount === 0 && !unrequested.has(page) ? 'no missing parent was returned (deleted or protected)' : undefined);
    return note === undefined ? {} : { note };
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
  /** Roots whose replies the job walks. */
  roots: number;
  /** Roots left out: the source job walked their replies to the end itself (rootsWalkedToEnd). */
  skippedRoots: number;
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
  const { roots, skipped } = await rootsToWalk(db, p.sourceJobId);
  const replies = await rootReplyCounts(db, roots);
  let requests = Math.ceil(missing.length / BULK_SIZE);
  let rootReplies = 0;
  for (const root of roots) {
    const n = replies.get(root) ?? 0;
    rootReplies += n;
    requests += 2 * Math.max(1, Math.ceil(n / REPLY_PAGE));
  }
  return { missingParents: missing.length, roots: roots.length, skippedRoots: skipped, rootReplies, requests };
}

/**
 * The roots whose replies the job walks: the source job's conversations, less those whose listing
 * and search the source job itself walked to the end (a `replies` job, or a `conversations` job of
 * the same tweets): walking them again buys the same pages, every tweet already the source job's.
 * Another job's complete walk does not count: it read the conversation as it was then, and a
 * conversation grows; nothing but a date would say whether it is recent enough.
 */
async function rootsToWalk(db: Queryable, sourceJobId: string): Promise<{ roots: string[]; skipped: number }> {
  const all = await conversationRoots(db, sourceJobId);
  const walked = await rootsWalkedToEnd(db, sourceJobId);
  const roots = all.filter((id) => !walked.has(id));
  return { roots, skipped: all.length - roots.length };
}

export interface ConversationsSubmitDeps {
  pool: Pool;
  queues: HarvestQueues;
  budgets: { setBudget(jobId: string, maxRequests: number, options?: { replace?: boolean }): Promise<number> };
}

/**
 * Records the job and its slices in one transaction (Postgres first: if the enqueue fails,
 * reconcile finds them), the exact budget set before the commit, then queues the slices.
 */
export async function submitConversations(
  deps: ConversationsSubmitDeps,
  input: { params: unknown; maxRequests?: number; onCreated?: (jobId: string) => void },
): Promise<{ jobId: string; slices: number; roots: number; skippedRoots: number }> {
  const params = ConversationsJobParams.parse(input.params);
  const { id, slices, roots, skipped } = await withTransaction(deps.pool, async (client) => {
    const { roots: rootIds, skipped } = await rootsToWalk(client, params.sourceJobId);
    const created = await createJob(client, {
      kind: conversationsJob.kind,
      params,
      priority: conversationsJob.priority,
      maxRequests: input.maxRequests ?? null,
    });
    // Before the commit, replacing an older job's key under this id (see submitJob).
    if (input.maxRequests !== undefined) await deps.budgets.setBudget(created, input.maxRequests, { replace: true });
    return { id: created, slices: await insertSlices(client, created, planConversations(params, rootIds)), roots: rootIds.length, skipped };
  });
  input.onCreated?.(id);
  for (const s of slices) await deps.queues.enqueueSlice(s.priority, { jobId: id, sliceId: s.id });
  return { jobId: id, slices: slices.length, roots, skippedRoots: skipped };
}
