/**
 * Every batch takes its job rows last (after its tweets and users, in id order), whether it holds
 * pages of one job or of several. Before, a batch of several jobs locked its job rows first and
 * deadlocked with a one-job batch that held an author it had written and waited for that job's
 * row; and two transactions of one job that added the same stored account in two roles each
 * counted it as new to the job. Real Postgres, real commitPages, batches committed at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitPages, type PageCommit } from '../../src/store/commit-page.ts';
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

const tweetId = idSequence('1820000000000000000');

/** Walks slices page by page: each call gives the slice's next page, guarded on its last cursor. */
function pager() {
  const cursors = new Map<string, string>();
  let n = 0;
  return (slice: { jobId: string; sliceId: string }, content: Partial<PageCommit>): PageCommit => {
    const expectedCursor = cursors.get(slice.sliceId) ?? null;
    const nextCursor = `c${++n}`;
    cursors.set(slice.sliceId, nextCursor);
    return { ...slice, expectedCursor, nextCursor, sliceDone: false, tweets: [], users: [], emptyPage: false, ...content };
  };
}

async function deadlocksCounted(): Promise<number> {
  await db.pool.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await db.pool.query<{ n: string }>('SELECT deadlocks::text AS n FROM pg_stat_database WHERE datname = $1', [db.name]);
  return Number(rows[0]?.n ?? 0);
}

describe('job rows are locked last in every batch', () => {
  it("a batch of two jobs beside a batch of one job, both writing that job's authors with changed counts: no deadlock", { timeout: 60_000 }, async () => {
    // Its own connections, ended before reading: a backend's counters reach pg_stat_database when it exits.
    const pool: Pool = createPool(db.url, { max: 8 });
    const before = await deadlocksCounted();
    const [a, b] = [await newSlices(db.pool, 8), await newSlices(db.pool, 8)];
    const next = pager();
    // Each job's pages have authors of their own, shared by both batches' pages of job B: only
    // the job rows' place in the order is tested here. (Authors and tweets shared across the jobs
    // of a batch: multi-job-batch.test.ts.)
    const authorsOf = (job: { jobId: string }) => Array.from({ length: 6 }, (_, i) => String((job === a ? 5_000 : 6_000) + i));
    let followers = 0;
    const page = (job: { jobId: string; sliceIds: string[] }, k: number) =>
      next({ jobId: job.jobId, sliceId: job.sliceIds[k]! }, {
        tweets: Array.from({ length: 20 }, (_, i) => makeTweet(tweetId(), makeUser(authorsOf(job)[(i + k) % 6]!, { followersCount: ++followers }))),
      });
    const failed: unknown[] = [];
    try {
      for (let round = 0; round < 20; round++) {
        const both = [0, 1, 2, 3].flatMap((k) => [page(a, k), page(b, k)]);
        const one = [4, 5, 6, 7].map((k) => page(b, k));
        const outcomes = await Promise.all([commitPages(pool, both), commitPages(pool, one)]);
        for (const o of outcomes.flat()) if (!o.ok) failed.push(o.error);
      }
    } finally {
      await pool.end();
    }
    expect(failed).toEqual([]);
    // commitPages retries a deadlock silently: Postgres's own count says whether one happened.
    let counted = 0;
    for (let wait = 0; wait < 10 && counted === 0; wait++) {
      counted = (await deadlocksCounted()) - before;
      if (counted === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(counted).toBe(0);
  });

  it('a stored account added by two transactions of one job in two roles (member, author) counts once in jobs.users', async () => {
    const [other, job] = [await newSlices(db.pool, 1), await newSlices(db.pool, 2)];
    const next = pager();
    let userId = 90_000;
    for (let round = 0; round < 40; round++) {
      const users = Array.from({ length: 5 }, () => makeUser(String(userId++)));
      // Stored (another job saw them) and unchanged since: the upsert writes nothing for them.
      await commitPages(db.pool, [next({ jobId: other.jobId, sliceId: other.sliceIds[0]! }, { users })]);
      const members = next({ jobId: job.jobId, sliceId: job.sliceIds[0]! }, { users, userRole: 'list_member' });
      const tweets = next({ jobId: job.jobId, sliceId: job.sliceIds[1]! }, { tweets: users.map((u) => makeTweet(tweetId(), u)) });
      const outcomes = await Promise.all([commitPages(db.pool, [members]), commitPages(db.pool, [tweets])]);
      expect(outcomes.flat().every((o) => o.ok)).toBe(true);
    }
    const { rows } = await db.pool.query<{ counted: number; distinct: number }>(
      `SELECT j.users::int AS counted, (SELECT count(DISTINCT user_id)::int FROM job_users WHERE job_id = j.id) AS distinct
         FROM jobs j WHERE j.id = $1::bigint`,
      [job.jobId],
    );
    expect(rows[0]).toEqual({ counted: 200, distinct: 200 });
  });
});
