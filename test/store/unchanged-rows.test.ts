import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitPage } from '../../src/store/commit-page.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { idSequence, makeTweet, makeUser, newSlices, pageOf } from './fixtures.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const id = idSequence('1850000000000000000');

async function newSlice(): Promise<{ jobId: string; sliceId: string }> {
  const { jobId, sliceIds } = await newSlices(db.pool, 1);
  return { jobId, sliceId: sliceIds[0]! };
}

const page = pageOf;

interface UserRow {
  version: string;
  last_seen_at: Date;
  followers_count: string;
  description: string;
  metrics: number;
}

async function userRow(userId: string): Promise<UserRow> {
  const { rows } = await db.pool.query<UserRow>(
    `SELECT xmin::text AS version, last_seen_at, followers_count::text AS followers_count, description,
       (SELECT count(*)::int FROM user_metrics WHERE user_id = users.id) AS metrics
     FROM users WHERE id = $1::bigint`,
    [userId],
  );
  return rows[0]!;
}

describe('a known account seen again', () => {
  it('is not rewritten when nothing changed within the hour, and last_seen_at moves once it is an hour old', async () => {
    const author = makeUser(id('700'));
    const first = await newSlice();
    const t0 = new Date('2026-10-01T00:00:00Z');
    await commitPage(db.pool, page(first, { tweets: [makeTweet(id(), author)], observedAt: t0 }));
    const stored = await userRow(author.id);

    // Another job meets the same account 30 minutes later: the row is left as it is (same version).
    const second = await newSlice();
    const later = await commitPage(db.pool, page(second, { tweets: [makeTweet(id(), author)], observedAt: new Date('2026-10-01T00:30:00Z') }));
    expect(later).toMatchObject({ newTweets: 1, newUsers: 1 });
    expect(await userRow(author.id)).toEqual(stored);

    // Two hours after it was last written, a sighting alone moves last_seen_at (no new metrics row).
    const third = await newSlice();
    await commitPage(db.pool, page(third, { tweets: [makeTweet(id(), author)], observedAt: new Date('2026-10-01T02:00:00Z') }));
    const moved = await userRow(author.id);
    expect(moved.version).not.toBe(stored.version);
    expect(moved.last_seen_at.toISOString()).toBe('2026-10-01T02:00:00.000Z');
    expect(moved.metrics).toBe(1);
  });

  it('is rewritten at once when any column changes, and new counts add a metrics row', async () => {
    const author = makeUser(id('800'));
    const slice = await newSlice();
    await commitPage(db.pool, page(slice, { tweets: [makeTweet(id(), author)], observedAt: new Date('2026-10-02T00:00:00Z') }));

    const other = await newSlice();
    const bio = { ...author, description: 'a new bio' };
    await commitPage(db.pool, page(other, { tweets: [makeTweet(id(), bio)], observedAt: new Date('2026-10-02T00:05:00Z') }));
    expect(await userRow(author.id)).toMatchObject({ description: 'a new bio', metrics: 1 });
    expect((await userRow(author.id)).last_seen_at.toISOString()).toBe('2026-10-02T00:05:00.000Z');

    const third = await newSlice();
    const grown = { ...bio, followersCount: 5000 };
    await commitPage(db.pool, page(third, { tweets: [makeTweet(id(), grown)], observedAt: new Date('2026-10-02T00:10:00Z') }));
    expect(await userRow(author.id)).toMatchObject({ followers_count: '5000', metrics: 2 });
  });

  it('a reduced record with nothing the stored row lacks does not rewrite it', async () => {
    const author = makeUser(id('900'));
    const slice = await newSlice();
    await commitPage(db.pool, page(slice, { tweets: [makeTweet(id(), author)], observedAt: new Date('2026-10-03T00:00:00Z') }));
    const stored = await userRow(author.id);
    const reduced = { ...author, source: 'v3-reduced' as const, description: null, location: null, followersCount: null, raw: { id: author.id } };
    const other = await newSlice();
    await commitPage(db.pool, page(other, { users: [reduced], userRole: 'member', observedAt: new Date('2026-10-03T00:10:00Z') }));
    expect(await userRow(author.id)).toEqual(stored);
  });
});

describe('deleting jobs', () => {
  it('deletes their provenance rows with them, and only theirs', async () => {
    const gone = await newSlice();
    const kept = await newSlice();
    const author = makeUser(id('950'));
    const shared = makeTweet(id(), author);
    await commitPage(db.pool, page(gone, { tweets: [shared, makeTweet(id(), author)], users: [makeUser(id('960'))], userRole: 'member' }));
    await commitPage(db.pool, page(kept, { tweets: [shared] }));
    const count = async (jobId: string): Promise<{ t: number; u: number }> =>
      (
        await db.pool.query<{ t: number; u: number }>(
          `SELECT (SELECT count(*)::int FROM job_tweets WHERE job_id = $1::bigint) AS t, (SELECT count(*)::int FROM job_users WHERE job_id = $1::bigint) AS u`,
          [jobId],
        )
      ).rows[0]!;
    expect(await count(gone.jobId)).toEqual({ t: 2, u: 2 });
    expect(await count(kept.jobId)).toEqual({ t: 1, u: 1 });

    await db.pool.query(`DELETE FROM jobs WHERE id = $1::bigint`, [gone.jobId]);
    expect(await count(gone.jobId)).toEqual({ t: 0, u: 0 });
    expect(await count(kept.jobId)).toEqual({ t: 1, u: 1 });
    // The tweets themselves stay: provenance goes, not what was harvested.
    const left = await db.pool.query(`SELECT 1 FROM tweets WHERE id = $1::bigint`, [shared.id]);
    expect(left.rowCount).toBe(1);
  });
});
