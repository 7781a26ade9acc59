/**
 * A group commit goes out as ONE socket write (BEGIN, lock, upserts, advance, COMMIT pipelined):
 * counted on the connection's own socket. Without waiting for the lock's answer the batch still
 * keeps each page's guard: a stale page among fresh ones is dropped alone, a bad row fails only its
 * page, and an error inside the pipeline rolls the whole transaction back (COMMIT answers ROLLBACK).
 */
import type { Socket } from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitPage, commitPages, type PageCommit } from '../../src/store/commit-page.ts';
import { createPool, SqlState, withPipelinedTransaction, type PipelinedTransaction, type Pool, type PoolClient } from '../../src/store/db.ts';
import { StaleSliceError } from '../../src/store/errors.ts';
import { getJob } from '../../src/store/jobs.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { getSlice } from '../helpers/store-rows.ts';
import { idSequence, makeTweet, makeUser, newSlices as slicesOf, pageOf } from './fixtures.ts';

let db: TestDatabase;
// One connection at a time, so a commit's writes are those counted while it runs.
let pool: Pool;
let writes = 0;

/** Counts what reaches the kernel on a connection's socket: one _write or _writev call per flush of its buffer. */
function countWrites(client: pg.Client): void {
  const stream = (client as unknown as { connection: { stream: Socket } }).connection.stream as Socket & {
    _write: (...args: unknown[]) => void;
    _writev: (...args: unknown[]) => void;
  };
  const write = stream._write.bind(stream);
  const writev = stream._writev.bind(stream);
  stream._write = (...args) => {
    writes++;
    write(...args);
  };
  stream._writev = (...args) => {
    writes++;
    writev(...args);
  };
}

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, { max: 1 });
  // Every connection: a failed batch may destroy its client, and the pool opens another.
  pool.on('connect', countWrites);
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const id = idSequence('1820000000000000000');

const newSlices = (count: number) => slicesOf(db.pool, count);
const page = (jobId: string, sliceId: string, overrides: Partial<PageCommit>): PageCommit => pageOf({ jobId, sliceId }, overrides);

async function count(sql: string, params: unknown[]): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(sql, params);
  return rows[0]!.n;
}

/** Socket writes made while fn runs. */
async function writesDuring<T>(fn: () => Promise<T>): Promise<{ value: T; writes: number }> {
  const before = writes;
  const value = await fn();
  return { value, writes: writes - before };
}

describe('pipelined group commit', () => {
  it('a batch of pages of two jobs, with users, edges, quarantine and requests, is one socket write', async () => {
    const a = await newSlices(2);
    const b = await newSlices(1);
    const author = makeUser(id('100'));
    const at = new Date('2026-09-01T00:00:00Z');
    const pages = [
      page(a.jobId, a.sliceIds[0]!, {
        tweets: [makeTweet(id(), author), makeTweet(id(), author)],
        requests: [{ endpoint: '/v3/search', keyFingerprint: 'k', status: 200, durationMs: 5, at }],
        quarantined: [{ endpoint: '/v3/search', reason: 'bad', payload: { x: 1 } }],
      }),
      page(a.jobId, a.sliceIds[1]!, { users: [makeUser(id('200'))], edges: [{ kind: 'list_member', ownerId: '77', userIds: [author.id] }] }),
      page(b.jobId, b.sliceIds[0]!, { tweets: [makeTweet(id(), author)] }),
    ];
    const { value: outcomes, writes: n } = await writesDuring(() => commitPages(pool, pages));
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, true]);
    expect(n).toBe(1);
    expect(outcomes.map((o) => o.ok && [o.result.newTweets, o.result.newUsers])).toEqual([[2, 1], [0, 1], [1, 1]]);
    expect(await count('SELECT count(*)::int AS n FROM list_members WHERE list_id = 77', [])).toBe(1);
    expect(await count('SELECT count(*)::int AS n FROM quarantine WHERE slice_id = $1::bigint', [a.sliceIds[0]])).toBe(1);
    expect(await getJob(db.pool, a.jobId)).toMatchObject({ pages: 2, tweets: 2, users: 2, requestsSpent: 1 });

    // One page alone (the usual batch at 20 pages/s): one write, where it took six.
    const single = await writesDuring(() => commitPage(pool, page(a.jobId, a.sliceIds[0]!, { expectedCursor: 'c1', nextCursor: 'c2', tweets: [makeTweet(id(), author)] })));
    expect(single.value.newTweets).toBe(1);
    expect(single.writes).toBe(1);
  });

  it('a stale page among fresh ones is dropped alone: the batch rolls back and the fresh pages go again', async () => {
    const s = await newSlices(3);
    await commitPage(db.pool, page(s.jobId, s.sliceIds[1]!, { nextCursor: 'moved' }));
    const staleAuthor = makeUser(id('300'));
    const staleTweet = makeTweet(id(), staleAuthor);
    const good = [makeTweet(id(), makeUser(id('300'))), makeTweet(id(), makeUser(id('300')))];
    const { value: outcomes, writes: n } = await writesDuring(() =>
      commitPages(pool, [
        page(s.jobId, s.sliceIds[0]!, { tweets: [good[0]!], nextCursor: 'x0' }),
        page(s.jobId, s.sliceIds[1]!, { tweets: [staleTweet], nextCursor: 'x1' }),
        page(s.jobId, s.sliceIds[2]!, { tweets: [good[1]!], nextCursor: 'x2' }),
      ]),
    );
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
    expect(!outcomes[1]!.ok && outcomes[1]!.error).toBeInstanceOf(StaleSliceError);
    // The pipelined batch (it wrote the stale page's rows, then the advance refused) and the re-run.
    expect(n).toBe(2);
    expect(await count('SELECT count(*)::int AS n FROM tweets WHERE id = $1::bigint', [staleTweet.id])).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM users WHERE id = $1::bigint', [staleAuthor.id])).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM tweets WHERE id = ANY($1::bigint[])', [good.map((t) => t.id)])).toBe(2);
    expect(await getSlice(db.pool, s.sliceIds[1]!)).toMatchObject({ cursor: 'moved', pages: 1 });
    expect(outcomes.map((o) => o.ok && o.result.newTweets)).toEqual([1, false, 1]);
    expect(await getJob(db.pool, s.jobId)).toMatchObject({ pages: 3, tweets: 2 });
  });

  it('every page stale: nothing is written and each gets its StaleSliceError', async () => {
    const s = await newSlices(2);
    for (const sliceId of s.sliceIds) await commitPage(db.pool, page(s.jobId, sliceId, { nextCursor: 'ahead' }));
    const tweet = makeTweet(id(), makeUser(id('350')));
    const outcomes = await commitPages(pool, s.sliceIds.map((sliceId) => page(s.jobId, sliceId, { tweets: [tweet], nextCursor: 'late' })));
    expect(outcomes.map((o) => !o.ok && o.error instanceof StaleSliceError)).toEqual([true, true]);
    expect(await count('SELECT count(*)::int AS n FROM tweets WHERE id = $1::bigint', [tweet.id])).toBe(0);
  });

  it('a row Postgres refuses fails only its page; none of that page is left behind', async () => {
    const s = await newSlices(3);
    const badAuthor = makeUser(id('400'));
    const good = [makeTweet(id(), makeUser(id('400'))), makeTweet(id(), makeUser(id('400')))];
    const { value: outcomes, writes: n } = await writesDuring(() =>
      commitPages(pool, [
        page(s.jobId, s.sliceIds[0]!, { tweets: [good[0]!], nextCursor: 'g0' }),
        page(s.jobId, s.sliceIds[1]!, { tweets: [makeTweet('not-an-id', badAuthor)], nextCursor: 'bad' }),
        page(s.jobId, s.sliceIds[2]!, { tweets: [good[1]!], nextCursor: 'g2' }),
      ]),
    );
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
    expect(!outcomes[1]!.ok && outcomes[1]!.error).toMatchObject({ code: '22P02' });
    // The batch, then each page alone.
    expect(n).toBe(4);
    // The bad page's author went out in the same pipeline before its tweet failed: rolled back.
    expect(await count('SELECT count(*)::int AS n FROM users WHERE id = $1::bigint', [badAuthor.id])).toBe(0);
    expect(await getSlice(db.pool, s.sliceIds[1]!)).toMatchObject({ cursor: null, pages: 0 });
    expect(await getJob(db.pool, s.jobId)).toMatchObject({ pages: 2, tweets: 2, users: 2 });
  });

  it('a user the job knows in another role is not new; a user on two pages of a batch is new once', async () => {
    const s = await newSlices(3);
    const member = makeUser(id('500'));
    await commitPage(db.pool, page(s.jobId, s.sliceIds[0]!, { users: [member], userRole: 'member' }));
    const fresh = makeUser(id('500'));
    const outcomes = await commitPages(pool, [
      page(s.jobId, s.sliceIds[1]!, { tweets: [makeTweet(id(), member), makeTweet(id(), fresh)] }),
      page(s.jobId, s.sliceIds[2]!, { tweets: [makeTweet(id(), fresh)] }),
    ]);
    expect(outcomes.map((o) => o.ok && o.result.newUsers)).toEqual([1, 0]);
    expect(outcomes.map((o) => o.ok && o.result.newTweets)).toEqual([2, 1]);
    expect(await getJob(db.pool, s.jobId)).toMatchObject({ users: 2, tweets: 3 });
  });
});

describe('withPipelinedTransaction', () => {
  it('an error inside the pipeline rolls back what went before it: COMMIT answered ROLLBACK, the first error is thrown', async () => {
    await db.pool.query('CREATE TABLE IF NOT EXISTS pipeline_probe (v int PRIMARY KEY)');
    let later: Promise<unknown> | undefined;
    const run = withPipelinedTransaction(pool, async (tx) => {
      tx.query('INSERT INTO pipeline_probe VALUES (1)');
      const failing = tx.query('INSERT INTO pipeline_probe VALUES (1)');
      later = tx.query('INSERT INTO pipeline_probe VALUES (2)');
      tx.commit();
      await failing;
    });
    await expect(run).rejects.toMatchObject({ code: SqlState.UNIQUE_VIOLATION });
    await expect(later).rejects.toMatchObject({ code: SqlState.IN_FAILED_TRANSACTION });
    expect(await count('SELECT count(*)::int AS n FROM pipeline_probe', [])).toBe(0);
  });

  it('a statement queued after commit() fails the body at once instead of leaving the transaction unsent', { timeout: 10_000 }, async () => {
    await db.pool.query('CREATE TABLE IF NOT EXISTS pipeline_probe (v int PRIMARY KEY)');
    const run = withPipelinedTransaction(pool, async (tx) => {
      tx.query('INSERT INTO pipeline_probe VALUES (20)');
      tx.commit();
      tx.query('INSERT INTO pipeline_probe VALUES (21)');
    });
    await expect(run).rejects.toThrow(/queued after COMMIT/);
    // The one connection came back to the pool out of pipeline mode and uncorked.
    const client: PoolClient = await pool.connect();
    try {
      const raw = client as unknown as { pipeline: boolean; connection: { stream: Socket } };
      expect(raw.pipeline).toBe(false);
      expect(raw.connection.stream.writableCorked).toBe(0);
    } finally {
      client.release();
    }
    expect(await count('SELECT count(*)::int AS n FROM pipeline_probe WHERE v = 21', [])).toBe(0);
  });

  it('a body that throws before commit() is rolled back, and the client leaves pipeline mode either way', async () => {
    await db.pool.query('CREATE TABLE IF NOT EXISTS pipeline_probe (v int PRIMARY KEY)');
    const run = withPipelinedTransaction(pool, async (tx) => {
      tx.query('INSERT INTO pipeline_probe VALUES (10)');
      throw new Error('no');
    });
    await expect(run).rejects.toThrow('no');
    expect(await count('SELECT count(*)::int AS n FROM pipeline_probe WHERE v = 10', [])).toBe(0);
    await withPipelinedTransaction(pool, async (tx) => {
      tx.query('INSERT INTO pipeline_probe VALUES (11)');
      tx.commit();
    });
    expect(await count('SELECT count(*)::int AS n FROM pipeline_probe WHERE v = 11', [])).toBe(1);
    const client: PoolClient = await pool.connect();
    try {
      expect((client as unknown as { pipeline: boolean }).pipeline).toBe(false);
    } finally {
      client.release();
    }
  });

  /** A parameter pg cannot encode: its bind throws while the statement is queued (refused a microtask later). */
  const unencodable = (message: string, code?: string) => ({
    toPostgres: () => {
      throw Object.assign(new Error(message), code === undefined ? {} : { code });
    },
  });
  // Refused a tick after it is queued, without writing anything.
  const rowsOption = { text: 'SELECT 1', rows: 1 };

  it.each([
    ['a parameter that cannot be encoded', (tx: PipelinedTransaction) => tx.query('INSERT INTO pipeline_probe VALUES ($1)', [unencodable('no encoding')]), /no encoding/],
    ['the rows option', (tx: PipelinedTransaction) => tx.query(rowsOption), /rows. option is not supported in pipeline mode/],
  ])('a statement pg refuses before sending it (%s) rolls the batch back in the same write, and its error is thrown', async (_, refused, message) => {
    await db.pool.query('CREATE TABLE IF NOT EXISTS pipeline_probe (v int PRIMARY KEY)');
    await db.pool.query('DELETE FROM pipeline_probe WHERE v IN (30, 31)');
    // Writes until the last answer is in (the refused connection's Terminate, on release, is not the batch's).
    let batchWrites: number | undefined;
    const before = writes;
    const run = await withPipelinedTransaction(pool, async (tx) => {
      tx.query('INSERT INTO pipeline_probe VALUES (30)');
      refused(tx).catch(() => undefined);
      const after = tx.query('INSERT INTO pipeline_probe VALUES (31)');
      tx.commit();
      await after;
      batchWrites = writes - before;
    }).then(
      () => ({ ok: true as const }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    expect(run.ok).toBe(false);
    expect(!run.ok && run.error).toBeInstanceOf(Error);
    expect(!run.ok && (run.error as Error).message).toMatch(message);
    // The statements around the refused one ran, and were rolled back.
    expect(await count('SELECT count(*)::int AS n FROM pipeline_probe WHERE v IN (30, 31)', [])).toBe(0);
    expect(batchWrites).toBe(1);
  });

  it('after a refused statement the pool gives a working connection: out of pipeline mode, uncorked, its named statements usable', async () => {
    await db.pool.query('CREATE TABLE IF NOT EXISTS pipeline_probe (v int PRIMARY KEY)');
    const insert = (v: unknown) => ({ name: 'pipeline_probe_insert', text: 'INSERT INTO pipeline_probe VALUES ($1)', values: [v] });
    // Prepared on the connection first: the refused bind makes pg close it on the server.
    await withPipelinedTransaction(pool, async (tx) => {
      const ok = tx.query(insert(40));
      tx.commit();
      await ok;
    });
    let used: pg.PoolClient | undefined;
    const run = withPipelinedTransaction(pool, async (tx) => {
      used = tx.client;
      tx.query(insert(41));
      // A code (as Node's own errors have) that is no SQLSTATE: withClient alone would keep the connection.
      const refused = tx.query(insert(unencodable('named refusal', 'ERR_INVALID_ARG_TYPE')));
      tx.commit();
      await refused;
    });
    await expect(run).rejects.toThrow('named refusal');
    const raw = used as unknown as { pipeline: boolean; connection: { stream: Socket } };
    expect(raw.pipeline).toBe(false);
    expect(raw.connection.stream.writableCorked).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM pipeline_probe WHERE v IN (40, 41)', [])).toBe(1);
    // The named statement, plain and pipelined, on the pool's one connection.
    await pool.query(insert(42));
    const next = await writesDuring(() =>
      withPipelinedTransaction(pool, async (tx) => {
        const ok = tx.query(insert(43));
        tx.commit();
        await ok;
      }),
    );
    expect(next.writes).toBe(1);
    expect(await count('SELECT count(*)::int AS n FROM pipeline_probe WHERE v IN (42, 43)', [])).toBe(2);
  });

  it('a body that awaited before queueing the failing statement throws that failure, not the 25P02 it met after it', async () => {
    await db.pool.query('CREATE TABLE IF NOT EXISTS pipeline_probe (v int PRIMARY KEY)');
    const run = withPipelinedTransaction(pool, async (tx) => {
      const first = tx.query('INSERT INTO pipeline_probe VALUES (50)');
      tx.flush();
      await first;
      tx.query('INSERT INTO pipeline_probe VALUES (50)');
      const later = tx.query('SELECT 1');
      tx.commit();
      await later;
    });
    await expect(run).rejects.toMatchObject({ code: SqlState.UNIQUE_VIOLATION });
    expect(await count('SELECT count(*)::int AS n FROM pipeline_probe WHERE v = 50', [])).toBe(0);
  });

  it('a page commit with the afterTweets hook throws the bad row error, not the 25P02 of the advance behind it', async () => {
    const s = await newSlices(1);
    const badUser = makeUser('not-an-id');
    let hooked = false;
    const failing = commitPage(pool, page(s.jobId, s.sliceIds[0]!, { users: [badUser], nextCursor: 'n1' }), {
      afterTweets: async () => {
        hooked = true;
      },
    });
    await expect(failing).rejects.toMatchObject({ code: '22P02' });
    expect(hooked).toBe(true);
    expect(await getSlice(db.pool, s.sliceIds[0]!)).toMatchObject({ cursor: null, pages: 0 });
  });
});
