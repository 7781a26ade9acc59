/** The kind hooks the slice runner calls are pure: each kind's behaviour, proved without a run. */
import { describe, expect, it } from 'vitest';
import type { CanonicalTweet } from '../../src/api-client/canonical.ts';
import type { FetchedPage } from '../../src/jobs/kind.ts';
import { hydrateSlice } from '../../src/jobs/kinds/hydrate.ts';
import { mentionsSlice } from '../../src/jobs/kinds/mentions.ts';
import { searchJob, searchSlice } from '../../src/jobs/kinds/search.ts';
import { userJob } from '../../src/jobs/kinds/user.ts';
import { firstIdAtMs } from '../../src/jobs/time-slices.ts';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 9, 1);
const tweetAt = (ms: number) => ({ id: firstIdAtMs(ms).toString() }) as CanonicalTweet;
const page = (tweets: CanonicalTweet[]): FetchedPage => ({
  endpoint: 'x', tweets, users: [], nextCursor: 'c', quarantined: [], itemCount: tweets.length,
});

describe('search: afterPage', () => {
  const base = { query: 'q', order: 'latest' as const, sinceMs: T0, untilMs: T0 + 10 * DAY };

  it('proposes handing the older half of a dense remainder to a new slice', () => {
    const v = searchSlice.afterPage!(base, page([tweetAt(T0 + 9 * DAY), tweetAt(T0 + 9 * DAY + 3_600_000)]), { firstPage: true });
    expect(v.stop).toBeUndefined();
    expect(v.split).toEqual({
      stopBelowMs: T0 + Math.floor((9 * DAY) / 2),
      previousStopBelowMs: null,
      childParams: { query: 'q', order: 'latest', sinceMs: T0, untilMs: T0 + Math.floor((9 * DAY) / 2) },
    });
  });

  it('proposes nothing for a sparse page, and stops at its hand-over point', () => {
    expect(searchSlice.afterPage!(base, page([tweetAt(T0 + DAY), tweetAt(T0 + 9 * DAY)]), { firstPage: true }).split).toBeUndefined();
    const handedOver = { ...base, stopBelowMs: T0 + 5 * DAY };
    expect(searchSlice.afterPage!(handedOver, page([tweetAt(T0 + 4 * DAY)]), { firstPage: false }).stop).toMatch(/handed to another slice/);
  });

  it('estimates the pages left after the next one at the density the walk met so far', () => {
    // 4 pages so far (3 before this one) from the top of the range down to day 8: 0.5 day a page,
    // 8 days left below, the next page already on its way: 15.
    const walked = page([tweetAt(T0 + 8 * DAY + 3_600_000), tweetAt(T0 + 8 * DAY)]);
    expect(searchSlice.afterPage!(base, walked, { firstPage: false, pagesBefore: 3 }).remainingPages).toBeCloseTo(15);
    // Down to where it handed the rest over, not to its start.
    expect(searchSlice.afterPage!({ ...base, stopBelowMs: T0 + 6 * DAY }, walked, { firstPage: false, pagesBefore: 3 }).remainingPages).toBeCloseTo(3);
    // Not told how many came before: the page's own density (an hour a page), never below 0.
    expect(searchSlice.afterPage!(base, walked, { firstPage: false }).remainingPages).toBeCloseTo(8 * 24 - 1);
    expect(searchSlice.afterPage!(base, page([tweetAt(T0 + 1000), tweetAt(T0)]), { firstPage: false, pagesBefore: 9 }).remainingPages).toBe(0);
    // No top of range (no --until on a walk): the page's own density.
    const { untilMs: _top, ...noTop } = base;
    expect(searchSlice.afterPage!(noTop, walked, { firstPage: false, pagesBefore: 3 }).remainingPages).toBeCloseTo(8 * 24 - 1);
    // A popular walk has no order to estimate by; a watch pass is one slice.
    expect(searchSlice.afterPage!({ ...base, order: 'popular' }, walked, { firstPage: false, pagesBefore: 3 }).remainingPages).toBeUndefined();
    expect(searchSlice.afterPage!({ ...base, pass: 2, watermarkId: '1' }, walked, { firstPage: false, pagesBefore: 3 }).remainingPages).toBeUndefined();
  });

  it('a slice without a start (no --since) never splits', () => {
    const { sinceMs: _omit, ...noStart } = base;
    expect(searchSlice.afterPage!(noStart, page([tweetAt(T0 + 9 * DAY), tweetAt(T0 + 9 * DAY + 1000)]), { firstPage: true }).split).toBeUndefined();
  });
});

describe('mentions: afterPage', () => {
  const p = { handle: 'h', watermarkId: firstIdAtMs(T0).toString(), floorMs: null, pass: 2 };

  it('stops at the watermark, and notes an empty first page', () => {
    expect(mentionsSlice.afterPage!(p, page([tweetAt(T0 + DAY), tweetAt(T0)]), { firstPage: true }).stop).toMatch(/caught up/);
    expect(mentionsSlice.afterPage!(p, page([tweetAt(T0 + DAY)]), { firstPage: true }).stop).toBeUndefined();
    expect(mentionsSlice.afterPage!(p, page([]), { firstPage: true }).note).toMatch(/first page was empty/);
    expect(mentionsSlice.afterPage!(p, page([]), { firstPage: false }).note).toBeUndefined();
  });

  it('the first pass stops at the page that reaches its lookback (fetchPage marks it, keeping none of its tweets below)', () => {
    const first = { ...p, watermarkId: null, floorMs: T0, pass: 1 };
    expect(mentionsSlice.afterPage!(first, { ...page([tweetAt(T0 + 1)]), reachedBound: true }, { firstPage: false }).stop).toMatch(/lookback/);
    expect(mentionsSlice.afterPage!(first, page([tweetAt(T0 + 1)]), { firstPage: false }).stop).toBeUndefined();
  });
});

describe('hydrate: afterPage', () => {
  it('notes the ids the service did not return', () => {
    const ids = [firstIdAtMs(T0).toString(), firstIdAtMs(T0 + 1).toString()];
    expect(hydrateSlice.afterPage!({ ids }, page([tweetAt(T0)]), { firstPage: true }).note).toBe('1 of 2 ids not returned (deleted, protected or unknown)');
    expect(hydrateSlice.afterPage!({ ids: [ids[0]!] }, page([tweetAt(T0)]), { firstPage: true }).note).toBeUndefined();
  });
});

describe('stopAt: --max-tweets through the kind\'s parsed params', () => {
  it('search and user end the job once they stored that many', () => {
    const search = searchJob.params.parse({ query: 'q', maxTweets: 100 });
    expect(searchJob.stopAt!(search, { tweets: 99 })).toBeNull();
    expect(searchJob.stopAt!(search, { tweets: 100 })).toBe('stopped at --max-tweets 100');
    expect(searchJob.stopAt!(searchJob.params.parse({ query: 'q' }), { tweets: 10 ** 9 })).toBeNull();
    expect(userJob.stopAt!(userJob.params.parse({ target: { username: 'a' }, maxTweets: 5 }), { tweets: 7 })).toMatch(/max-tweets 5/);
  });
});
