/**
 * A group-commit batch writes the tweets of ALL its jobs in one statement and their users in one
 * more, each in id order, and provenance in (job id, id) order. With one tweets and one users
 * statement per job, two batches in flight whose jobs share tweets and authors (overlapping
 * searches: "bitcoin" and "btc") took the shared rows in two orders and deadlocked; commitPages
 * retried them, so nothing was lost, but each cost a 1 s stall (deadlock_timeout) and the batch's
 * work again. Real Postgres, real commitPages, two batches at once on two connections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitPages, type PageCommit, type PageOutcome } from '../../src/store/commit-page.ts';
import { createPool, type Pool } from '../../src/store/db.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { idSequence, makeTweet, makeUser, newSlices } from './fixtures.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function deadlocksCounted(): Promise<number> {
  await db.pool.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await db.pool.query<{ n: string }>('SELECT deadlocks::text AS n FROM pg_stat_database WHERE datname = $1', [db.name]);
  return Number(rows[0]?.n ?? 0);
}

/** Deadlocks since `before`: a backend's counters reach pg_stat_database when it exits (or flushes), so wait a little for them. */
async function deadlocksSince(before: number): Promise<number> {
  let counted = 0;
  for (let wait = 0; wait < 10 && counted === 0; wait++) {
    counted = (await deadlocksCounted()) - before;
    if (counted === 0) await new Promise((r) => setTimeout(r, 100));
  }
  return counted;
}

type Job = { jobId: string; sliceIds: string[] };

const ROUNDS = 20;
const PER_PAGE = 20;
// Low tweet ids all below the high ones; authors likewise.
const lowId = idSequence('1810000000000000000');
const highId = idSequence('1850000000000000000');
const LOW_AUTHORS = ['1000', '1001', '1002'];
const HIGH_AUTHORS = ['9000', '9001', '9002'];

describe('one batch of two jobs sharing a tweet and its author', () => {
  it('writes the shared rows once (one history row) and counts them new to each job', async () => {
    const [a, b] = [await newSlices(db.pool, 1), await newSlices(db.pool, 1)];
    const author = makeUser('1700000000000000777', { followersCount: 10 });
    const shared = makeTweet(lowId(), author, { likeCount: 3 });
    const pageOf = (job: Job, tweets: PageCommit['tweets']): PageCommit => ({
      jobId: job.jobId, sliceId: job.sliceIds[0]!, expectedCursor: null, nextCursor: 'c1', sliceDone: false, tweets, users: [], emptyPage: false,
    });
    // b's page first: the batch orders its pages by job id itself.
    const outcomes = await commitPages(db.pool, [pageOf(b, [shared, makeTweet(lowId(), author)]), pageOf(a, [{ ...shared, likeCount: 4 }])]);
    expect(outcomes.map((o) => (o.ok ? { t: o.result.newTweets, u: o.result.newUsers } : o.error))).toEqual([{ t: 2, u: 1 }, { t: 1, u: 1 }]);
    const { rows } = await db.pool.query<{ likes: number; history: number; provenance: string[] }>(
      `SELECT t.like_count::int AS likes, (SELECT count(*)::int FROM tweet_metrics WHERE tweet_id = t.id) AS history,
          (SELECT array_agg(job_id::text ORDER BY job_id) FROM job_tweets WHERE tweet_id = t.id) AS provenance
         FROM tweets t WHERE t.id = $1::bigint`,
      [shared.id],
    );
    // Pages merge in job order: b's (the later job) count wins, as a later page's does.
    expect(rows[0]).toEqual({ likes: 3, history: 1, provenance: [a.jobId, b.jobId] });
  });
});

describe('two batches of two jobs sharing tweets and authors, committed at once', () => {
  it('never deadlock; every page lands once per job, each tweet and user new to a job counted once', { timeout: 120_000 }, async () => {
    const [a, b] = [await newSlices(db.pool, 4), await newSlices(db.pool, 4)];
    const cursors = new Map<string, string>();
    let n = 0;
    let followers = 0;
    // Authors' counts change on every sighting, so every batch writes (and locks) their rows.
    const page = (job: Job, k: number, ids: string[], authors: string[]): PageCommit => {
      const sliceId = job.sliceIds[k]!;
      const expectedCursor = cursors.get(sliceId) ?? null;
      const nextCursor = `c${++n}`;
      cursors.set(sliceId, nextCursor);
      const tweets = ids.map((id, i) => makeTweet(id, makeUser(authors[i % authors.length]!, { followersCount: ++followers })));
      return { jobId: job.jobId, sliceId, expectedCursor, nextCursor, sliceDone: false, tweets, users: [], emptyPage: false };
    };
    // Its own connections, ended before reading the count.
    const pool: Pool = createPool(db.url, { max: 4 });
    const before = await deadlocksCounted();
    const outcomes: Array<{ job: Job; outcome: PageOutcome }> = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const low = Array.from({ length: 2 * PER_PAGE }, () => lowId());
        const high = Array.from({ length: 2 * PER_PAGE }, () => highId());
        const half = (ids: string[], h: number) => ids.slice(h * PER_PAGE, (h + 1) * PER_PAGE);
        // Batch one: job a found the high tweets, job b the low ones; batch two the other way round.
        // Per job, one statement each, batch one locked high then low, batch two low then high.
        const one = [0, 1].flatMap((h) => [page(a, h, half(high, h), HIGH_AUTHORS), page(b, h, half(low, h), LOW_AUTHORS)]);
        const two = [0, 1].flatMap((h) => [page(a, 2 + h, half(low, h), LOW_AUTHORS), page(b, 2 + h, half(high, h), HIGH_AUTHORS)]);
        const [first, second] = await Promise.all([commitPages(pool, one), commitPages(pool, two)]);
        first.forEach((outcome, i) => outcomes.push({ job: i % 2 === 0 ? a : b, outcome }));
        second.forEach((outcome, i) => outcomes.push({ job: i % 2 === 0 ? a : b, outcome }));
      }
    } finally {
      await pool.end();
    }
    expect(outcomes.filter((o) => !o.outcome.ok)).toEqual([]);
    expect(await deadlocksSince(before)).toBe(0);

    for (const job of [a, b]) {
      const mine = outcomes.flatMap(({ job: j, outcome }) => (j === job && outcome.ok ? [outcome.result] : []));
      // Each page's 20 tweets reach its job through that page alone.
      expect(mine.map((r) => r.newTweets)).toEqual(mine.map(() => PER_PAGE));
      expect(mine.reduce((sum, r) => sum + r.newUsers, 0)).toBe(LOW_AUTHORS.length + HIGH_AUTHORS.length);
      const { rows } = await db.pool.query<{ pages: number; tweets: number; users: number; jt: number; ju: number; slices: number[] }>(
        `SELECT j.pages::int, j.tweets::int, j.users::int,
            (SELECT count(*)::int FROM job_tweets WHERE job_id = j.id) AS jt,
            (SELECT count(DISTINCT user_id)::int FROM job_users WHERE job_id = j.id) AS ju,
            (SELECT array_agg(s.pages::int ORDER BY s.id) FROM job_slices s WHERE s.job_id = j.id) AS slices
           FROM jobs j WHERE j.id = $1::bigint`,
        [job.jobId],
      );
      const tweets = ROUNDS * 4 * PER_PAGE;
      const users = LOW_AUTHORS.length + HIGH_AUTHORS.length;
      expect(rows[0]).toEqual({ pages: ROUNDS * 4, tweets, users, jt: tweets, ju: users, slices: [ROUNDS, ROUNDS, ROUNDS, ROUNDS] });
    }
    // Each tweet and author stored once.
    const { rows } = await db.pool.query<{ tweets: number; users: number }>(
      `SELECT (SELECT count(*)::int FROM tweets WHERE author_id = ANY($1::bigint[])) AS tweets,
          (SELECT count(*)::int FROM users WHERE id = ANY($1::bigint[])) AS users`,
      [[...LOW_AUTHORS, ...HIGH_AUTHORS]],
    );
    expect(rows[0]).toEqual({ tweets: ROUNDS * 4 * PER_PAGE, users: LOW_AUTHORS.length + HIGH_AUTHORS.length });
  });

  it('a batch of two jobs beside a batch of a third, all writing the same authors: never deadlock', { timeout: 120_000 }, async () => {
    const [a, b, c] = [await newSlices(db.pool, 4), await newSlices(db.pool, 4), await newSlices(db.pool, 4)];
    const cursors = new Map<string, string>();
    let n = 0;
    let followers = 0;
    const page = (job: Job, k: number, authors: string[]): PageCommit => {
      const sliceId = job.sliceIds[k]!;
      const expectedCursor = cursors.get(sliceId) ?? null;
      const nextCursor = `c${++n}`;
      cursors.set(sliceId, nextCursor);
      const tweets = Array.from({ length: PER_PAGE }, (_, i) => makeTweet(lowId(), makeUser(authors[i % authors.length]!, { followersCount: ++followers })));
      return { jobId: job.jobId, sliceId, expectedCursor, nextCursor, sliceDone: false, tweets, users: [], emptyPage: false };
    };
    const pool: Pool = createPool(db.url, { max: 4 });
    const before = await deadlocksCounted();
    const failed: unknown[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        // Job a (the lower id) has the high authors, job b the low: per job, one statement each,
        // the first batch took them high then low, the one-job batch low then high.
        const multi = [0, 1, 2, 3].flatMap((k) => [page(a, k, HIGH_AUTHORS), page(b, k, LOW_AUTHORS)]);
        const single = [0, 1, 2, 3].map((k) => page(c, k, [...LOW_AUTHORS, ...HIGH_AUTHORS]));
        for (const o of (await Promise.all([commitPages(pool, multi), commitPages(pool, single)])).flat()) if (!o.ok) failed.push(o.error);
      }
    } finally {
      await pool.end();
    }
    expect(failed).toEqual([]);
    expect(await deadlocksSince(before)).toBe(0);
    const { rows } = await db.pool.query<{ pages: number; users: number }>(
      `SELECT pages::int, users::int FROM jobs WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [[a.jobId, b.jobId, c.jobId]],
    );
    expect(rows).toEqual([{ pages: ROUNDS * 4, users: 3 }, { pages: ROUNDS * 4, users: 3 }, { pages: ROUNDS * 4, users: 6 }]);
  });
});
