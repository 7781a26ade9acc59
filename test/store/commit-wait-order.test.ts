import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitPage } from '../../src/store/commit-page.ts';
import { createJob, createSlices } from '../../src/store/jobs.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { makeTweet, makeUser } from './fixtures.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('a page commit meeting another transaction\'s uncommitted author', () => {
  it('has written its tweets before it waits: two in-flight batches overlap on the tweets, the bulk of the work', async () => {
    const jobId = await createJob(db.pool, { kind: 'search', params: { query: 'x' } });
    const [sliceId] = await createSlices(db.pool, jobId, [{ kind: 'search-window', params: {} }]);
    const author = makeUser('1870000000000000001');
    const other = await db.pool.connect();
    try {
      // Another batch has inserted this new author and not committed yet.
      await other.query('BEGIN');
      await other.query(`INSERT INTO users (id, source, raw) VALUES ($1::bigint, 'v3', '{}')`, [author.id]);
      const ownPid = (await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;

      const committing = commitPage(db.pool, {
        jobId, sliceId: sliceId!, expectedCursor: null, nextCursor: 'c1', sliceDone: false, emptyPage: false,
        tweets: [makeTweet('1870000000000001000', author)], users: [],
      });
      // Find the commit's backend waiting on our row lock.
      let waiting: number | undefined;
      for (let i = 0; i < 200 && waiting === undefined; i++) {
        const { rows } = await db.pool.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
          [ownPid],
        );
        waiting = rows[0]?.pid;
        if (waiting === undefined) await new Promise((r) => setTimeout(r, 10));
      }
      expect(waiting).toBeDefined();
      // It already holds the tweets table's row-exclusive lock: the tweets upsert ran before the wait.
      const { rowCount } = await db.pool.query(
        `SELECT 1 FROM pg_locks WHERE pid = $1 AND relation = 'tweets'::regclass AND mode = 'RowExclusiveLock' AND granted`,
        [waiting],
      );
      expect(rowCount).toBe(1);

      await other.query('COMMIT');
      expect(await committing).toMatchObject({ newTweets: 1, newUsers: 1 });
    } finally {
      other.release();
    }
  });
});
