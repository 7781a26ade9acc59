/**
 * Replies to a tweet. The replies listing is known to miss replies, so the job walks it AND a
 * `conversation_id:` search; the store deduplicates what both find. A tweet the store holds as a
 * reply itself gets the listing only: replies carry their conversation's root id, so a
 * `conversation_id:` search of a reply's id finds nothing and its request would be wasted.
 */
import { z } from 'zod';
import { tweetLinkOf } from '../../api-client/index.ts';
import type { Queryable } from '../../store/db.ts';
import type { JobKind, SliceHandler } from '../kind.ts';
import { snowflakeId as tweetId } from './ids.ts';
import { tweetPage } from './pages.ts';

export const RepliesJobParams = z.object({ tweetId }).strict();
export type RepliesJobParams = z.infer<typeof RepliesJobParams>;

export const repliesJob: JobKind<RepliesJobParams> = {
  kind: 'replies',
  params: RepliesJobParams,
  priority: 'backfill',
  plan(params) {
    return [
      { kind: 'comments', params: { tweetId: params.tweetId } },
      { kind: 'search', params: { query: `conversation_id:${params.tweetId}`, order: 'latest' } },
    ];
  },
  async planWithStore(db, params, ctx) {
    const root = await storedConversationRoot(db, params.tweetId);
    return root !== null && root !== params.tweetId ? [{ kind: 'comments', params: { tweetId: params.tweetId } }] : repliesJob.plan(params, ctx);
  },
};

/** The stored tweet's conversation root id, or null (not stored, or stored without one: an embedded copy). */
async function storedConversationRoot(db: Queryable, tweetId: string): Promise<string | null> {
  const { rows } = await db.query<{ root: string | null }>('SELECT conversation_id::text AS root FROM tweets WHERE id = $1', [tweetId]);
  return rows[0]?.root ?? null;
}

export const commentsSlice: SliceHandler<RepliesJobParams> = {
  kind: 'comments',
  params: RepliesJobParams,
  fetchAhead: true,
  async fetchPage(p, cursor, ctx) {
    const page = await ctx.client.comments(
      // Recency: the chronological listing. Relevance, the service's default, ranks replies, and a
      // ranked listing can hold back low-ranked ones (the crawl wants every reply).
      { tweetLink: tweetLinkOf(p.tweetId), orderBy: 'Recency', ...(cursor ? { cursor } : {}) },
      ctx.call,
    );
    return tweetPage('POST /v3/comments', page);
  },
};
