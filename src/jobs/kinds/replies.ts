/**
 * Replies to a tweet. The replies listing is known to miss replies, so the job walks it AND a
 * `conversation_id:` search; the store deduplicates what both find.
 */
import { z } from 'zod';
import { tweetLinkOf } from '../../api-client/index.ts';
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
};

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
