/**
 * Job provenance (job_tweets, job_users) has no foreign key to jobs since migration 0010: triggers
 * keep its rows with their job on DELETE (0010) and TRUNCATE (0011). The page commit counts what is
 * new to a job from the xmin of those rows, which holds only while their inserts never update a row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CanonicalTweet, CanonicalUser } from '../../src/api-client/canonical.ts';
import { commitPage } from '../../src/store/commit-page.ts';
import { getJob } from '../../src/store/jobs.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { idSequence, makeTweet, makeUser, newSlices, pageOf } from './fixtures.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const id = idSequence('1860000000000000000');

async function newSlice(): Promise<{ jobId: string; sliceId: string }> {
  const { jobId, sliceIds } = await newSlices(db.pool, 1);
  return { jobId, sliceId: sliceIds[0]! };
}

/** Two page tweets by two authors, and one standalone member: 2 tweets and 3 users new to a job. */
function content(): { tweets: CanonicalTweet[]; users: CanonicalUser[]; userRole: string } {
  const a = makeUser(id('100'));
  const b = makeUser(id('100'));
  return { tweets: [makeTweet(id(), a), makeTweet(id(), b)], users: [makeUser(id('100'))], userRole: 'member' };
}

/** Provenance rows of one job, or of every job (also rows whose job is gone) without `jobId`. */
async function provenance(jobId?: string): Promise<{ t: number; u: number }> {
  const { rows } = await db.pool.query<{ t: number; u: number }>(
    `SELECT (SELECT count(*)::int FROM job_tweets WHERE $1::bigint IS NULL OR job_id = $1::bigint) AS t,
       (SELECT count(*)::int FROM job_users WHERE $1::bigint IS NULL OR job_id = $1::bigint) AS u`,
    [jobId ?? null],
  );
  return rows[0]!;
}

describe('removing jobs removes their provenance rows', () => {
  it('DELETE of one job removes its rows and leaves another job’s alone; DELETE of all leaves none', async () => {
    const gone = await newSlice();
    const kept = await newSlice();
    const page = content();
    await commitPage(db.pool, pageOf(gone, page));
    await commitPage(db.pool, pageOf(kept, page));
    expect(await provenance(gone.jobId)).toEqual({ t: 2, u: 3 });
    expect(await provenance(kept.jobId)).toEqual({ t: 2, u: 3 });

    await db.pool.query(`DELETE FROM jobs WHERE id = $1::bigint`, [gone.jobId]);
    expect(await provenance(gone.jobId)).toEqual({ t: 0, u: 0 });
    expect(await provenance(kept.jobId)).toEqual({ t: 2, u: 3 });

    await db.pool.query(`DELETE FROM jobs`);
    expect(await provenance()).toEqual({ t: 0, u: 0 });
  });

  it('TRUNCATE jobs CASCADE leaves none, so a job that takes an old id after RESTART IDENTITY starts empty', async () => {
    await db.pool.query(`TRUNCATE jobs RESTART IDENTITY CASCADE`);
    const first = await newSlice();
    const page = content();
    await commitPage(db.pool, pageOf(first, page));
    await commitPage(db.pool, pageOf(await newSlice(), content()));
    expect(await provenance()).toEqual({ t: 4, u: 6 });

    await db.pool.query(`TRUNCATE jobs RESTART IDENTITY CASCADE`);
    expect(await provenance()).toEqual({ t: 0, u: 0 });

    // The new job has the first one's id: rows left by the old job would make the same page not new to it.
    const reused = await newSlice();
    expect(reused.jobId).toBe(first.jobId);
    expect(await commitPage(db.pool, pageOf(reused, page))).toMatchObject({ newTweets: 2, newUsers: 3 });
  });
});

describe('a page committed twice for one job', () => {
  it('reports all of its tweets and users as new the first time and none the second', async () => {
    const slice = await newSlice();
    const page = content();
    const first = await commitPage(db.pool, pageOf(slice, page));
    expect(first).toMatchObject({ newTweets: 2, newUsers: 3 });

    // The same items again on the slice's next page (a service that repeats a page under a new cursor).
    const second = await commitPage(db.pool, pageOf(slice, { ...page, expectedCursor: 'c1', nextCursor: 'c2' }));
    expect(second).toMatchObject({ newTweets: 0, newUsers: 0, stalePages: 1 });
    expect(await getJob(db.pool, slice.jobId)).toMatchObject({ pages: 2, tweets: 2, users: 3 });
  });
});

describe('a page of users the job already found in another role', () => {
  it('brings no new user but is not stale (a list whose members are the authors of its tweets)', async () => {
    const slice = await newSlice();
    const a = makeUser(id('100'));
    const b = makeUser(id('100'));
    await commitPage(db.pool, pageOf(slice, { tweets: [makeTweet(id(), a), makeTweet(id(), b)] }));
    const members = { users: [a, b], userRole: 'member', expectedCursor: 'c1', nextCursor: 'c2' };
    expect(await commitPage(db.pool, pageOf(slice, members))).toMatchObject({ newTweets: 0, newUsers: 0, stalePages: 0 });
    // The same members again: nothing new in any role.
    expect(await commitPage(db.pool, pageOf(slice, { ...members, expectedCursor: 'c2', nextCursor: 'c3' }))).toMatchObject({ stalePages: 1 });
    expect(await getJob(db.pool, slice.jobId)).toMatchObject({ users: 2 });
  });
});
