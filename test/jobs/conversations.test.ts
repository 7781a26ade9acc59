import { describe, expect, it } from 'vitest';
import { conversationParentsSlice, estimateConversations, submitConversations } from '../../src/jobs/kinds/conversations.ts';
import { createJob, createSlices } from '../../src/store/jobs.ts';
import { runCli } from '../helpers/cli.ts';
import { useHarness, type Harness } from '../helpers/harness.ts';

/** A thread the simulator holds: root ← p1 ← p2 ← leaf, and a sibling reply to the root. */
function addThread(h: Harness): { root: string; p1: string; p2: string; leaf: string; sibling: string } {
  const [a, b, c] = h.sim.world.users.filter((u) => !u.protected && !u.suspended && !u.deleted);
  const now = Date.now();
  const [root] = h.sim.control.addTweets([{ authorHandle: a!.username, text: 'a thread starts here', createdAtMs: now - 60_000 }]);
  const [p1] = h.sim.control.addTweets([{ authorHandle: b!.username, text: 'first reply', inReplyToId: root!, createdAtMs: now - 50_000 }]);
  const [p2] = h.sim.control.addTweets([{ authorHandle: c!.username, text: 'second reply', inReplyToId: p1!, createdAtMs: now - 40_000 }]);
  const [leaf] = h.sim.control.addTweets([{ authorHandle: a!.username, text: 'third reply', inReplyToId: p2!, createdAtMs: now - 30_000 }]);
  const [sibling] = h.sim.control.addTweets([{ authorHandle: c!.username, text: 'a reply to the root', inReplyToId: root!, createdAtMs: now - 20_000 }]);
  return { root: root!, p1: p1!, p2: p2!, leaf: leaf!, sibling: sibling! };
}

/** A job holding only `ids` (hydrated), so their parents are missing from Postgres. */
async function sourceJob(h: Harness, ids: string[]): Promise<string> {
  const jobId = await h.submit({ kind: 'hydrate', params: { ids } });
  expect((await h.runUntil(jobId)).status).toBe('completed');
  return jobId;
}

const bulkRequests = (h: Harness) => h.sim.control.requestLog().filter((r) => r.path === '/v3/tweet-info-bulk').length;

/** The conversation-parents walk of `source` alone, run to its end; answers the requests it spent. */
async function walkParents(h: Harness, source: string): Promise<number> {
  const jobId = await createJob(h.services.pool, { kind: 'conversations', params: { sourceJobId: source }, priority: 'backfill' });
  const [sliceId] = await createSlices(h.services.pool, jobId, [{ kind: conversationParentsSlice.kind, params: { sourceJobId: source } }]);
  await h.services.queues.enqueueSlice('backfill', { jobId, sliceId: sliceId! });
  const before = bulkRequests(h);
  expect((await h.runUntil(jobId)).status).toBe('completed');
  return bulkRequests(h) - before;
}

/** `id` held only as a v2 embedded copy (a quote's): text, time and counts, not what it replies to. */
async function storeEmbeddedCopy(h: Harness, id: string, text: string): Promise<void> {
  await h.services.pool.query("INSERT INTO tweets (id, full_text, created_at, source, raw) VALUES ($1, $2, now(), 'v2-embedded', '{}')", [id, text]);
}

describe('conversations', () => {
  const h = useHarness();

  it('fetches the missing parents and the root\'s replies; the threads view shows root, depth and path', async () => {
    const t = addThread(h);
    const source = await sourceJob(h, [t.leaf]);
    const stored = await h.services.pool.query<{ id: string }>('SELECT id::text FROM tweets WHERE id = ANY($1::bigint[])', [[t.root, t.p1, t.p2]]);
    expect(stored.rows).toEqual([]); // the parents are missing

    const before = bulkRequests(h);
    const { jobId, roots } = await submitConversations(
      { pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate },
      { params: { sourceJobId: source } },
    );
    expect(roots).toBe(1);
    expect((await h.runUntil(jobId)).status).toBe('completed');
    // At most one request per level (p2, p1, the root): fewer when the root's reply walks, which
    // run alongside, stored a parent before the parents walk reached its level.
    expect(bulkRequests(h) - before).toBeGreaterThanOrEqual(1);
    expect(bulkRequests(h) - before).toBeLessThanOrEqual(3);

    const { rows } = await h.services.pool.query<{ tweet_id: string; root_id: string; depth: number; path: string[]; root_complete: boolean }>(
      'SELECT tweet_id::text, root_id::text, depth, path, root_complete FROM threads WHERE root_id = $1::bigint ORDER BY depth, tweet_id',
      [t.root],
    );
    const byId = new Map(rows.map((r) => [r.tweet_id, r]));
    expect(byId.get(t.leaf)).toEqual({ tweet_id: t.leaf, root_id: t.root, depth: 3, path: [t.root, t.p1, t.p2, t.leaf], root_complete: true });
    expect(byId.get(t.root)).toMatchObject({ depth: 0, path: [t.root] });
    // The sibling came from the root's replies (the listing and the conversation_id: search).
    expect(byId.get(t.sibling)).toMatchObject({ depth: 1, path: [t.root, t.sibling] });
    const mine = await h.services.pool.query<{ id: string }>('SELECT tweet_id::text AS id FROM job_tweets WHERE job_id = $1::bigint', [jobId]);
    expect(mine.rows.map((r) => r.id)).toEqual(expect.arrayContaining([t.root, t.p1, t.p2, t.sibling]));
  });

  it('the parents walk alone climbs one level a request, planning each from Postgres, and stops at the root', async () => {
    const t = addThread(h);
    const source = await sourceJob(h, [t.leaf]);
    const spent = await walkParents(h, source);
    expect(spent).toBe(3); // p2, then p1, then the root, which replies to nothing
    const { rows } = await h.services.pool.query<{ path: string[] }>('SELECT path FROM threads WHERE tweet_id = $1::bigint', [t.leaf]);
    expect(rows).toEqual([{ path: [t.root, t.p1, t.p2, t.leaf] }]);
  });

  it('a chain whose parent is missing starts at its highest stored tweet, not complete', async () => {
    const t = addThread(h);
    await sourceJob(h, [t.leaf]);
    const { rows } = await h.services.pool.query<{ root_id: string; depth: number; root_complete: boolean }>(
      'SELECT root_id::text, depth, root_complete FROM threads WHERE tweet_id = $1::bigint',
      [t.leaf],
    );
    expect(rows).toEqual([{ root_id: t.leaf, depth: 0, root_complete: false }]);
  });

  it('a parent held only as a v2 embedded copy is no root: the walk fetches it in full and climbs on', async () => {
    const t = addThread(h);
    const source = await sourceJob(h, [t.leaf]);
    // p2 as a v2 tweet embeds it when quoting: text, time and counts, not what it replies to.
    await storeEmbeddedCopy(h, t.p2, 'second reply');
    const root = async () =>
      (await h.services.pool.query<{ root_id: string; root_complete: boolean }>('SELECT root_id::text, root_complete FROM threads WHERE tweet_id = $1::bigint', [t.leaf])).rows;
    expect(await root()).toEqual([{ root_id: t.p2, root_complete: false }]);

    const spent = await walkParents(h, source);
    expect(spent).toBe(3); // p2 in full, then p1, then the root
    expect(await root()).toEqual([{ root_id: t.root, root_complete: true }]);
  });

  it('a grandparent held only as a v2 embedded copy is fetched in full too: the walk does not stop below it', async () => {
    const t = addThread(h);
    const source = await sourceJob(h, [t.leaf]);
    // p1, two levels up, known only as an embedded copy: the page that brings p2 must go on to it.
    await storeEmbeddedCopy(h, t.p1, 'first reply');
    const spent = await walkParents(h, source);
    expect(spent).toBe(3); // p2, p1 in full, then the root
    const { rows } = await h.services.pool.query('SELECT root_id::text, root_complete FROM threads WHERE tweet_id = $1::bigint', [t.leaf]);
    expect(rows).toEqual([{ root_id: t.root, root_complete: true }]);
  });

  it('a parent another job stored in full does not end the walk: the walk climbs on past it to what is missing above', async () => {
    const t = addThread(h);
    const source = await sourceJob(h, [t.leaf]);
    // p1, two levels up, stored in full by another job; its own parent (the root) is not stored.
    await sourceJob(h, [t.p1]);
    const spent = await walkParents(h, source);
    expect(spent).toBe(2); // p2, then the root above the stored p1
    const { rows } = await h.services.pool.query('SELECT root_id::text, root_complete FROM threads WHERE tweet_id = $1::bigint', [t.leaf]);
    expect(rows).toEqual([{ root_id: t.root, root_complete: true }]);
  });

  it('--max-requests is exact: the job spends that many requests and not one more', async () => {
    const t = addThread(h);
    const source = await sourceJob(h, [t.leaf]);
    // The job's requests: everything but the limiter's quota checks (key-usage-info).
    const sent = () => h.sim.control.requestLog().filter((r) => r.path !== '/v3/key-usage-info').length;
    const before = sent();
    const run = await runCli(['conversations', source, '--max-requests', '2', '--wait'], h.env);
    const jobId = run.out.split('\n')[0]!;
    expect(jobId, run.err).toMatch(/^\d+$/);
    expect(sent() - before).toBe(2);
    const { rows } = await h.services.pool.query<{ requests_spent: number }>('SELECT requests_spent::int FROM jobs WHERE id = $1::bigint', [jobId]);
    expect(rows[0]!.requests_spent).toBe(2);
  });

  it('--estimate counts in Postgres with no key given, and sends and queues nothing', async () => {
    const t = addThread(h);
    const source = await sourceJob(h, [t.leaf]);
    const sent = () => h.sim.control.requestLog().length;
    const jobs = async () => (await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n;
    const [before, count] = [sent(), await jobs()];
    const r = await runCli(['conversations', source, '--estimate'], { ...h.env, HARVEST_API_KEYS: '' });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^requests\s+at least \d+/);
    expect(sent()).toBe(before);
    expect(await jobs()).toBe(count);
    // Queueing the job needs a key, and says so in one line.
    const refused = await runCli(['conversations', source], { ...h.env, HARVEST_API_KEYS: '' });
    expect(refused.code).not.toBe(0);
    expect(refused.err).toMatch(/^harvest: HARVEST_API_KEYS is not set/);
    expect(await jobs()).toBe(count);
  });

  it("weighs each root's reply walks by its stored reply count", async () => {
    const t = addThread(h);
    const source = await sourceJob(h, [t.root, t.leaf]);
    // The root as stored says 45 replies: 3 pages for each of its two walks. One parent (p2) is
    // missing one level up.
    await h.services.pool.query('UPDATE tweets SET reply_count = 45 WHERE id = $1::bigint', [t.root]);
    const e = await estimateConversations(h.services.pool, { sourceJobId: source });
    expect(e).toEqual({ missingParents: 1, roots: 1, skippedRoots: 0, rootReplies: 45, requests: 1 + 2 * 3 });
  });

  it('a job its budget stopped continues with audit --repair, walking only what did not finish', { timeout: 90_000 }, async () => {
    const [t1, t2] = [addThread(h), addThread(h)];
    const source = await sourceJob(h, [t1.leaf, t2.leaf]);
    const { jobId } = await submitConversations(
      { pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate },
      { params: { sourceJobId: source }, maxRequests: 2 },
    );
    expect((await h.runUntil(jobId, { timeoutMs: 60_000 })).status).toBe('completed');
    expect((await runCli(['audit', jobId], h.env)).code).toBe(2);
    const repair = await runCli(['audit', jobId, '--repair', '--max-requests', '100'], h.env);
    expect(repair.out).toMatch(/repair: queued \d+ slice/);
    expect((await h.runUntil(jobId, { timeoutMs: 60_000 })).status).toBe('completed');
    const audit = await runCli(['audit', jobId], h.env);
    expect(audit.code, audit.out).toBe(0);
    const { rows } = await h.services.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM job_tweets WHERE job_id = $1::bigint AND tweet_id = ANY($2::bigint[])',
      [jobId, [t1.root, t1.sibling, t2.root, t2.sibling]],
    );
    expect(rows[0]!.n).toBe(4);
  });

  it('refuses an unknown or malformed job id with one line, queueing nothing', async () => {
    const jobs = async () => (await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n;
    const count = await jobs();
    const unknown = await runCli(['conversations', '999999'], h.env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.err).toMatch(/there is no job 999999; nothing was queued/);
    const bad = await runCli(['conversations', 'abc'], h.env);
    expect(bad.code).not.toBe(0);
    expect(bad.err.split('\n')).toHaveLength(1);
    expect(await jobs()).toBe(count);
  });
});
