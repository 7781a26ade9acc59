/**
 * Group commit: several pages in ONE transaction, each guarded on its own slice cursor and lease
 * (ARCHITECTURE invariant 1 allows it): a stale page drops out alone, a bad row fails only its
 * page, a tweet two pages share is new to the job once, and the committer batches pages that are
 * ready together.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitPage, commitPages, type PageCommit } from '../../src/store/commit-page.ts';
import { StaleSliceError } from '../../src/store/errors.ts';
import { GroupCommitter } from '../../src/store/group-commit.ts';
import { getJob } from '../../src/store/jobs.ts';
import { getSlice } from '../helpers/store-rows.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { idSequence, makeTweet, makeUser, newSlices as slicesOf, pageOf } from './fixtures.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const id = idSequence('1810000000000000000');

const newSlices = (count: number) => slicesOf(db.pool, count);
const page = (jobId: string, sliceId: string, overrides: Partial<PageCommit>): PageCommit => pageOf({ jobId, sliceId }, overrides);

async function storedTweets(ids: string[]): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM tweets WHERE id = ANY($1::bigint[])', [ids]);
  return rows[0]!.n;
}

/** The transaction that last wrote each slice row (xmin): one value means one transaction. */
async function writers(sliceIds: string[]): Promise<Set<string>> {
  const { rows } = await db.pool.query<{ x: string }>('SELECT xmin::text AS x FROM job_slices WHERE id = ANY($1::bigint[])', [sliceIds]);
  return new Set(rows.map((r) => r.x));
}

describe('commitPages (group commit)', () => {
  it('commits pages of several slices and jobs in one transaction, each with its own cursor and counters', async () => {
    const a = await newSlices(2);
    const b = await newSlices(1);
    const author = makeUser(id('100'));
    const pages = [
      page(a.jobId, a.sliceIds[0]!, { tweets: [makeTweet(id(), author), makeTweet(id(), author)], nextCursor: 'a0' }),
      page(b.jobId, b.sliceIds[0]!, { tweets: [makeTweet(id(), author)], nextCursor: 'b0' }),
      page(a.jobId, a.sliceIds[1]!, { tweets: [makeTweet(id(), author)], nextCursor: 'a1' }),
    ];
    const outcomes = await commitPages(db.pool, pages);
    expect(outcomes.map((o) => o.ok && o.result.newTweets)).toEqual([2, 1, 1]);
    expect((await writers([...a.sliceIds, ...b.sliceIds])).size).toBe(1);
    expect(await getSlice(db.pool, a.sliceIds[0]!)).toMatchObject({ cursor: 'a0', pages: 1 });
    expect(await getSlice(db.pool, a.sliceIds[1]!)).toMatchObject({ cursor: 'a1', pages: 1 });
    expect(await getSlice(db.pool, b.sliceIds[0]!)).toMatchObject({ cursor: 'b0', pages: 1 });
    expect(await getJob(db.pool, a.jobId)).toMatchObject({ pages: 2, tweets: 3, users: 1 });
    expect(await getJob(db.pool, b.jobId)).toMatchObject({ pages: 1, tweets: 1, users: 1 });
  });

  it('drops a stale page alone: the rest of its batch commits, the stale page writes nothing', async () => {
    const s = await newSlices(3);
    await commitPage(db.pool, page(s.jobId, s.sliceIds[1]!, { nextCursor: 'moved' }));
    const author = makeUser(id('200'));
    const staleTweet = makeTweet(id(), author);
    const fresh = [makeTweet(id(), author), makeTweet(id(), author)];
    const outcomes = await commitPages(db.pool, [
      page(s.jobId, s.sliceIds[0]!, { tweets: [fresh[0]!], nextCursor: 'x0' }),
      // fetched at the cursor before 'moved': another walk committed since
      page(s.jobId, s.sliceIds[1]!, { tweets: [staleTweet], nextCursor: 'x1' }),
      page(s.jobId, s.sliceIds[2]!, { tweets: [fresh[1]!], nextCursor: 'x2' }),
    ]);
    expect(outcomes[0]!.ok).toBe(true);
    expect(outcomes[1]!.ok).toBe(false);
    expect(!outcomes[1]!.ok && outcomes[1]!.error).toBeInstanceOf(StaleSliceError);
    expect(outcomes[2]!.ok).toBe(true);
    expect(await storedTweets(fresh.map((t) => t.id))).toBe(2);
    expect(await storedTweets([staleTweet.id])).toBe(0);
    expect(await getSlice(db.pool, s.sliceIds[1]!)).toMatchObject({ cursor: 'moved', pages: 1 });
    expect(await getSlice(db.pool, s.sliceIds[2]!)).toMatchObject({ cursor: 'x2' });
  });

  it('a lease held by another walk makes only that page stale', async () => {
    const s = await newSlices(2);
    await db.pool.query(`UPDATE job_slices SET lease = 'newer', status = 'running' WHERE id = $1::bigint`, [s.sliceIds[0]]);
    const outcomes = await commitPages(db.pool, [
      page(s.jobId, s.sliceIds[0]!, { lease: 'older', nextCursor: 'l0' }),
      page(s.jobId, s.sliceIds[1]!, { nextCursor: 'l1' }),
    ]);
    expect(outcomes.map((o) => o.ok)).toEqual([false, true]);
    expect(await getSlice(db.pool, s.sliceIds[0]!)).toMatchObject({ cursor: null, pages: 0 });
  });

  it('a page whose rows break the statement fails alone; the others commit', async () => {
    const s = await newSlices(3);
    const author = makeUser(id('300'));
    const good = [makeTweet(id(), author), makeTweet(id(), author)];
    const outcomes = await commitPages(db.pool, [
      page(s.jobId, s.sliceIds[0]!, { tweets: [good[0]!], nextCursor: 'g0' }),
      page(s.jobId, s.sliceIds[1]!, { tweets: [makeTweet('not-an-id', author)], nextCursor: 'bad' }),
      page(s.jobId, s.sliceIds[2]!, { tweets: [good[1]!], nextCursor: 'g2' }),
    ]);
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
    expect(await storedTweets(good.map((t) => t.id))).toBe(2);
    expect(await getSlice(db.pool, s.sliceIds[1]!)).toMatchObject({ cursor: null, pages: 0 });
    expect(await getJob(db.pool, s.jobId)).toMatchObject({ pages: 2, tweets: 2 });
  });

  it('a tweet two pages of one job share is new once, credited to the first page', async () => {
    const s = await newSlices(2);
    const author = makeUser(id('400'));
    const shared = makeTweet(id(), author);
    const outcomes = await commitPages(db.pool, [
      page(s.jobId, s.sliceIds[0]!, { tweets: [shared, makeTweet(id(), author)] }),
      page(s.jobId, s.sliceIds[1]!, { tweets: [shared] }),
    ]);
    expect(outcomes.map((o) => o.ok && o.result.newTweets)).toEqual([2, 0]);
    expect(outcomes.map((o) => o.ok && o.result.stalePages)).toEqual([0, 1]);
    expect(await getJob(db.pool, s.jobId)).toMatchObject({ tweets: 2, users: 1 });
  });

  it('two pages of the same slice go in separate transactions: the second is stale', async () => {
    const s = await newSlices(1);
    const outcomes = await commitPages(db.pool, [
      page(s.jobId, s.sliceIds[0]!, { nextCursor: 'first' }),
      page(s.jobId, s.sliceIds[0]!, { nextCursor: 'second' }),
    ]);
    expect(outcomes.map((o) => o.ok)).toEqual([true, false]);
    expect(await getSlice(db.pool, s.sliceIds[0]!)).toMatchObject({ cursor: 'first', pages: 1 });
  });
});

describe('GroupCommitter', () => {
  it('commits pages handed to it together in one transaction and answers each caller', async () => {
    const s = await newSlices(6);
    const committer = new GroupCommitter(db.pool, { maxInFlight: 1 });
    const author = makeUser(id('500'));
    const results = await Promise.all(
      s.sliceIds.map((sliceId, i) => committer.commit(page(s.jobId, sliceId, { tweets: [makeTweet(id(), author)], nextCursor: `g${i}` }))),
    );
    expect(results.map((r) => r.result.newTweets)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(results.map((r) => r.after.cursor)).toEqual(['g0', 'g1', 'g2', 'g3', 'g4', 'g5']);
    expect(results[0]!.after).toMatchObject({ pages: 1, status: 'running', jobTweets: 6, jobStatus: expect.any(String) });
    expect(committer.stats).toEqual({ batches: 1, pages: 6 });
    expect((await writers(s.sliceIds)).size).toBe(1);
  });

  it('shares a queue of many pages among the free connections; a few pages stay one batch', async () => {
    const s = await newSlices(20);
    const author = makeUser(id('600'));
    const committer = new GroupCommitter(db.pool, { maxInFlight: 2 });
    const many = await Promise.all(
      s.sliceIds.slice(0, 16).map((sliceId, i) => committer.commit(page(s.jobId, sliceId, { tweets: [makeTweet(id(), author)], nextCursor: `m${i}` }))),
    );
    expect(many.map((r) => r.result.newTweets)).toEqual(Array.from({ length: 16 }, () => 1));
    expect(committer.stats).toEqual({ batches: 2, pages: 16 });
    expect((await writers(s.sliceIds.slice(0, 16))).size).toBe(2);
    await Promise.all(s.sliceIds.slice(16).map((sliceId, i) => committer.commit(page(s.jobId, sliceId, { nextCursor: `f${i}` }))));
    expect(committer.stats).toEqual({ batches: 3, pages: 20 });
    expect(await getJob(db.pool, s.jobId)).toMatchObject({ pages: 20, tweets: 16 });
  });

  it('rejects only the stale caller', async () => {
    const s = await newSlices(2);
    await commitPage(db.pool, page(s.jobId, s.sliceIds[0]!, { nextCursor: 'ahead' }));
    const committer = new GroupCommitter(db.pool);
    const [stale, ok] = await Promise.allSettled([
      committer.commit(page(s.jobId, s.sliceIds[0]!, { nextCursor: 'late' })),
      committer.commit(page(s.jobId, s.sliceIds[1]!, { nextCursor: 'fine' })),
    ]);
    expect(stale.status).toBe('rejected');
    expect(stale.status === 'rejected' && stale.reason).toBeInstanceOf(StaleSliceError);
    expect(ok.status).toBe('fulfilled');
  });
});

describe('GroupCommitter gathering (gatherMs, waitsFor)', () => {
  /** What a walk does while its page commits (its next page's fetch), still under way. */
  const pending = (): Promise<unknown> => new Promise<never>(() => undefined);
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  /** The commit, or 'late' when it did not land within `ms` (a gather that ignored its cue). */
  const within = <T>(ms: number, p: Promise<T>) =>
    Promise.race([p, new Promise<'late'>((r) => setTimeout(() => r('late'), ms).unref())]);

  it('pages whose walks fetch meanwhile wait up to gatherMs for company, then go in one batch', async () => {
    const s = await newSlices(3);
    const committer = new GroupCommitter(db.pool, { gatherMs: 200 });
    const started = performance.now();
    const commits = s.sliceIds.map((sliceId, i) => committer.commit(page(s.jobId, sliceId, { nextCursor: `w${i}` }), { waitsFor: pending() }));
    // Half the gather: nothing written yet (a page that may wait is not written on the next turn).
    await sleep(100);
    expect(committer.stats).toEqual({ batches: 0, pages: 0 });
    const results = await Promise.all(commits);
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    expect(results.map((r) => r.after.cursor)).toEqual(['w0', 'w1', 'w2']);
    expect(committer.stats).toEqual({ batches: 1, pages: 3 });
    expect((await writers(s.sliceIds)).size).toBe(1);
  });

  it('a page whose walk needs it (its waitsFor settled) ends the gather at once, for its whole batch', async () => {
    const s = await newSlices(3);
    const committer = new GroupCommitter(db.pool, { gatherMs: 5000 });
    let fetched!: () => void;
    const next = new Promise<void>((r) => (fetched = r));
    const commits = Promise.all([
      committer.commit(page(s.jobId, s.sliceIds[0]!, { nextCursor: 'n0' }), { waitsFor: pending() }),
      committer.commit(page(s.jobId, s.sliceIds[1]!, { nextCursor: 'n1' }), { waitsFor: next }),
      committer.commit(page(s.jobId, s.sliceIds[2]!, { nextCursor: 'n2' }), { waitsFor: pending() }),
    ]);
    await sleep(50);
    expect(committer.stats.batches).toBe(0);
    fetched();
    // Well before the 5 s gather: the settled fetch flushed the batch.
    const results = await within(2500, commits);
    expect(results).not.toBe('late');
    expect(committer.stats).toEqual({ batches: 1, pages: 3 });
    expect((await writers(s.sliceIds)).size).toBe(1);
  });

  it('a rejected waitsFor (a failed fetch) ends the gather too', async () => {
    const s = await newSlices(1);
    const committer = new GroupCommitter(db.pool, { gatherMs: 5000 });
    let failed!: (e: Error) => void;
    const next = new Promise<void>((_, reject) => (failed = reject));
    next.catch(() => undefined);
    const commit = committer.commit(page(s.jobId, s.sliceIds[0]!, { nextCursor: 'r0' }), { waitsFor: next });
    await sleep(50);
    failed(new Error('the next page failed'));
    expect(await within(2500, commit)).not.toBe('late');
    expect(committer.stats).toEqual({ batches: 1, pages: 1 });
  });

  it('a page without waitsFor is written at once and takes the gathering pages along in its batch', async () => {
    const s = await newSlices(3);
    const committer = new GroupCommitter(db.pool, { gatherMs: 5000 });
    const waiting = [0, 1].map((i) => committer.commit(page(s.jobId, s.sliceIds[i]!, { nextCursor: `t${i}` }), { waitsFor: pending() }));
    await sleep(50);
    expect(committer.stats.batches).toBe(0);
    // A walk's last page (nothing fetched meanwhile): no gather.
    const last = committer.commit(page(s.jobId, s.sliceIds[2]!, { nextCursor: null, sliceDone: true, endReason: 'end' }));
    const results = await within(2500, Promise.all([...waiting, last]));
    expect(results).not.toBe('late');
    expect(committer.stats).toEqual({ batches: 1, pages: 3 });
    expect((await writers(s.sliceIds)).size).toBe(1);
    expect(await getSlice(db.pool, s.sliceIds[2]!)).toMatchObject({ status: 'done' });
  });

  it('eight pages gathering are written at once: a gathered batch waits for no more', async () => {
    const s = await newSlices(8);
    const committer = new GroupCommitter(db.pool, { gatherMs: 5000 });
    const commits = s.sliceIds.map((sliceId, i) => committer.commit(page(s.jobId, sliceId, { nextCursor: `e${i}` }), { waitsFor: pending() }));
    expect(await within(2500, Promise.all(commits))).not.toBe('late');
    // Eight pages are shared between the two free connections (MIN_SHARE), as any queue of eight.
    expect(committer.stats).toEqual({ batches: 2, pages: 8 });
  });

  it('at more than 50 pages a second nothing gathers: batches fill while the previous one is written', async () => {
    const s = await newSlices(61);
    const committer = new GroupCommitter(db.pool, { gatherMs: 5000 });
    // 60 pages within the second (their walks' last pages: written at once)...
    await Promise.all(s.sliceIds.slice(0, 60).map((sliceId, i) => committer.commit(page(s.jobId, sliceId, { nextCursor: `b${i}` }))));
    // Every batch settled (none still in flight to take the next page along when it ends).
    await sleep(20);
    // ...then one whose walk fetches meanwhile: written without waiting for company.
    const commit = committer.commit(page(s.jobId, s.sliceIds[60]!, { nextCursor: 'fast' }), { waitsFor: pending() });
    expect(await within(2500, commit)).not.toBe('late');
  });

  it('without gatherMs, waitsFor changes nothing: the page is written on the next turn', async () => {
    const s = await newSlices(1);
    const committer = new GroupCommitter(db.pool);
    const commit = committer.commit(page(s.jobId, s.sliceIds[0]!, { nextCursor: 'z0' }), { waitsFor: pending() });
    await new Promise((r) => setImmediate(r));
    expect(committer.stats.batches).toBe(1);
    expect(await within(2500, commit)).not.toBe('late');
    expect(committer.stats).toEqual({ batches: 1, pages: 1 });
  });
});
