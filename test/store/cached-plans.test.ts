import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitPage } from '../../src/store/commit-page.ts';
import { createPool, type Pool } from '../../src/store/db.ts';
import { createJob, createSlices } from '../../src/store/jobs.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { makeTweet, makeUser } from './fixtures.ts';

let db: TestDatabase;
let one: Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  // One connection: the page commits below reuse the statements it prepared on the first page.
  one = createPool(db.url, { max: 1 });
});
afterAll(async () => {
  await one?.end();
  await db?.drop();
});

/** Sequential scans of the tables a page commit reads by key, as this backend has counted them. */
async function seqScans(): Promise<number> {
  const client = await one.connect();
  try {
    await client.query(`SET stats_fetch_consistency = none`);
    await client.query(`SELECT pg_stat_force_next_flush()`);
    const { rows } = await client.query<{ n: string }>(
      `SELECT sum(seq_scan)::text AS n FROM pg_stat_user_tables WHERE relname IN ('users', 'tweets', 'job_tweets', 'job_users')`,
    );
    return Number(rows[0]!.n);
  } finally {
    client.release();
  }
}

describe('page commits on statements prepared while the tables were empty', () => {
  it('still read users, tweets and provenance by index once the tables have grown', async () => {
    const jobId = await createJob(db.pool, { kind: 'search', params: { query: 'x' } });
    const [sliceId] = await createSlices(db.pool, jobId, [{ kind: 'search-window', params: {} }]);
    const base = { jobId, sliceId: sliceId!, sliceDone: false, emptyPage: false, users: [] };
    const author = makeUser('1880000000000000001');
    // First page: the statements are prepared (and, generic, planned) on near-empty tables.
    await commitPage(one, { ...base, expectedCursor: null, nextCursor: 'c1', tweets: [makeTweet('1880000000000001000', author)] });
    // The tables grow by 20k rows each, as a harvest does.
    await db.pool.query(`INSERT INTO users (id, source, raw) SELECT g, 'v3', '{}' FROM generate_series(1, 20000) AS g`);
    await db.pool.query(
      `INSERT INTO tweets (id, full_text, created_at, source, raw) SELECT g, 'x', now(), 'v3', '{}' FROM generate_series(1, 20000) AS g`,
    );
    await db.pool.query(`INSERT INTO job_tweets (job_id, tweet_id) SELECT $1::bigint, g FROM generate_series(1, 20000) AS g`, [jobId]);
    await db.pool.query(`INSERT INTO job_users (job_id, user_id, role) SELECT $1::bigint, g, 'author' FROM generate_series(1, 20000) AS g`, [jobId]);

    const before = await seqScans();
    await commitPage(one, { ...base, expectedCursor: 'c1', nextCursor: 'c2', tweets: [makeTweet('1880000000000002000', makeUser('1880000000000000002'))] });
    await commitPage(one, { ...base, expectedCursor: 'c2', nextCursor: 'c3', tweets: [makeTweet('1880000000000003000', author)] });
    expect((await seqScans()) - before).toBe(0);
  });
});
