/**
 * A watch pass cut short leaves what it read on record (the gap's readFromId), and the next pass
 * from the same watermark reads what is new and then what the cut pass left unread below its
 * oldest, without buying the cut pass's pages again: search bounds that second part with max_id:,
 * mentions with until_date (a day).
 */
import { describe, expect, it } from 'vitest';
import { failSlice, runSlice } from '../../src/jobs/slice-runner.ts';
import { runWatchTick } from '../../src/jobs/watch.ts';
import { msOfId } from '../../src/jobs/time-slices.ts';
import { getWatchRow } from '../../src/store/watches.ts';
import { jobTweetIds, useHarness, type Harness } from '../helpers/harness.ts';
import { runnerDeps, withSearch } from '../helpers/slice-runner.ts';
import { expectedSearchIds } from './ground-truth.ts';

const DAY_MS = 24 * 3600 * 1000;
const newestFirst = (ids: readonly string[]) => [...ids].sort((a, b) => (BigInt(b) > BigInt(a) ? 1 : -1));

/**
 * A handle with 100+ mentions since `since` whose 60 newest (a first pass cut after 3 pages) span
 * more than until_date's two days, so a resume saves pages, with mentions that neither a resume's
 * first page (the newest 20) nor its second part reads again (from the 26th newest); its mentions
 * newest first.
 */
function spreadHandle(h: Harness, since: string) {
  const w = h.sim.world;
  return w.users
    .filter((u) => !u.protected && !u.suspended && !u.deleted)
    .map((u) => ({ u, ids: newestFirst(expectedSearchIds(w, `@${u.username} since:${since}`)) }))
    .filter(({ ids }) => ids.length >= 100 && untilBelow(ids[59]!) <= msOfId(ids[25]!))
    .sort((a, b) => a.ids.length - b.ids.length)[0]!;
}

/** A one-shot first mentions pass cut short after 3 pages (every walk's third page repeats its cursor): its job. */
async function cutFirstPass(h: Harness, handle: string, since: string, filters: Record<string, number> = {}): Promise<string> {
  h.sim.control.setFaults({ repeatCursorAfterPages: 2 });
  const first = await h.submit({ kind: 'mentions', params: { handle, since, ...filters } });
  expect((await h.runUntil(first, { timeoutMs: 60_000 })).status).toBe('completed');
  h.sim.control.setFaults({ repeatCursorAfterPages: null });
  return first;
}
/** The until_date a resuming mentions pass asks for below a cut pass's oldest: two UTC days on. */
const untilBelow = (oldest: string) => (Math.floor(msOfId(oldest) / DAY_MS) + 2) * DAY_MS;

describe('a pass after one cut short reads only what the cut pass did not', () => {
  const h = useHarness();
  const calls = (path: string) => h.sim.control.requestLog().filter((r) => r.path === path).length;
  const author = () => h.sim.world.users.find((u) => !u.protected && !u.suspended && !u.deleted)!;

  /** 100 tweets of `word` and a search watch of it whose first pass was cut after 3 of 5 pages. */
  async function cutSearchWatch(word: string): Promise<{ jobId: string; old: string[] }> {
    const old = h.sim.control.addTweets(Array.from({ length: 100 }, (_, i) => ({ authorHandle: author().username, text: `${word} ${i}` })));
    h.sim.control.setFaults({ repeatCursorAfterPages: 2 });
    const jobId = await h.submit({ kind: 'search', params: { query: word, everySeconds: 600 } });
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    h.sim.control.setFaults({ repeatCursorAfterPages: null });
    return { jobId, old };
  }

  it('search --every: the first pass cut after 3 of 5 pages; the next buys the new page and the 2 unread', async () => {
    const word = 'wombatresume';
    const old = h.sim.control.addTweets(Array.from({ length: 100 }, (_, i) => ({ authorHandle: author().username, text: `${word} ${i}` })));
    // Every walk's third page hands back the cursor it got: the first pass ends there, cut short.
    h.sim.control.setFaults({ repeatCursorAfterPages: 2 });
    const jobId = await h.submit({ kind: 'search', params: { query: word, everySeconds: 600 } });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    h.sim.control.setFaults({ repeatCursorAfterPages: null });
    const cut = (await getWatchRow(h.services.pool, jobId))!;
    const read = newestFirst(old).slice(0, 60);
    expect(cut.highWatermarkId).toBeNull();
    expect(cut.gaps).toEqual([expect.objectContaining({ reason: 'repeated-cursor', beforeId: read.at(-1), readFromId: read[0] })]);

    const added = h.sim.control.addTweets(Array.from({ length: 10 }, (_, i) => ({ authorHandle: author().username, text: `new ${word} ${i}` })));
    const before = calls('/v3/search-tweets');
    await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    // One page above the cut pass's newest (10 new), two below its oldest (40): not 6 pages again.
    expect(calls('/v3/search-tweets') - before).toBe(3);
    expect(await jobTweetIds(h, jobId)).toEqual(expectedSearchIds(h.sim.world, word));
    expect(await jobTweetIds(h, jobId)).toEqual([...old, ...added].sort());
    const after = (await getWatchRow(h.services.pool, jobId))!;
    expect(after.gaps).toEqual([]);
    expect(after.highWatermarkId).toBe(newestFirst(added)[0]);

    // The pass after that is an ordinary one: nothing new, one request.
    const idle = calls('/v3/search-tweets');
    await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    expect(calls('/v3/search-tweets') - idle).toBe(1);
  });

  it('search --every from a watermark: a later pass cut short is resumed with since_id: and max_id:', async () => {
    const word = 'bilbyresume';
    const jobId = await h.submit({ kind: 'search', params: { query: word, everySeconds: 600 } });
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    const seed = h.sim.control.addTweets([{ authorHandle: author().username, text: `${word} seed` }]);
    await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    expect((await getWatchRow(h.services.pool, jobId))!.highWatermarkId).toBe(seed[0]);
    const old = h.sim.control.addTweets(Array.from({ length: 100 }, (_, i) => ({ authorHandle: author().username, text: `${word} ${i}` })));
    h.sim.control.setFaults({ repeatCursorAfterPages: 2 });
    await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    h.sim.control.setFaults({ repeatCursorAfterPages: null });
    const cut = (await getWatchRow(h.services.pool, jobId))!;
    expect(cut.highWatermarkId).toBe(seed[0]);
    expect(cut.gaps).toEqual([expect.objectContaining({ afterId: seed[0], beforeId: newestFirst(old)[59], readFromId: newestFirst(old)[0] })]);

    const added = h.sim.control.addTweets(Array.from({ length: 30 }, (_, i) => ({ authorHandle: author().username, text: `new ${word} ${i}` })));
    const before = calls('/v3/search-tweets');
    await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    // Two pages above (30 new), two below (40 between the watermark and the cut pass's oldest).
    expect(calls('/v3/search-tweets') - before).toBe(4);
    expect(await jobTweetIds(h, jobId)).toEqual([...seed, ...old, ...added].sort());
    expect((await getWatchRow(h.services.pool, jobId))!).toMatchObject({ gaps: [], highWatermarkId: newestFirst(added)[0] });
  });

  it('a resuming search pass the service answers all empty (an outage) does not skip the cut pass\'s range', async () => {
    const { jobId, old } = await cutSearchWatch('numbatresume');
    // The next pass meets an outage: both of its parts answer one empty page without a cursor.
    h.sim.control.setFaults({ emptyEndRate: 1 });
    await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    h.sim.control.setFaults({ emptyEndRate: 0 });
    // It read nothing: the watch is as the cut pass left it, watermark and gap (the 40 below it unread).
    const afterOutage = (await getWatchRow(h.services.pool, jobId))!;
    expect(afterOutage.highWatermarkId).toBeNull();
    expect(afterOutage.gaps).toEqual([expect.objectContaining({ reason: 'repeated-cursor', readFromId: newestFirst(old)[0] })]);
    // So the healthy pass after it still resumes: an empty page above, two below.
    const before = calls('/v3/search-tweets');
    await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    await h.runUntil(jobId, { until: ['scheduled', 'failed'] });
    expect(calls('/v3/search-tweets') - before).toBe(3);
    expect(await jobTweetIds(h, jobId)).toEqual([...old].sort());
    expect((await getWatchRow(h.services.pool, jobId))!.gaps).toEqual([]);
    expect((await getWatchRow(h.services.pool, jobId))!.highWatermarkId).toBe(newestFirst(old)[0]);
  });

  it('empty pages at the end of a resuming pass\'s first part and the start of its second do not end the walk at three', async () => {
    const { jobId, old } = await cutSearchWatch('quokkaresume');
    // The next pass: its first part finds nothing new (one empty page, the service's end), and the
    // service opens its second part (max_id:) with two empty pages that carry a cursor: three
    // empty pages in a row, across the two parts. The walk ended there, with the 40 below unread.
    await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    const { rows } = await h.services.pool.query<{ id: string }>(
      `SELECT id::text FROM job_slices WHERE job_id = $1::bigint AND status = 'pending' ORDER BY id DESC LIMIT 1`,
      [jobId],
    );
    let emptyOpenings = 0;
    const client = withSearch(h.services.client, (real) => async (params, options) => {
      if (!params.query.includes('max_id:')) return real(params, options);
      // The second empty page's cursor leads to the service's own first page of the part.
      if (params.cursor === 'empty-2') return real({ query: params.query, order: params.order }, options);
      if (emptyOpenings === 2) return real(params, options);
      emptyOpenings += 1;
      return { items: [], nextCursor: `empty-${emptyOpenings}`, quarantined: [] };
    });
    expect(await runSlice(rows[0]!.id, runnerDeps(h.services, { client }))).toEqual({ kind: 'done' });
    expect(emptyOpenings).toBe(2);
    expect(await jobTweetIds(h, jobId)).toEqual([...old].sort());
    expect((await getWatchRow(h.services.pool, jobId))!).toMatchObject({ gaps: [], highWatermarkId: newestFirst(old)[0] });
  });

  it('mentions: the next pass reads the new mentions, then from two days after the cut pass\'s oldest down', async () => {
    const since = '2026-09-01';
    const target = spreadHandle(h, since);
    const handle = target.u.username;
    const first = await cutFirstPass(h, handle, since);
    const cut = (await getWatchRow(h.services.pool, first))!;
    expect(cut.gaps).toEqual([expect.objectContaining({ beforeId: target.ids[59], readFromId: target.ids[0] })]);

    const added = h.sim.control.addTweets(Array.from({ length: 5 }, (_, i) => ({ authorHandle: author().username, text: `hi @${handle} ${i}` })));
    const before = calls('/v3/mentions');
    const next = await h.submit({ kind: 'mentions', params: { handle } });
    expect((await h.runUntil(next, { timeoutMs: 60_000 })).status).toBe('completed');
    const spent = calls('/v3/mentions') - before;
    // Below: the mentions before until_date (the cut pass's oldest's day and the next read again).
    const below = target.ids.filter((id) => msOfId(id) < untilBelow(target.ids[59]!)).length;
    expect(spent).toBeLessThanOrEqual(1 + Math.ceil(below / 20) + 1);
    expect(spent).toBeLessThan(Math.ceil((target.ids.length + 5) / 20));
    const stored = new Set([...(await jobTweetIds(h, first)), ...(await jobTweetIds(h, next))]);
    expect([...target.ids, ...added].filter((id) => !stored.has(id))).toEqual([]);
    const after = (await getWatchRow(h.services.pool, next))!;
    expect(after.gaps).toEqual([]);
    expect(after.highWatermarkId).toBe(newestFirst(added)[0]);
  });

  it('a one-shot pass its --max-requests stopped is recorded cut: the next pass goes on below it, not from the top again', async () => {
    const since = '2026-09-01';
    const target = spreadHandle(h, since);
    const handle = target.u.username;
    const before = calls('/v3/mentions');
    const first = await h.submit({ kind: 'mentions', params: { handle, since, minRetweets: 0 }, maxRequests: 3 });
    expect((await h.runUntil(first, { timeoutMs: 60_000 })).status).toBe('completed');
    expect(calls('/v3/mentions') - before).toBe(3);
    const cut = (await getWatchRow(h.services.pool, first))!;
    // It read the first 60: recorded as a pass cut short there (it was no pass at all, so the next
    // one bought the same three pages again, and a budget at a time never got further).
    expect(cut.passes).toBe(1);
    expect(cut.gaps).toEqual([expect.objectContaining({ beforeId: target.ids[59], readFromId: target.ids[0], reason: 'budget' })]);
    const spentBefore = calls('/v3/mentions');
    const next = await h.submit({ kind: 'mentions', params: { handle, minRetweets: 0 } });
    expect((await h.runUntil(next, { timeoutMs: 60_000 })).status).toBe('completed');
    const stored = new Set([...(await jobTweetIds(h, first)), ...(await jobTweetIds(h, next))]);
    expect(target.ids.filter((id) => !stored.has(id))).toEqual([]);
    // The next pass did not start from the top: one page above, then below the cut pass's oldest
    // (until_date: its day and the next read again), as after any cut pass.
    const below = target.ids.filter((id) => msOfId(id) < untilBelow(target.ids[59]!)).length;
    expect(calls('/v3/mentions') - spentBefore).toBeLessThanOrEqual(1 + Math.ceil(below / 20) + 1);
  });

  it('a schedule resuming a one-shot pass that was cut holds what that pass read, linked from its job', async () => {
    const since = '2026-09-01';
    const target = spreadHandle(h, since);
    // (--min-replies 0: an identity of its own)
    const oneShot = await cutFirstPass(h, target.u.username, since, { minReplies: 0 });
    // (no --since: with it, a schedule backfills [since, now) itself)
    const scheduled = await h.submit({ kind: 'mentions', params: { handle: target.u.username, minReplies: 0, everySeconds: 600 } });
    const { rows: pass } = await h.services.pool.query<{ params: Record<string, unknown> }>("SELECT params FROM job_slices WHERE job_id = $1 AND params ? 'pass'", [scheduled]);
    expect(pass[0]!.params).toMatchObject({ resumeFromId: target.ids[0], resumeBelowId: target.ids[59] });
    expect((await h.runUntil(scheduled, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    // Its first pass skipped the 60 the one-shot pass read (a resume), and holds them all the same.
    expect((await jobTweetIds(h, oneShot)).length).toBeGreaterThanOrEqual(60);
    const held = new Set(await jobTweetIds(h, scheduled));
    expect(target.ids.filter((id) => !held.has(id))).toEqual([]);
    const { rows } = await h.services.pool.query<{ tweets: number; users: number; linked: number; authors: number }>(
      `SELECT j.tweets::int, j.users::int, (SELECT count(*)::int FROM job_tweets WHERE job_id = j.id) AS linked,
              (SELECT count(DISTINCT user_id)::int FROM job_users WHERE job_id = j.id) AS authors
         FROM jobs j WHERE j.id = $1`,
      [scheduled],
    );
    expect(rows[0]!.tweets).toBe(rows[0]!.linked);
    expect(rows[0]!.users).toBe(rows[0]!.authors);
  });

  it('a resuming pass cut again before it got below the earlier read range keeps that range on record', async () => {
    const target = h.sim.world.users.find((u) => !u.protected && !u.suspended && !u.deleted && h.sim.world.mentionsOf(u.index).length >= 3)!;
    // (--min-likes 0: an identity of its own)
    const first = await h.submit({ kind: 'mentions', params: { handle: target.username, since: '2026-09-01', minLikes: 0 } });
    expect((await h.runUntil(first, { timeoutMs: 60_000 })).status).toBe('completed');
    const watermark = (await getWatchRow(h.services.pool, first))!.highWatermarkId!;
    // Ids 1 ms, 2 days and 3 days above the watermark: the read range spans a day's end (until_date helps).
    const [low, high, newer] = [1, 2 * DAY_MS, 3 * DAY_MS].map((ms) => (BigInt(watermark) + (BigInt(ms) << 22n)).toString());
    // A pass that read [low, high] above the watermark and then failed.
    const cutOnce = await h.submit({ kind: 'mentions', params: { handle: target.username, minLikes: 0 } });
    const sliceOf = async (jobId: string) =>
      (await h.services.pool.query<{ id: string; params: Record<string, unknown> }>("SELECT id::text, params FROM job_slices WHERE job_id = $1 AND params ? 'pass'", [jobId])).rows[0]!;
    const cutSlice = await sliceOf(cutOnce);
    await h.services.pool.query("UPDATE job_slices SET status = 'running', newest_tweet_id = $2, oldest_tweet_id = $3 WHERE id = $1", [cutSlice.id, high, low]);
    await failSlice(h.services.pool, cutSlice.id, new Error('gave up'));
    expect((await getWatchRow(h.services.pool, cutOnce))!.gaps).toEqual([expect.objectContaining({ afterId: watermark, beforeId: low, readFromId: high })]);

    // The next pass is planned to resume; it reads one page of newer mentions and fails too.
    const cutTwice = await h.submit({ kind: 'mentions', params: { handle: target.username, minLikes: 0 } });
    const resumed = await sliceOf(cutTwice);
    expect(resumed.params).toMatchObject({ watermarkId: watermark, resumeFromId: high, resumeBelowId: low });
    await h.services.pool.query("UPDATE job_slices SET status = 'running', newest_tweet_id = $2, oldest_tweet_id = $3 WHERE id = $1", [resumed.id, newer, newer]);
    await failSlice(h.services.pool, resumed.id, new Error('gave up'));
    // [low, high] is still read; only the few pages above it are read again next time.
    expect((await getWatchRow(h.services.pool, cutTwice))!.gaps).toEqual([expect.objectContaining({ afterId: watermark, beforeId: low, readFromId: high })]);
  });
});

describe('a resuming mentions pass whose first part the service ends early', () => {
  // 2 requests a second: an outage switched on after a pass's first page lands before its second.
  const h = useHarness({ rate: 2 });
  const mentionRequests = () => h.sim.control.requestLog().filter((r) => r.path === '/v3/mentions').length;

  it('ends the walk there and cuts the pass short, instead of going below and skipping the rest above', async () => {
    const w = h.sim.world;
    const since = '2026-09-01';
    const target = spreadHandle(h, since);
    const handle = target.u.username;
    const first = await cutFirstPass(h, handle, since);
    const author = w.users.find((u) => !u.protected && !u.suspended && !u.deleted && u.index !== target.u.index)!;
    const added = h.sim.control.addTweets(Array.from({ length: 30 }, (_, i) => ({ authorHandle: author.username, text: `early end @${handle} ${i}` })));

    // The resuming pass's first page is served; then the service answers empty without a cursor.
    const before = mentionRequests();
    const next = await h.submit({ kind: 'mentions', params: { handle } });
    const running = h.runUntil(next, { timeoutMs: 60_000 });
    while (mentionRequests() === before) await new Promise((r) => setTimeout(r, 2));
    h.sim.control.setFaults({ emptyEndRate: 1 });
    expect((await running.finally(() => h.sim.control.setFaults({ emptyEndRate: 0 }))).status).toBe('completed');
    const cut = (await getWatchRow(h.services.pool, next))!;
    // Cut short, nothing moved: the 10 oldest new mentions, between its first page and the cut
    // pass's newest, stay above the watermark (still null: a first pass) for the next pass to read.
    expect(mentionRequests() - before).toBe(2);
    expect(cut.highWatermarkId).toBeNull();
    expect(cut.gaps).toEqual([expect.objectContaining({ reason: 'empty-end', beforeId: target.ids[59], readFromId: target.ids[0] })]);

    const healthy = await h.submit({ kind: 'mentions', params: { handle } });
    expect((await h.runUntil(healthy, { timeoutMs: 60_000 })).status).toBe('completed');
    const stored = new Set([...(await jobTweetIds(h, first)), ...(await jobTweetIds(h, next)), ...(await jobTweetIds(h, healthy))]);
    expect([...target.ids, ...added].filter((id) => !stored.has(id))).toEqual([]);
    expect((await getWatchRow(h.services.pool, healthy))!).toMatchObject({ gaps: [], highWatermarkId: newestFirst(added)[0] });
  });
});
