/**
 * How walks end, and what audit makes of it: a walk that plans its own pages ends on its own
 * empty page as complete, and a repair that walks a stopped listing again re-reads its pages
 * without taking them for a stuck service.
 */
import { describe, expect, it } from 'vitest';
import { auditJob } from '../../src/jobs/audit.ts';
import { conversationParentsSlice } from '../../src/jobs/kinds/conversations.ts';
import { createJob, createSlices } from '../../src/store/jobs.ts';
import { runCli } from '../helpers/cli.ts';
import { useHarness } from '../helpers/harness.ts';

describe('a walk that ends on an empty page', () => {
  const h = useHarness();

  it("is the end of a walk that plans its own pages: a parents walk whose last level is gone", async () => {
    const pub = h.sim.world.users.filter((u) => !u.protected && !u.suspended && !u.deleted);
    const hidden = h.sim.world.users.find((u) => u.protected && !u.suspended && !u.deleted)!;
    const [a, b] = pub;
    const now = Date.now();
    const [root] = h.sim.control.addTweets([{ authorHandle: a!.username, text: 'root', createdAtMs: now - 60_000 }]);
    const [p1] = h.sim.control.addTweets([{ authorHandle: hidden.username, text: 'protected reply', inReplyToId: root!, createdAtMs: now - 50_000 }]);
    const [p2] = h.sim.control.addTweets([{ authorHandle: b!.username, text: 'reply', inReplyToId: p1!, createdAtMs: now - 40_000 }]);
    const [leaf] = h.sim.control.addTweets([{ authorHandle: a!.username, text: 'leaf', inReplyToId: p2!, createdAtMs: now - 30_000 }]);
    const source = await h.submit({ kind: 'hydrate', params: { ids: [leaf!] } });
    expect((await h.runUntil(source)).status).toBe('completed');
    const jobId = await createJob(h.services.pool, { kind: 'conversations', params: { sourceJobId: source }, priority: 'backfill' });
    const [sliceId] = await createSlices(h.services.pool, jobId, [{ kind: conversationParentsSlice.kind, params: { sourceJobId: source } }]);
    await h.services.queues.enqueueSlice('backfill', { jobId, sliceId: sliceId! });
    const snap = await h.runUntil(jobId, { timeoutMs: 60_000 });
    expect(snap.status).toBe('completed');
    expect(snap.note).toMatch(/1 of 2 missing parents asked for were not returned \(deleted or protected\)/);
    expect(snap.note).not.toMatch(/outage/);
    const { rows } = await h.services.pool.query<{ pages: string; end_reason: string }>('SELECT pages::text, end_reason FROM job_slices WHERE job_id = $1', [jobId]);
    expect(rows).toEqual([{ pages: '2', end_reason: 'end' }]);
    expect((await auditJob(h.services.pool, jobId))?.complete).toBe(true);
  });
});

describe('audit --repair of a stopped listing', () => {
  const h = useHarness();

  it('re-reads the pages the stopped walk read without taking them for a stuck service', { timeout: 90_000 }, async () => {
    const w = h.sim.world;
    const list = [...w.lists].sort((a, b) => b.members.length - a.members.length)[0]!;
    const jobId = await h.submit({ kind: 'list', params: { listId: list.id } });
    expect((await h.runUntil(jobId, { timeoutMs: 60_000 })).status).toBe('completed');
    const { rows } = await h.services.pool.query<{ id: string; pages: number }>(
      "SELECT id::text, pages::int FROM job_slices WHERE job_id = $1 AND kind = 'list-members'",
      [jobId],
    );
    expect(rows[0]!.pages).toBeGreaterThan(10); // more than HARVEST_MAX_STALE_PAGES
    // As if a budget had stopped it: the repair walks it again from its first page, and every
    // page it re-reads is one the job stored.
    await h.services.pool.query("UPDATE job_slices SET end_reason = 'budget' WHERE id = $1", [rows[0]!.id]);
    expect((await runCli(['audit', jobId], h.env)).code).toBe(2);
    expect((await runCli(['audit', jobId, '--repair'], h.env)).out).toMatch(/repair: queued 1 slice/);
    expect((await h.runUntil(jobId, { timeoutMs: 60_000 })).status).toBe('completed');
    const { rows: repaired } = await h.services.pool.query<{ pages: number; end_reason: string }>(
      "SELECT pages::int, end_reason FROM job_slices WHERE job_id = $1 AND kind = 'list-members' AND id > $2",
      [jobId, rows[0]!.id],
    );
    expect(repaired).toEqual([{ pages: rows[0]!.pages, end_reason: 'end' }]);
    expect((await runCli(['audit', jobId], h.env)).code).toBe(0);
  });
});
