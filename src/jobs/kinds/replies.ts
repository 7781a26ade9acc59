/**
 * Replies to a tweet. The replies listing is known to miss replies, so the job walks it AND a
 * `conversation_id:` search; the store deduplicates what both find.
 */
import { z } from 'zod';
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
      { tweetLink: p.tweetId, ...(cursor ? { cursor } : {}) },
      ctx.call,
    );
    return tweetPage('POST /v3/comments', page);
  },
};
