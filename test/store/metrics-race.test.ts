/**
 * Two writers storing one tweet and its author at the same moment (two workers, or two jobs'
 * batches) write ONE history row for the counts they bring, not one each: the upsert decides on
 * the row it locked, not on its statement's snapshot (migration 0020).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CanonicalTweet, CanonicalUser } from '../../src/api-client/canonical.ts';
import type { PoolClient } from '../../src/store/db.ts';
import { upsertTweets } from '../../src/store/upsert-tweets.ts';
import { upsertUsers } from '../../src/store/upsert-users.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { makeTweet, makeUser, newSlices } from './fixtures.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const history = async (table: 'tweet_metrics' | 'user_metrics', column: string, id: string) =>
  (await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1::bigint`, [id])).rows[0]!.n;

/**
 * Both writers' statements start before either commits (READ COMMITTED: a statement's snapshot is
 * taken when it starts); the second waits on the first's row lock, then finds the row committed.
 */
async function race(write: (client: PoolClient, observedAt: Date) => Promise<unknown>): Promise<void> {
  const [a, b] = [await db.pool.connect(), await db.pool.connect()];
  try {
    await a.query('BEGIN');
    await b.query('BEGIN');
    await write(a, new Date('2026-10-01T00:00:00.001Z'));
    const second = write(b, new Date('2026-10-01T00:00:00.002Z')); // blocks on a's uncommitted rows
    await new Promise((resolve) => setTimeout(resolve, 100));
    await a.query('COMMIT');
    await second;
    await b.query('COMMIT');
  } finally {
    a.release();
    b.release();
  }
}

describe('engagement and audience history under concurrent writers', () => {
  // Each race runs one statement per writer: a second statement would start after the first
  // writer's commit and see its rows in its own snapshot, racing nothing.
  type Writer = Parameters<typeof upsertUsers>[0];
  const users = (author: CanonicalUser, jobId: string) => (db: Writer, at: Date) => upsertUsers(db, [author], [jobId], [[author.id, 'author']], at);
  const tweets = (tweet: CanonicalTweet, jobId: string) => (db: Writer, at: Date) => upsertTweets(db, [tweet], [jobId], [tweet.id], at);

  it('a new tweet, and a new account, stored by two writers at once: one history row each', async () => {
    const { jobId } = await newSlices(db.pool, 1);
    const author = makeUser('1700000000000000901', { followersCount: 10 });
    const tweet = makeTweet('1800000000000000901', author, { likeCount: 5 });
    await race(users(author, jobId));
    await race(tweets(tweet, jobId));
    expect(await history('user_metrics', 'user_id', author.id)).toBe(1);
    expect(await history('tweet_metrics', 'tweet_id', tweet.id)).toBe(1);
  });

  it('new counts brought by two writers at once: one row for them; other counts after: one more', async () => {
    const { jobId } = await newSlices(db.pool, 1);
    const author = makeUser('1700000000000000902', { followersCount: 10 });
    const tweet = makeTweet('1800000000000000902', author, { likeCount: 5 });
    await users(author, jobId)(db.pool, new Date('2026-09-01T00:00:00Z'));
    await tweets(tweet, jobId)(db.pool, new Date('2026-09-01T00:00:00Z'));
    const grown = { ...author, followersCount: 11 };
    const liked = { ...tweet, likeCount: 6, author: grown };
    await race(users(grown, jobId));
    await race(tweets(liked, jobId));
    expect(await history('user_metrics', 'user_id', author.id)).toBe(2);
    expect(await history('tweet_metrics', 'tweet_id', tweet.id)).toBe(2);
    await upsertUsers(db.pool, [{ ...grown, followersCount: 12 }], [], [], new Date('2026-10-02T00:00:00Z'));
    await upsertTweets(db.pool, [{ ...liked, likeCount: 7 }], [], [], new Date('2026-10-02T00:00:00Z'));
    expect(await history('user_metrics', 'user_id', author.id)).toBe(3);
    expect(await history('tweet_metrics', 'tweet_id', tweet.id)).toBe(3);
    const { rows } = await db.pool.query<{ at: Date }>(`SELECT counts_changed_at AS at FROM tweets WHERE id = $1::bigint`, [tweet.id]);
    expect(rows[0]!.at.toISOString()).toBe('2026-10-02T00:00:00.000Z');
  });
});
