/**
 * `harvest refresh`: re-reads a job's tweets from the simulator over HTTP, 100 per request, and
 * adds a tweet_metrics row only where a count changed. The simulator's counts change through its
 * own control route (a reply posted with POST /_sim/tweets adds one to its target's replies).
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { RefreshJobParams, runRefreshTick, submitRefresh } from '../../src/jobs/kinds/refresh.ts';
import { refreshSpend } from '../../src/cli/commands/refresh.ts';
import type { World } from '../../src/simulator/model.ts';
import { sqlState } from '../../src/store/db.ts';
import { setJobControl } from '../../src/store/job-control.ts';
import { jobSnapshot } from '../../src/store/job-status.ts';
import { startRefreshPass } from '../../src/store/refresh.ts';
import { runCli } from '../helpers/cli.ts';
import { jobTweetIds, useHarness, type Harness } from '../helpers/harness.ts';

const visible = (w: World, i: number) => {
  const u = w.users[i]!;
  return !u.protected && !u.suspended && !u.deleted;
};
const byId = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);
/** A tweet id the simulator never served: a tweet the source job stored that has since been deleted. */
const DELETED_ID = '1999999999999999999';

const bulkRequests = (h: Harness) => h.sim.control.requestLog().filter((r) => r.path.includes('tweet-info-bulk')).length;

async function metricsRows(h: Harness): Promise<Map<string, number>> {
  const { rows } = await h.services.pool.query<{ id: string; n: number }>(
    'SELECT tweet_id::text AS id, count(*)::int AS n FROM tweet_metrics GROUP BY tweet_id',
  );
  return new Map(rows.map((r) => [r.id, r.n]));
}

/** Tweet ids whose number of metrics rows grew between two snapshots. */
function grew(before: Map<string, number>, after: Map<string, number>): string[] {
  return [...after].filter(([id, n]) => n > (before.get(id) ?? 0)).map(([id]) => id).sort(byId);
}

async function postTweets(h: Harness, tweets: unknown[]): Promise<string[]> {
  const res = await fetch(`${h.sim.url}/_sim/tweets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tweets }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { ids: string[] }).ids;
}

async function requestsSpent(h: Harness, jobId: string): Promise<number> {
  const { rows } = await h.services.pool.query<{ n: number }>('SELECT requests_spent::int AS n FROM jobs WHERE id = $1::bigint', [jobId]);
  return rows[0]!.n;
}

/** The docs/sql.md query that charts a tweet's likes, with its example id replaced. */
async function likesChartSql(): Promise<string> {
  const doc = await readFile(new URL('../../docs/sql.md', import.meta.url), 'utf8');
  const m = /^## \d+\. Likes of one tweet over time[^\n]*\n\n```sql\n([\s\S]*?)```/m.exec(doc);
  if (!m) throw new Error('docs/sql.md has no "Likes of one tweet over time" query');
  return m[1]!;
}

describe('harvest refresh', () => {
  const h = useHarness();
  let source = '';
  const ids: string[] = [];

  it('a hydrate job stores 250 tweets (the source job); a deleted one is among its tweets', async () => {
    const w = h.sim.world;
    for (let i = 0; i < w.tweets.count && ids.length < 250; i += 7) if (visible(w, w.tweets.author(i))) ids.push(w.tweets.idString(i));
    source = await h.submit({ kind: 'hydrate', params: { ids } });
    expect((await h.runUntil(source)).status).toBe('completed');
    ids.sort(byId);
    expect(await jobTweetIds(h, source)).toEqual(ids);
    // A tweet the job once stored and the service no longer returns.
    await h.services.pool.query(
      `INSERT INTO tweets (id, full_text, created_at, like_count, source, raw) VALUES ($1::bigint, 'gone', now(), 3, 'v3', '{}')`,
      [DELETED_ID],
    );
    await h.services.pool.query('INSERT INTO job_tweets (job_id, tweet_id) VALUES ($1::bigint, $2::bigint)', [source, DELETED_ID]);
  });

  it('--estimate counts ceil(n/100) requests from Postgres: no request, nothing queued', async () => {
    const before = bulkRequests(h);
    const jobs = await h.services.pool.query('SELECT 1 FROM jobs');
    const run = await runCli(['refresh', source, '--estimate'], h.env);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/tweets\s+251\b/);
    expect(run.out).toMatch(/requests\s+3\b/);
    expect(bulkRequests(h)).toBe(before);
    expect((await h.services.pool.query('SELECT 1 FROM jobs')).rowCount).toBe(jobs.rowCount);
  });

  it('adds a metrics row only for the tweets whose counts changed, in exactly ceil(n/100) requests', async () => {
    const w = h.sim.world;
    const replier = w.users.find((u) => visible(w, u.index))!.username;
    const [repliedA, repliedB, liked] = [ids[3]!, ids[140]!, ids[201]!];
    // The simulator's counts move: one reply each to two tweets.
    await postTweets(h, [
      { authorHandle: replier, text: 'a reply', inReplyToId: repliedA },
      { authorHandle: replier, text: 'another reply', inReplyToId: repliedB },
    ]);
    // And the stored observation of a third is five likes behind, three hours ago (the chart below).
    await h.services.pool.query(
      `WITH t AS (UPDATE tweets SET like_count = like_count - 5 WHERE id = $1::bigint RETURNING id)
       UPDATE tweet_metrics m SET like_count = m.like_count - 5, observed_at = m.observed_at - interval '3 hours'
         FROM t WHERE m.tweet_id = t.id`,
      [liked],
    );
    const { rows: likedRows } = await h.services.pool.query<{ likes: string }>('SELECT like_count::text AS likes FROM tweets WHERE id = $1::bigint', [liked]);
    const storedLikes = Number(likedRows[0]!.likes);

    const before = await metricsRows(h);
    const requests = bulkRequests(h);
    const run = await runCli(['refresh', source, '--wait'], h.env);
    expect(run.code, run.err).toBe(0);
    const refreshJob = run.out.split('\n')[0]!;
    expect(refreshJob).toMatch(/^\d+$/);

    expect(bulkRequests(h) - requests).toBe(3);
    expect(await requestsSpent(h, refreshJob)).toBe(3);
    expect(grew(before, await metricsRows(h))).toEqual([repliedA, repliedB, liked].sort(byId));
    const { rows: replies } = await h.services.pool.query<{ id: string; n: string }>(
      `SELECT DISTINCT ON (tweet_id) tweet_id::text AS id, reply_count::text AS n FROM tweet_metrics
        WHERE tweet_id = ANY($1::bigint[]) ORDER BY tweet_id, observed_at DESC`,
      [[repliedA, repliedB]],
    );
    for (const r of replies) expect(Number(r.n)).toBe(w.tweets.replies(w.tweets.indexOfId(BigInt(r.id))));

    // Provenance: the refreshed tweets are the refresh job's too; the deleted one is noted, not an error.
    expect(await jobTweetIds(h, refreshJob)).toEqual(ids);
    const snap = await jobSnapshot(h.services.pool, refreshJob);
    expect(snap?.status).toBe('completed');
    expect(snap?.note).toMatch(/1 of \d+ ids not returned/);

    // The docs/sql.md chart: five likes fewer for the three hours before the refresh, then the new count.
    const chart = (await likesChartSql()).replace(/1800000000000000001/g, liked);
    const { rows: points } = await h.services.pool.query<{ hour: Date; likes: string }>(chart);
    expect(points.length).toBeGreaterThanOrEqual(4);
    expect(Number(points[0]!.likes)).toBe(storedLikes);
    expect(Number(points.at(-1)!.likes)).toBe(storedLikes + 5);
  });

  it('a second refresh with nothing changed adds no row (and still spends ceil(n/100) requests)', async () => {
    const before = await metricsRows(h);
    const requests = bulkRequests(h);
    const run = await runCli(['refresh', source, '--wait'], h.env);
    expect(run.code, run.err).toBe(0);
    expect(bulkRequests(h) - requests).toBe(3);
    expect(grew(before, await metricsRows(h))).toEqual([]);
  });

  it('a tweet a refresh did not get back is not asked for again until it is seen again', async () => {
    // A source of 100 tweets the service returns and one it no longer does: 101 ids, 2 requests.
    const w = h.sim.world;
    const taken = new Set(ids);
    const more: string[] = [];
    for (let i = 3; i < w.tweets.count && more.length < 100; i += 7) {
      const id = w.tweets.idString(i);
      if (!taken.has(id) && visible(w, w.tweets.author(i))) more.push(id);
    }
    const other = await h.submit({ kind: 'hydrate', params: { ids: more } });
    expect((await h.runUntil(other)).status).toBe('completed');
    const gone = '1999999999999999998';
    await h.services.pool.query(
      `INSERT INTO tweets (id, full_text, created_at, like_count, source, raw, last_seen_at) VALUES ($1::bigint, 'gone', now(), 3, 'v3', '{}', now() - interval '1 day')`,
      [gone],
    );
    await h.services.pool.query('INSERT INTO job_tweets (job_id, tweet_id) VALUES ($1::bigint, $2::bigint)', [other, gone]);
    let requests = bulkRequests(h);
    expect((await runCli(['refresh', other, '--wait'], h.env)).code).toBe(0);
    expect(bulkRequests(h) - requests).toBe(2);
    const { rows } = await h.services.pool.query<{ stamped: boolean }>('SELECT not_returned_at IS NOT NULL AS stamped FROM tweets WHERE id = $1::bigint', [gone]);
    expect(rows[0]!.stamped).toBe(true);
    // The next refresh asks for the 100 only: one request (it paid a slot for the gone one on every pass).
    expect((await runCli(['refresh', other, '--estimate'], h.env)).out).toMatch(/tweets\s+100\b/);
    requests = bulkRequests(h);
    expect((await runCli(['refresh', other, '--wait'], h.env)).code).toBe(0);
    expect(bulkRequests(h) - requests).toBe(1);
    // Seen again (another job stored it since): asked for again.
    await h.services.pool.query(`UPDATE tweets SET last_seen_at = now() + interval '1 second' WHERE id = $1::bigint`, [gone]);
    expect((await runCli(['refresh', other, '--estimate'], h.env)).out).toMatch(/tweets\s+101\b/);
  });

  it('--older-than selects only tweets first stored at least that long ago', async () => {
    const old = ids.slice(0, 120);
    await h.services.pool.query(`UPDATE tweets SET first_seen_at = now() - interval '2 days' WHERE id = ANY($1::bigint[])`, [old]);
    const estimate = await runCli(['refresh', source, '--older-than', '24h', '--estimate'], h.env);
    expect(estimate.out).toMatch(/tweets\s+120\b/);
    expect(estimate.out).toMatch(/requests\s+2\b/);
    const requests = bulkRequests(h);
    const run = await runCli(['refresh', source, '--older-than', '1d', '--wait'], h.env);
    expect(run.code, run.err).toBe(0);
    expect(bulkRequests(h) - requests).toBe(2);
    expect(await jobTweetIds(h, run.out.split('\n')[0]!)).toEqual(old);
  });

  it('--max-requests is an exact budget', async () => {
    const requests = bulkRequests(h);
    const run = await runCli(['refresh', source, '--max-requests', '1', '--wait'], h.env);
    expect(run.code, run.err).toBe(0);
    expect(bulkRequests(h) - requests).toBe(1);
    expect(await requestsSpent(h, run.out.split('\n')[0]!)).toBe(1);
  });

  it('refuses bad input and unknown jobs, enqueueing nothing', async () => {
    const jobs = (await h.services.pool.query('SELECT 1 FROM jobs')).rowCount;
    const cases: Array<[string[], RegExp]> = [
      [['refresh', 'abc'], /<job-id>: expected a job id/],
      [['refresh', '987654321'], /no job 987654321/],
      [['refresh', source, '--older-than', 'soon'], /--older-than: expected a duration/],
      [['refresh', source, '--every', '6h'], /--every: needs --for/],
      [['refresh', source, '--for', '7d'], /--for: needs --every/],
      [['refresh', source, '--every', '10s', '--for', '7d'], /--every: expected at least 1m/],
      // A tweet stored 10 days ago was posted at least 10 days ago: never younger than 7 days.
      [['refresh', source, '--older-than', '10d', '--every', '6h', '--for', '7d'], /--older-than: must be shorter than --for/],
    ];
    for (const [argv, message] of cases) {
      const run = await runCli(argv, h.env);
      expect(run.code, argv.join(' ')).not.toBe(0);
      expect(run.err).toMatch(message);
    }
    expect((await h.services.pool.query('SELECT 1 FROM jobs')).rowCount).toBe(jobs);
    expect(() => RefreshJobParams.parse({ sourceJobId: '1', everySeconds: 60 })).toThrow();
  });

  it('--every/--for keeps refreshing the young tweets every interval, then completes when none is young', async () => {
    const w = h.sim.world;
    const author = w.users.find((u) => visible(w, u.index))!.username;
    // Two tweets posted now (the world's own are weeks old), hydrated with 50 old ones.
    const fresh = (await postTweets(h, [
      { authorHandle: author, text: 'fresh one' },
      { authorHandle: author, text: 'fresh two' },
    ])).sort(byId);
    const mixed = await h.submit({ kind: 'hydrate', params: { ids: [...ids.slice(0, 50), ...fresh] } });
    expect((await h.runUntil(mixed)).status).toBe('completed');

    // The CLI takes --every of a minute or more; the job itself runs any interval.
    const { jobId } = await submitRefresh(
      { pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate },
      { params: { sourceJobId: mixed, everySeconds: 1, forSeconds: 6 } },
    );
    const snap = await h.runUntil(jobId, { timeoutMs: 30_000 });
    expect(snap.status).toBe('completed');
    expect(snap.note).toMatch(/young enough/);
    const { rows: slices } = await h.services.pool.query<{ ids: string[] }>(
      `SELECT ARRAY(SELECT jsonb_array_elements_text(params->'ids')) AS ids FROM job_slices WHERE job_id = $1::bigint ORDER BY id`,
      [jobId],
    );
    // Several passes, each one request over exactly the young tweets.
    expect(slices.length).toBeGreaterThanOrEqual(2);
    for (const s of slices) expect([...s.ids].sort(byId)).toEqual(fresh);
    expect(await requestsSpent(h, jobId)).toBe(slices.length);
    expect(await h.services.queues.hasWatchSchedule(jobId)).toBe(false);
  });

  it("a scheduled refresh's scheduler first ticks an interval after the first pass, not at once; a tick and a pause do not deadlock", async () => {
    const deps = { pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate };
    await h.services.queues.obliterate();
    // One young tweet of the source (the simulator's are all older than a week), so a pass starts
    // (RETURNING's subquery reads the row as it was: its old time, put back below).
    const { rows: was } = await h.services.pool.query<{ at: Date }>('UPDATE tweets SET created_at = now() WHERE id = $1::bigint RETURNING (SELECT created_at FROM tweets WHERE id = $1::bigint) AS at', [ids[0]]);
    const { jobId } = await submitRefresh(deps, { params: { sourceJobId: source, everySeconds: 3600, forSeconds: 7 * 86_400 } });
    await h.services.pool.query('UPDATE tweets SET created_at = $2 WHERE id = $1::bigint', [ids[0], was[0]!.at]);
    // The first pass is queued (backfill); the scheduler waits an hour for the second.
    const { watch } = await h.services.queues.counts();
    expect([watch.waiting, watch.prioritized, watch.delayed]).toEqual([0, 0, 1]);
    await h.services.queues.obliterate();

    // A tick selecting a large source job's tweets while a pause lands: one lock order.
    await h.services.pool.query(`UPDATE job_slices SET status = 'done' WHERE job_id = $1::bigint`, [jobId]);
    const errors: unknown[] = [];
    const tick = startRefreshPass(h.services.pool, jobId, {
      select: async (db) => {
        await new Promise((r) => setTimeout(r, 300));
        return (await db.query<{ id: string }>('SELECT tweet_id::text AS id FROM job_tweets WHERE job_id = $1::bigint LIMIT 5', [source])).rows.map((r) => r.id);
      },
      plan: (ids) => [{ kind: 'refresh', params: { ids } }],
      doneNote: 'done',
    }).catch((e: unknown) => void errors.push(e));
    await new Promise((r) => setTimeout(r, 100));
    const pause = setJobControl(h.services.pool, jobId, 'pause').catch((e: unknown) => void errors.push(e));
    await Promise.all([tick, pause]);
    expect(errors.map((e) => sqlState(e) ?? String(e))).toEqual([]);
    await setJobControl(h.services.pool, jobId, 'cancel');
  });

  it('--older-than with --every/--for: tweets stored too recently wait for a later pass, the refresh does not end', async () => {
    const w = h.sim.world;
    const author = w.users.find((u) => visible(w, u.index))!.username;
    const fresh = await postTweets(h, [{ authorHandle: author, text: 'stored just now' }]);
    const recent = await h.submit({ kind: 'hydrate', params: { ids: fresh } });
    expect((await h.runUntil(recent)).status).toBe('completed');
    const deps = { pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate };
    const params = { sourceJobId: recent, olderThanSeconds: 1800, everySeconds: 3600, forSeconds: 7 * 86_400 };
    const { jobId, slices } = await submitRefresh(deps, { params });
    expect(slices).toBe(0);
    expect((await jobSnapshot(h.services.pool, jobId))?.status).toBe('scheduled');
    expect(await h.services.queues.hasWatchSchedule(jobId)).toBe(true);
    // A tick now: still none old enough; nothing starts and nothing ends.
    expect(await runRefreshTick(jobId, deps)).toBeNull();
    expect((await jobSnapshot(h.services.pool, jobId))?.status).toBe('scheduled');
    expect(await h.services.queues.hasWatchSchedule(jobId)).toBe(true);
    // Half an hour on, the tweet is old enough: the pass reads it.
    expect(await runRefreshTick(jobId, deps, () => new Date(Date.now() + 31 * 60_000))).not.toBeNull();
    await setJobControl(h.services.pool, jobId, 'cancel');
    await h.services.queues.unscheduleWatch(jobId);
  });

  it('asks for --yes off a terminal when the refresh (a scheduled one: a month of passes) would spend more than HARVEST_CONFIRM_ABOVE', async () => {
    const jobs = (await h.services.pool.query('SELECT 1 FROM jobs')).rowCount;
    const before = bulkRequests(h);
    // The source's 250 tweets: 3 requests a pass.
    const small = { ...h.env, HARVEST_CONFIRM_ABOVE: '2' };
    const once = await runCli(['refresh', source], small);
    expect(once.code).not.toBe(0);
    expect(once.err).toMatch(/expected to spend ~3 requests .*add --yes/);
    const month = await runCli(['refresh', source, '--every', '6h', '--for', '3650d'], { ...h.env, HARVEST_CONFIRM_ABOVE: '100' });
    expect(month.code).not.toBe(0);
    expect(month.err).toMatch(/~360 requests \(a month: 120 passes, 3 requests a pass/);
    // A tweet is re-read until it is older than --for: two days of 6-hour passes is 8 of them.
    const days = refreshSpend({ sourceJobId: source, everySeconds: 6 * 3600, forSeconds: 2 * 86_400 }, { tweets: 250, requests: 3 }, false);
    expect(days).toEqual({ requests: 24, basis: '--for 2d00h: 8 passes, 3 requests a pass now (250 tweets)' });
    // A live watch keeps bringing young tweets: every pass stays about that size, a month of them.
    const growing = refreshSpend({ sourceJobId: source, everySeconds: 6 * 3600, forSeconds: 2 * 86_400 }, { tweets: 250, requests: 3 }, true);
    expect(growing.requests).toBe(360);
    expect((await h.services.pool.query('SELECT 1 FROM jobs')).rowCount).toBe(jobs);
    expect(bulkRequests(h)).toBe(before);

    // --yes, or a --max-requests within the threshold, queues it.
    for (const argv of [['refresh', source, '--yes'], ['refresh', source, '--max-requests', '2']]) {
      const run = await runCli(argv, small);
      expect(run.code, argv.join(' ')).toBe(0);
      const jobId = run.out.split('\n')[0]!;
      expect(jobId).toMatch(/^\d+$/);
      await runCli(['cancel', jobId], h.env);
    }
  });

  it('weighs a month of passes when its source is a live watch (young tweets keep coming)', async () => {
    const w = h.sim.world;
    const target = w.users.find((u) => !u.protected && !u.suspended && !u.deleted)!;
    const author = w.users.find((u) => !u.protected && !u.suspended && !u.deleted && u.index !== target.index)!;
    h.sim.control.addTweets(Array.from({ length: 5 }, (_, i) => ({ authorHandle: author.username, text: `@${target.username} fresh ${i}` })));
    const watch = await h.submit({ kind: 'mentions', params: { handle: target.username, everySeconds: 3600 } });
    expect((await h.runUntil(watch, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    const run = await runCli(['refresh', watch, '--every', '6h', '--for', '2d'], { ...h.env, HARVEST_CONFIRM_ABOVE: '10' });
    expect(run.code).not.toBe(0);
    expect(run.err).toMatch(/~120 requests \(a month: 120 passes, 1 requests a pass now/);
    await runCli(['cancel', watch], h.env);
  });

  it('a scheduled refresh of a live watch that holds no young tweet yet waits for it, and ends only once the watch has ended', { timeout: 60_000 }, async () => {
    const w = h.sim.world;
    const [target, author] = w.users.filter((u) => visible(w, u.index)).slice(3, 5);
    const deps = { pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate };
    // A mention watch, just created: its first pass has not run, it holds no tweet.
    const watch = await h.submit({ kind: 'mentions', params: { handle: target!.username, everySeconds: 3600 } });
    const run = await runCli(['refresh', watch, '--every', '6h', '--for', '2d', '--yes'], h.env);
    expect(run.code, run.err).toBe(0);
    const jobId = run.out.split('\n')[0]!;
    expect((await jobSnapshot(h.services.pool, jobId))?.status).toBe('scheduled');
    expect(await h.services.queues.hasWatchSchedule(jobId)).toBe(true);

    // The watch's first pass brings young mentions: the refresh's next tick reads them.
    h.sim.control.addTweets(Array.from({ length: 5 }, (_, i) => ({ authorHandle: author!.username, text: `@${target!.username} young ${i}` })));
    expect((await h.runUntil(watch, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    const young = await jobTweetIds(h, watch);
    expect(young.length).toBeGreaterThan(0);
    expect(await runRefreshTick(jobId, deps)).not.toBeNull();
    await h.services.pool.query(`UPDATE job_slices SET status = 'done' WHERE job_id = $1::bigint`, [jobId]);

    // Three days on the watch has been quiet for --for, but it still runs: the refresh waits.
    const later = () => new Date(Date.now() + 3 * 86_400_000);
    expect(await runRefreshTick(jobId, deps, later)).toBeNull();
    expect((await jobSnapshot(h.services.pool, jobId))?.status).not.toBe('completed');
    expect(await h.services.queues.hasWatchSchedule(jobId)).toBe(true);

    // The watch ended and nothing is young any more: the refresh completes.
    expect((await runCli(['cancel', watch], h.env)).code).toBe(0);
    expect(await runRefreshTick(jobId, deps, later)).toBeNull();
    const snap = await jobSnapshot(h.services.pool, jobId);
    expect(snap?.status).toBe('completed');
    expect(snap?.note).toMatch(/young enough/);
    expect(await h.services.queues.hasWatchSchedule(jobId)).toBe(false);
  });

  it('a refresh that ends at submit (nothing to re-read) says so, not "queued" with the worker hint', async () => {
    const w = h.sim.world;
    const author = w.users.find((u) => visible(w, u.index))!.username;
    const recent = await h.submit({ kind: 'hydrate', params: { ids: await postTweets(h, [{ authorHandle: author, text: 'stored a moment ago' }]) } });
    expect((await h.runUntil(recent)).status).toBe('completed');
    const run = await runCli(['refresh', recent, '--older-than', '30d', '--wait'], h.env);
    expect(run.code, run.err).toBe(0);
    const jobId = run.out.split('\n')[0]!;
    expect(run.err).toMatch(new RegExp(`^nothing to refresh: job ${jobId} completed \\(no tweet of the source job matched`));
    expect(run.err).not.toMatch(/queued|harvest worker/);
    expect((await jobSnapshot(h.services.pool, jobId))?.status).toBe('completed');
  });
});
