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
import { createWatch, cutPassResume, passLowerBound, watchIdentity } from '../../store/watches.ts';
import type { FetchedPage, JobKind, PageVerdict, SliceHandler, SliceSpec, WatchPassInput } from '../kind.ts';
import { msOfId } from '../time-slices.ts';
import { resumedPage, resumeSegment, tweetPage } from './pages.ts';
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
  /** A pass resuming one cut short (cutPassResume): mentions above this first, then below resumeBelowId. */
  resumeFromId: z.string().regex(/^\d+$/).optional(),
  resumeBelowId: z.string().regex(/^\d+$/).optional(),
});
export type MentionsSliceParams = z.infer<typeof MentionsSliceParams>;

const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

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
  gaps?: WatchPassInput['gaps'],
): SliceSpec {
  const floorMs = watermarkId === null ? (storedFloorMs ?? firstPassFloorMs(params, now)) : null;
  const resume = cutPassResume(gaps, passLowerBound(watermarkId, floorMs));
  // until_date is a day (untilBelowMs): that saves something only when the cut pass read past it.
  const usable = resume !== null && untilBelowMs(resume.belowId) <= msOfId(resume.fromId);
  return {
    kind: 'mentions',
    params: {
      handle: params.handle,
      minLikes: params.minLikes,
      minRetweets: params.minRetweets,
      minReplies: params.minReplies,
      watermarkId,
      floorMs,
      pass,
      ...(usable ? { resumeFromId: resume.fromId, resumeBelowId: resume.belowId } : {}),
    } satisfies MentionsSliceParams,
  };
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * The until_date of a resuming pass's second segment: everything below the cut pass's oldest id
 * lies before it. Two days after that id's UTC day, not one: the service does not say in which
 * time zone it reads the date, and a zone east of UTC would end the day before UTC midnight,
 * leaving the last hours of the day unread below the oldest. Re-reading a day more is the price.
 */
function untilBelowMs(id: string): number {
  return (Math.floor(msOfId(id) / DAY_MS) + 2) * DAY_MS;
}

/**
 * The since_date of a pass that reads down to a floor (a first pass's --since or lookback): the
 * day before the floor's UTC day. In a zone west of UTC the floor's own day would begin hours
 * after UTC midnight, and the mentions in between, above the floor, were never answered, while the
 * pass ended complete. The walk still stops at the floor, and what the page that crosses it holds
 * below the floor is not stored (withinFloor): the margin costs at most that one page.
 */
function sinceFloorMs(floorMs: number): number {
  return floorMs - DAY_MS;
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
    // --full: the job's first pass reads back to its own --since (or 7 days), watermark or not,
    // and all of it, even what a cut pass read; and down to the watermark when that is older. A
    // complete pass raises the watermark to its newest, so a floor above the old watermark let
    // the mentions between them be passed over for good (the next pass stops at the new one).
    if (params.full && input.pass === 1) {
      const floorMs = firstPassFloorMs(params, input.now);
      const watermarkMs = input.watermarkId === null ? null : msOfId(input.watermarkId);
      return passSlice(params, null, 1, input.now, watermarkMs !== null && watermarkMs < floorMs ? watermarkMs : floorMs);
    }
    return passSlice(params, input.watermarkId, input.pass, input.now, input.floorMs ?? null, input.gaps);
  },
};

/** A page with its tweets below the floor left out (the pass was not asked for them), marked as reaching it. */
function withinFloor(page: FetchedPage, floorMs: number | null): FetchedPage {
  if (floorMs === null) return page;
  const kept = page.tweets.filter((t) => msOfId(t.id) >= floorMs);
  return kept.length === page.tweets.length ? page : { ...page, tweets: kept, reachedBound: true };
}

export const mentionsSlice: SliceHandler<MentionsSliceParams> = {
  kind: 'mentions',
  params: MentionsSliceParams,
  fetchAhead: true,
  async fetchPage(p, cursor, ctx) {
    const sinceDate = p.floorMs !== null ? isoDay(sinceFloorMs(p.floorMs)) : undefined;
    // A resuming pass (resumeSegment): above the cut pass's newest, then before the day after its oldest.
    const resuming = p.resumeFromId !== undefined && p.resumeBelowId !== undefined;
    const segment = resuming ? resumeSegment(cursor) : { below: false, cursor };
    const untilDate = resuming && segment.below ? isoDay(untilBelowMs(p.resumeBelowId!)) : undefined;
    const page = await ctx.client.mentions(
      {
        query: p.handle,
        order: 'latest',
        ...(sinceDate ? { sinceDate } : {}),
        ...(untilDate ? { untilDate } : {}),
        ...(p.minLikes !== undefined ? { minLikes: p.minLikes } : {}),
        ...(p.minRetweets !== undefined ? { minRetweets: p.minRetweets } : {}),
        ...(p.minReplies !== undefined ? { minReplies: p.minReplies } : {}),
        ...(segment.cursor ? { cursor: segment.cursor } : {}),
      },
      ctx.call,
    );
    const fetched = withinFloor(tweetPage('POST /v3/mentions', page), p.floorMs);
    if (!resuming) return fetched;
    // The first segment ends where it meets what the cut pass read; a service's end before that
    // ends the walk (an empty one above the watermark is cut short: passEnd), never the segment:
    // the second would then skip what lies between this page and the cut pass's newest.
    const from = BigInt(p.resumeFromId!);
    const reachedRead = !segment.below && page.items.some((t) => BigInt(t.id) <= from);
    return resumedPage(fetched, segment.below, reachedRead);
  },
  afterPage(p, page, info) {
    const verdict: PageVerdict = {};
    if (info.firstPage && page.itemCount === 0) {
      verdict.note = 'the first page was empty: nothing found, or the service is answering empty (outage?)';
    }
    const watermark = p.watermarkId === null ? null : BigInt(p.watermarkId);
    if (watermark !== null && page.tweets.some((t) => BigInt(t.id) <= watermark)) {
      verdict.stop = 'caught up with the previous pass';
    } else if (page.reachedBound === true) {
      verdict.stop = 'reached the first pass lookback';
    }
    return verdict;
  },
};
