/**
 * Mention watch. Each pass reads /v3/mentions newest-first and stops at the watch's
 * high-watermark (the newest tweet id an earlier pass stored), so a pass with nothing new costs
 * exactly one request. Passes never resume from an older pass's cursor: cursors walk into the
 * past. The watch's identity is the handle and filters: a one-shot pass (no --every) continues
 * from the watermark of the identity's earlier passes, scheduled or not. The first pass of an
 * identity reads back to --since (default: 7 days); --full reads back to it again on purpose.
 * With --since and --every, [since, now) is backfilled in parallel search slices (the mentions
 * endpoint is a search for `@handle` with the filters) and the watch starts from the backfill's
 * upper bound: no gap, no overlap. The watch definition lives in the `watches` table.
 */
import { z } from 'zod';
import { createWatch, watchIdentity } from '../../store/watches.ts';
import type { JobKind, PageVerdict, SliceHandler, SliceSpec } from '../kind.ts';
import { oldestMs, tweetPage } from './pages.ts';
import { backfillSlices, handoffWatermark } from './watch-handoff.ts';

export const DEFAULT_FIRST_PASS_LOOKBACK_MS = 7 * 24 * 3600 * 1000;

export const MentionsJobParams = z
  .object({
    handle: z.string().regex(/^[A-Za-z0-9_]{1,15}$/),
    minLikes: z.number().int().nonnegative().optional(),
    minRetweets: z.number().int().nonnegative().optional(),
    minReplies: z.number().int().nonnegative().optional(),
    /** Scheduled watch: seconds between passes; absent for one pass. */
    everySeconds: z.number().int().min(60).optional(),
    /** How far back the first pass reads (YYYY-MM-DD). */
    since: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional(),
    /** The first pass ignores the watermark and reads back to --since (or 7 days) again. */
    full: z.boolean().optional(),
  })
  .strict();
export type MentionsJobParams = z.infer<typeof MentionsJobParams>;

export const MentionsSliceParams = z.object({
  handle: z.string(),
  minLikes: z.number().int().optional(),
  minRetweets: z.number().int().optional(),
  minReplies: z.number().int().optional(),
  /** Newest id stored by earlier passes; the pass ends on reaching it. */
  watermarkId: z.string().regex(/^\d+$/).nullable(),
  /** First pass only: the pass ends on reaching tweets older than this. */
  floorMs: z.number().int().nullable(),
  pass: z.number().int().positive(),
});
export type MentionsSliceParams = z.infer<typeof MentionsSliceParams>;

export function firstPassFloorMs(params: MentionsJobParams, now: Date): number {
  return params.since ? Date.parse(`${params.since}T00:00:00Z`) : now.getTime() - DEFAULT_FIRST_PASS_LOOKBACK_MS;
}

/** The search query the mentions endpoint runs: what a backfill of [since, now) searches. */
export function mentionsQuery(params: MentionsJobParams): string {
  const terms = [`@${params.handle}`];
  if (params.minLikes !== undefined) terms.push(`min_faves:${params.minLikes}`);
  if (params.minRetweets !== undefined) terms.push(`min_retweets:${params.minRetweets}`);
  if (params.minReplies !== undefined) terms.push(`min_replies:${params.minReplies}`);
  return terms.join(' ');
}

/** Handle (case-insensitive) and filters: passes of one identity share a watermark. */
export function mentionsIdentity(params: MentionsJobParams): string {
  return watchIdentity('mentions', {
    handle: params.handle.toLowerCase(),
    minLikes: params.minLikes,
    minRetweets: params.minRetweets,
    minReplies: params.minReplies,
  });
}

export function passSlice(
  params: MentionsJobParams,
  watermarkId: string | null,
  pass: number,
  now: Date,
  storedFloorMs: number | null = null,
): SliceSpec {
  return {
    kind: 'mentions',
    params: {
      handle: params.handle,
      minLikes: params.minLikes,
      minRetweets: params.minRetweets,
      minReplies: params.minReplies,
      watermarkId,
      floorMs: watermarkId === null ? (storedFloorMs ?? firstPassFloorMs(params, now)) : null,
      pass,
    } satisfies MentionsSliceParams,
  };
}

export const mentionsJob: JobKind<MentionsJobParams> = {
  kind: 'mentions',
  params: MentionsJobParams,
  priority: 'watch',
  // The first pass is started by submitJob from the identity's watch (its watermark and floor).
  plan(params, ctx) {
    if (params.since === undefined || params.everySeconds === undefined || params.full) return [];
    return backfillSlices(mentionsQuery(params), params.since, ctx);
  },
  async onCreate(tx, jobId, params) {
    await createWatch(tx, {
      jobId,
      kind: 'mentions',
      identity: mentionsIdentity(params),
      handle: params.handle,
      params,
      everySeconds: params.everySeconds ?? null,
      floorMs: firstPassFloorMs(params, new Date()),
      seedWatermarkId: await handoffWatermark(tx, jobId),
    });
  },
  async afterSubmit(queues, jobId, params) {
    if (params.everySeconds !== undefined) await queues.scheduleWatch(jobId, params.everySeconds * 1000);
  },
  passSlice(params, input) {
    // --full: the job's first pass reads back to its own --since (or 7 days), watermark or not.
    if (params.full && input.pass === 1) return passSlice(params, null, 1, input.now);
    return passSlice(params, input.watermarkId, input.pass, input.now, input.floorMs ?? null);
  },
};

export const mentionsSlice: SliceHandler<MentionsSliceParams> = {
  kind: 'mentions',
  params: MentionsSliceParams,
  fetchAhead: true,
  async fetchPage(p, cursor, ctx) {
    const sinceDate = p.floorMs !== null ? new Date(p.floorMs).toISOString().slice(0, 10) : undefined;
    const page = await ctx.client.mentions(
      {
        query: p.handle,
        order: 'latest',
        ...(sinceDate ? { sinceDate } : {}),
        ...(p.minLikes !== undefined ? { minLikes: p.minLikes } : {}),
        ...(p.minRetweets !== undefined ? { minRetweets: p.minRetweets } : {}),
        ...(p.minReplies !== undefined ? { minReplies: p.minReplies } : {}),
        ...(cursor ? { cursor } : {}),
      },
      ctx.call,
    );
    return tweetPage('POST /v3/mentions', page);
  },
  afterPage(p, page, info) {
    const verdict: PageVerdict = {};
    if (info.firstPage && page.itemCount === 0) {
      verdict.note = 'the first page was empty: nothing found, or the service is answering empty (outage?)';
    }
    const watermark = p.watermarkId === null ? null : BigInt(p.watermarkId);
    if (watermark !== null && page.tweets.some((t) => BigInt(t.id) <= watermark)) {
      verdict.stop = 'caught up with the previous pass';
    } else if (p.floorMs !== null) {
      const oldest = oldestMs(page.tweets);
      if (oldest !== null && oldest < p.floorMs) verdict.stop = 'reached the first pass lookback';
    }
    return verdict;
  },
};
