import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitPage } from '../../src/store/commit-page.ts';
import { createJob, createSlices } from '../../src/store/jobs.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { makeTweet, makeUser } from './fixtures.ts';

const doc = await readFile(new URL('../../docs/sql.md', import.meta.url), 'utf8');
// Each numbered heading's first sql block, prose between them allowed.
const examples = [...doc.matchAll(/^## (\d+\..+)\n(?:(?!## |```)[^\n]*\n)*```sql\n([\s\S]*?)```/gm)].map((m) => ({ title: m[1]!, sql: m[2]! }));
const numberedHeadings = [...doc.matchAll(/^## \d+\./gm)].length;

// The README's SQL block(s) must run too (they may hold several statements, each ending in ;).
const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
const readmeStatements = [...readme.matchAll(/```sql\n([\s\S]*?)```/g)]
  .flatMap((m) => m[1]!.split(/;\s*\n/))
  .map((sql) => sql.replace(/^--.*$/gm, '').trim())
  .filter((sql) => sql.length > 0);

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  const jobId = await createJob(db.pool, { kind: 'search', params: { query: '$BTC' } });
  expect(jobId).toBe('1'); // the examples use job 1
  const [sliceId] = await createSlices(db.pool, jobId, [{ kind: 'search-window', params: {} }]);
  const alice = makeUser('1700000000000000001', { username: 'alice', followersCount: 100 });
  const bob = makeUser('1700000000000000002', { username: 'bob' });
  const root = makeTweet('1800000000000000001', alice, { conversationId: '1800000000000000001' });
  const reply = makeTweet('1800000000000000002', bob, {
    conversationId: root.id, isReply: true, inReplyToTweetId: root.id, inReplyToUsername: 'alice',
    createdAt: new Date('2026-08-03T10:00:00Z'),
  });
  const quote = makeTweet('1800000000000000003', bob, { quoted: root, quotedTweetId: root.id, isQuoteStatus: true });
  const slice = { jobId, sliceId: sliceId! };
  await commitPage(db.pool, {
    ...slice, expectedCursor: null, nextCursor: 'c1', sliceDone: false, emptyPage: false,
    tweets: [root, reply, quote], users: [],
    quarantined: [{ endpoint: '/v3/search-tweets', reason: 'id is not a decimal string', payload: { id: 12 } }],
    requests: [
      { endpoint: '/v3/search-tweets', keyFingerprint: 'fp-a', status: 200, durationMs: 110, at: new Date('2026-09-01T00:00:00Z') },
      { endpoint: '/v3/search-tweets', keyFingerprint: 'fp-a', status: 500, durationMs: 900, at: new Date('2026-09-01T00:00:01Z') },
    ],
    observedAt: new Date('2026-09-01T00:00:02Z'),
  });
  await commitPage(db.pool, {
    ...slice, expectedCursor: 'c1', nextCursor: 'c2', sliceDone: false, emptyPage: false,
    tweets: [{ ...root, likeCount: 50, author: { ...alice, followersCount: 140 } }],
    users: [alice, bob], userRole: 'member',
    edges: [
      { kind: 'list_member', ownerId: '1500000000000000001', userIds: [alice.id, bob.id] },
      { kind: 'community_member', ownerId: '1600000000000000001', userIds: [bob.id] },
    ],
    observedAt: new Date('2026-09-02T00:00:00Z'),
  });
});

afterAll(async () => {
  await db?.drop();
});

describe('docs/sql.md examples', () => {
  it('has at least ten examples, and every numbered heading has one (none skipped by the reading above)', () => {
    expect(examples.length).toBeGreaterThanOrEqual(10);
    expect(examples.length).toBe(numberedHeadings);
  });

  it.each(examples)('runs and answers rows: $title', async ({ sql }) => {
    const { rows } = await db.pool.query(sql);
    expect(rows.length).toBeGreaterThan(0);
  });
});

describe('docs/sql.md example 9 (who left a list)', () => {
  it('flags only the members the latest complete crawl and the crawls after it did not see, whatever the clocks that stamped its pages', async () => {
    const sql = examples.find((e) => e.title.startsWith('9.'))!.sql;
    const list = '1500000000000000001';
    const leftOf = async () =>
      Object.fromEntries((await db.pool.query<{ id: string; left_list: boolean | null }>(sql)).rows.map((r) => [r.id, r.left_list]));
    // No complete crawl of the members yet: nobody is known to have left.
    expect(Object.values(await leftOf()).every((v) => v === null)).toBe(true);
    // A complete crawl that saw alice and carol as members, not bob. Its worker's clock ran an hour
    // behind: the stamps it wrote are older than the job's creation, and change nothing.
    const jobId = await createJob(db.pool, { kind: 'list', params: { listId: list } });
    const [sliceId] = await createSlices(db.pool, jobId, [{ kind: 'list-members', params: { listId: list } }]);
    await db.pool.query(`UPDATE job_slices SET status = 'done', end_reason = 'end', items = 2 WHERE id = $1::bigint`, [sliceId]);
    await db.pool.query(
      `INSERT INTO list_members (list_id, user_id, first_seen_at, last_seen_at) VALUES ($1::bigint, 1700000000000000003, now(), now() - interval '1 hour')`,
      [list],
    );
    await db.pool.query(`UPDATE list_members SET last_seen_at = now() - interval '1 hour' WHERE list_id = $1::bigint AND user_id = 1700000000000000001`, [list]);
    await db.pool.query(`INSERT INTO users (id, username, source, raw, first_seen_at, last_seen_at) VALUES (1700000000000000003, 'carol', 'v3', '{}', now(), now()) ON CONFLICT DO NOTHING`);
    await db.pool.query(
      `INSERT INTO job_users (job_id, user_id, role) VALUES ($1::bigint, 1700000000000000001, 'list_member'), ($1::bigint, 1700000000000000003, 'list_member'), ($1::bigint, 1700000000000000002, 'author')`,
      [jobId],
    );
    expect(await leftOf()).toEqual({ '1700000000000000001': false, '1700000000000000002': true, '1700000000000000003': false });

    // A later crawl the service answered empty (what its outages look like) is not complete: it
    // does not call everyone gone.
    const empty = await createJob(db.pool, { kind: 'list', params: { listId: list } });
    const [emptySlice] = await createSlices(db.pool, empty, [{ kind: 'list-members', params: { listId: list } }]);
    await db.pool.query(`UPDATE job_slices SET status = 'done', end_reason = 'end', items = 0 WHERE id = $1::bigint`, [emptySlice]);
    expect(await leftOf()).toEqual({ '1700000000000000001': false, '1700000000000000002': true, '1700000000000000003': false });
    // A later crawl stopped early that saw bob: bob is back, whatever it did not reach.
    const partial = await createJob(db.pool, { kind: 'list', params: { listId: list } });
    const [partialSlice] = await createSlices(db.pool, partial, [{ kind: 'list-members', params: { listId: list } }]);
    await db.pool.query(`UPDATE job_slices SET status = 'failed', items = 1 WHERE id = $1::bigint`, [partialSlice]);
    await db.pool.query(`INSERT INTO job_users (job_id, user_id, role) VALUES ($1::bigint, 1700000000000000002, 'list_member')`, [partial]);
    expect(await leftOf()).toEqual({ '1700000000000000001': false, '1700000000000000002': false, '1700000000000000003': false });
  });
});

describe('README SQL examples', () => {
  it('has some', () => {
    expect(readmeStatements.length).toBeGreaterThanOrEqual(2);
  });

  it.each(readmeStatements)('runs: %s', async (sql) => {
    await expect(db.pool.query(sql)).resolves.toBeDefined();
  });
});
