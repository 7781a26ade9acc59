/**
 * The conversations parents walk when many missing parents are not returned (deleted, protected,
 * a suspended account's thread): every page moves the walk on (its cursor rules the ids out), so
 * the runner's end after three empty or ten stale pages must not cut it short, and a repair that
 * starts a stopped walk again does not buy the ids it already found gone.
 */
import { describe, expect, it } from 'vitest';
import { conversationParentsSlice } from '../../src/jobs/kinds/conversations.ts';
import { createJob, createSlices } from '../../src/store/jobs.ts';
import { runCli } from '../helpers/cli.ts';
import { useHarness, type Harness } from '../helpers/harness.ts';

const publicUsers = (h: Harness) => h.sim.world.users.filter((u) => !u.protected && !u.suspended && !u.deleted);
const protectedUser = (h: Harness) => h.sim.world.users.find((u) => u.protected && !u.suspended && !u.deleted)!;
const bulkRequests = (h: Harness) => h.sim.control.requestLog().filter((r) => r.path === '/v3/tweet-info-bulk').length;

/**
 * `hidden` parents by a protected account (tweet-info-bulk does not return them), then `shown`
 * public ones with higher ids, and a public reply to each; a hydrate job holds the replies only.
 */
async function repliesToHiddenParents(h: Harness, hidden: number, shown: number): Promise<{ source: string; shownIds: string[] }> {
  const [a, b] = publicUsers(h);
  const now = Date.now();
  const hiddenIds = h.sim.control.addTweets(Array.from({ length: hidden }, (_, i) => ({ authorHandle: protectedUser(h).username, text: `hidden ${i}`, createdAtMs: now - 7_200_000 + i })));
  const shownIds = h.sim.control.addTweets(Array.from({ length: shown }, (_, i) => ({ authorHandle: a!.username, text: `a public parent ${i}`, createdAtMs: now - 3_600_000 + i })));
  const replies = h.sim.control.addTweets(
    [...hiddenIds, ...shownIds].map((id, i) => ({ authorHandle: b!.username, text: `reply ${i}`, inReplyToId: id, createdAtMs: now - 600_000 + i })),
  );
  const source = await h.submit({ kind: 'hydrate', params: { ids: replies } });
  expect((await h.runUntil(source, { timeoutMs: 60_000 })).status).toBe('completed');
  return { source, shownIds };
}

/** A conversations job holding the parents walk of `source` alone (no root walks), queued. */
async function parentsWalkJob(h: Harness, source: string, maxRequests?: number): Promise<string> {
  const jobId = await createJob(h.services.pool, { kind: 'conversations', params: { sourceJobId: source }, priority: 'backfill', maxRequests: maxRequests ?? null });
  if (maxRequests !== undefined) await h.services.gate.setBudget(jobId, maxRequests);
  const [sliceId] = await createSlices(h.services.pool, jobId, [{ kind: conversationParentsSlice.kind, params: { sourceJobId: source } }]);
  await h.services.queues.enqueueSlice('backfill', { jobId, sliceId: sliceId! });
  return jobId;
}

async function slices(h: Harness, jobId: string) {
  const { rows } = await h.services.pool.query<{ end_reason: string; pages: number }>(
    'SELECT end_reason, pages::int FROM job_slices WHERE job_id = $1::bigint ORDER BY id',
    [jobId],
  );
  return rows;
}

async function storedCount(h: Harness, ids: readonly string[]): Promise<number> {
  const { rows } = await h.services.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tweets WHERE id = ANY($1::bigint[]) AND source <> 'v2-embedded'", [ids]);
  return rows[0]!.n;
}

describe('conversation-parents walk past parents that are not returned', () => {
  const h = useHarness();

  it('walks past 1,000 unavailable parents in a row (ten empty, stale pages) to the public ones after them, and notes how many were not returned', { timeout: 120_000 }, async () => {
    const { source, shownIds } = await repliesToHiddenParents(h, 1000, 2);
    const jobId = await parentsWalkJob(h, source);
    const before = bulkRequests(h);
    const snap = await h.runUntil(jobId, { timeoutMs: 90_000 });
    expect(snap.status).toBe('completed');
    // Ten batches answered empty, then the batch of the two public parents.
    expect(bulkRequests(h) - before).toBe(11);
    expect(await slices(h, jobId)).toEqual([{ end_reason: 'end', pages: 11 }]);
    expect(await storedCount(h, shownIds)).toBe(2);
    expect(snap.note).toMatch(/1000 of 1002 missing parents asked for were not returned \(deleted or protected\)/);
    expect(snap.note).not.toMatch(/empty pages|brought no new id/);
  });

  it('a walk that got no parent back at all says so: an outage that answers empty stays visible', { timeout: 60_000 }, async () => {
    const { source } = await repliesToHiddenParents(h, 150, 0);
    const jobId = await parentsWalkJob(h, source);
    const snap = await h.runUntil(jobId, { timeoutMs: 30_000 });
    expect(snap.status).toBe('completed');
    expect(await slices(h, jobId)).toEqual([{ end_reason: 'end', pages: 2 }]);
    expect(snap.note).toMatch(/none of the 150 missing parents asked for was returned \(deleted or protected, or an outage that answers empty\)/);
  });

  it('audit --repair of a walk its budget stopped does not ask again for the parents it found gone', { timeout: 90_000 }, async () => {
    const { source, shownIds } = await repliesToHiddenParents(h, 200, 1);
    const jobId = await parentsWalkJob(h, source, 2);
    expect((await h.runUntil(jobId, { timeoutMs: 30_000 })).status).toBe('completed');
    expect(await slices(h, jobId)).toEqual([{ end_reason: 'budget', pages: 2 }]);
    expect(await storedCount(h, shownIds)).toBe(0);

    // Without --resume: the repair walks from its first page, but the 200 ids are known gone.
    const repair = await runCli(['audit', jobId, '--repair', '--max-requests', '5'], h.env);
    expect(repair.out).toMatch(/repair: queued 1 slice/);
    const before = bulkRequests(h);
    expect((await h.runUntil(jobId, { timeoutMs: 30_000 })).status).toBe('completed');
    expect(bulkRequests(h) - before).toBe(1);
    expect(await storedCount(h, shownIds)).toBe(1);
    expect((await slices(h, jobId)).at(-1)).toEqual({ end_reason: 'end', pages: 1 });
  });
});
