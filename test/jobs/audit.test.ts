/**
 * harvest audit: completeness from Postgres alone. A budget-stopped search job's uncovered ranges
 * are listed (exit 2, no request), and --repair completes it with exactly the matching set.
 */
import { describe, expect, it } from 'vitest';
import { auditFromInput, repairPlanSlices, repairSlices } from '../../src/jobs/audit.ts';
import { runCli } from '../helpers/cli.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';
import { expectedSearchIds } from './ground-truth.ts';

describe('harvest audit', () => {
  const h = useHarness();
  const requests = () => h.sim.control.requestLog().filter((r) => r.path.startsWith('/v3/')).length;

  it('reports a budget-stopped search job per day, exits 2 without a request, and --repair completes it exactly', async () => {
    const query = 'lang:en';
    const expected = expectedSearchIds(h.sim.world, `${query} since:2026-10-01 until:2026-10-08`);
    const jobId = await h.submit({ kind: 'search', params: { query, since: '2026-10-01', until: '2026-10-08' }, maxRequests: 4 });
    const stopped = await h.runUntil(jobId);
    expect(stopped.status).toBe('completed');
    const partial = await jobTweetIds(h, jobId);
    expect(partial.length).toBeLessThan(expected.length);

    const before = requests();
    const audit = await runCli(['audit', jobId], h.env);
    expect(requests()).toBe(before);
    expect(audit.code).toBe(2);
    expect(audit.out).toMatch(/NOT complete/);
    expect(audit.out).toMatch(/2026-10-01\s+\d+\s+\d+\s+stopped early: budget/);
    expect(audit.out).toMatch(/uncovered ranges:\n\s+2026-10-0\d.*budget \(slice \d+\)/);
    // Outside the uncovered ranges, everything the query matches is already stored.
    const ranges = [...audit.out.matchAll(/^\s+(\S+) \.\. (\S+)\s+budget/gm)].map((m) => [Date.parse(m[1]!), Date.parse(m[2]!)] as const);
    expect(ranges.length).toBeGreaterThan(0);
    const msOf = (id: string) => Number((BigInt(id) >> 22n) + 1288834974657n);
    const outside = expected.filter((id) => !ranges.some(([lo, hi]) => msOf(id) >= lo && msOf(id) < hi));
    expect(outside.filter((id) => !partial.includes(id))).toEqual([]);
    // `status` says as much: the share walked is about what the uncovered ranges leave (it read
    // 100%). About: a parent that walked past its hand-over point counts that stretch unwalked in
    // its child (job-progress.ts), a few pages of a split.
    const uncovered = ranges.reduce((sum, [lo, hi]) => sum + (hi - lo), 0) / (7 * 86_400_000);
    expect(stopped.fractionDone).toBeLessThanOrEqual(1 - uncovered + 0.001);
    expect(stopped.fractionDone).toBeGreaterThan(1 - uncovered - 0.1);

    // The repair's own budget (without one, the job's budget again: 4 would not be enough).
    const repair = await runCli(['audit', jobId, '--repair', '--max-requests', '200'], h.env);
    expect(repair.code).toBe(2);
    expect(repair.out).toMatch(/repair: queued \d+ slice\(s\)/);
    // A second --repair before any worker took the first one's slices queues nothing.
    const twice = await runCli(['audit', jobId, '--repair', '--max-requests', '200'], h.env);
    expect(twice.out).toMatch(/nothing to repair yet/);
    const repaired = await h.runUntil(jobId, { timeoutMs: 60_000 });
    expect(repaired.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
    // The repair's slices walked what the stopped ones left: nothing is counted twice.
    expect(repaired.fractionDone).toBe(1);

    const again = await runCli(['audit', jobId], h.env);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/complete/);
    expect(again.out).not.toMatch(/stopped early/);
  });

  it("--repair without --max-requests gives the job the budget it was asked with, every time (not the last repair's doubled)", { timeout: 90_000 }, async () => {
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-01', until: '2026-10-08' }, maxRequests: 4 });
    expect((await h.runUntil(jobId)).status).toBe('completed');
    const budgetOf = async () =>
      (await h.services.pool.query<{ max: string; spent: string; run: string }>('SELECT max_requests::text AS max, requests_spent::text AS spent, run_budget::text AS run FROM jobs WHERE id = $1::bigint', [jobId])).rows[0]!;
    for (let repair = 0; repair < 3; repair++) {
      const before = await budgetOf();
      const run = await runCli(['audit', jobId, '--repair'], h.env);
      expect(run.out).toMatch(/repair: queued \d+ slice/);
      const reopened = await budgetOf();
      expect([reopened.max, reopened.run]).toEqual([String(Number(before.spent) + 4), '4']);
      expect((await h.runUntil(jobId, { timeoutMs: 60_000 })).status).toBe('completed');
      const after = await budgetOf();
      expect(Number(after.spent) - Number(before.spent)).toBeLessThanOrEqual(4);
    }
  });

  it('--repair --resume goes on from where budget-stopped listing walks stopped: no page is bought twice', { timeout: 120_000 }, async () => {
    const list = [...h.sim.world.lists].sort((a, b) => b.members.length + b.followers.length - (a.members.length + a.followers.length))[0]!;
    const perPath = (since: number) => {
      const counts = new Map<string, number>();
      for (const r of h.sim.control.requestLog().slice(since)) if (r.status === 200 && r.path !== '/v3/key-usage-info') counts.set(r.path, (counts.get(r.path) ?? 0) + 1);
      return counts;
    };
    // What a crawl of the whole list costs, walk by walk.
    let mark = h.sim.control.requestLog().length;
    expect((await h.runUntil(await h.submit({ kind: 'list', params: { listId: list.id } }), { timeoutMs: 60_000 })).status).toBe('completed');
    const whole = perPath(mark);
    expect((whole.get('/v3/list-members') ?? 0) + (whole.get('/v3/list-followers') ?? 0)).toBeGreaterThan(6);

    // The same crawl a fifth of its requests at a time: the first run, then repairs that go on.
    const budget = Math.ceil([...whole.values()].reduce((a, b) => a + b, 0) / 5);
    mark = h.sim.control.requestLog().length;
    const jobId = await h.submit({ kind: 'list', params: { listId: list.id }, maxRequests: budget });
    expect((await h.runUntil(jobId)).status).toBe('completed');
    let repairs = 0;
    for (; repairs < 12; repairs++) {
      const audit = await runCli(['audit', jobId, '--repair', '--resume'], h.env);
      if (audit.code === 0) break;
      expect(audit.out).toMatch(/repair: queued \d+ slice/);
      expect((await h.runUntil(jobId, { timeoutMs: 60_000 })).status).toBe('completed');
    }
    expect(repairs).toBeGreaterThan(0);
    expect(repairs).toBeLessThan(12);
    // Every walk read each of its pages once, as the whole crawl did.
    expect(perPath(mark)).toEqual(whole);
    const members = await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM job_users WHERE job_id = $1::bigint AND role = $2', [jobId, 'list_member']);
    expect(members.rows[0]!.n).toBeGreaterThan(0);
    expect((await runCli(['audit', jobId, '--resume'], h.env)).err).toBe('harvest: --resume goes with --repair');
  });

  it('walks the service answered empty are listed, and --repair --recheck-empty reads them again', { timeout: 90_000 }, async () => {
    const query = 'lang:fr';
    const range = { since: '2026-10-12', until: '2026-10-14' };
    const expected = expectedSearchIds(h.sim.world, `${query} since:${range.since} until:${range.until}`);
    expect(expected.length).toBeGreaterThan(0);
    // An outage answering empty from the job's first request on: every walk ends at once.
    h.sim.control.setFaults({ emptyEndRate: 1 });
    const jobId = await h.submit({ kind: 'search', params: { query, ...range } });
    const snap = await h.runUntil(jobId, { timeoutMs: 60_000 });
    h.sim.control.setFaults({ emptyEndRate: 0 });
    expect([snap.status, snap.tweets]).toEqual(['completed', 0]);

    const audit = await runCli(['audit', jobId], h.env);
    expect(audit.code).toBe(0); // a quiet range looks the same
    expect(audit.out).toMatch(/answered empty \(a quiet range, or an outage that answers empty; --repair --recheck-empty reads them again\): \d+/);
    const alone = await runCli(['audit', jobId, '--recheck-empty'], h.env);
    expect([alone.code, alone.err.trim()]).toEqual([1, 'harvest: --recheck-empty goes with --repair']);

    const repair = await runCli(['audit', jobId, '--repair', '--recheck-empty'], h.env);
    expect(repair.out).toMatch(/repair: queued \d+ slice/);
    expect((await h.runUntil(jobId, { timeoutMs: 60_000 })).status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
    const again = await runCli(['audit', jobId], h.env);
    expect(again.code).toBe(0);
    expect(again.out).not.toMatch(/answered empty/);
  });

  it('a complete job audits clean; an unknown job is exit 1', async () => {
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-10', until: '2026-10-11' } });
    expect((await h.runUntil(jobId)).status).toBe('completed');
    const r = await runCli(['audit', jobId], h.env);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/2026-10-10\s+\d+\s+\d+\s+to the end of results/);
    expect((await runCli(['audit', '999999'], h.env)).code).toBe(1);
  });
});

describe('auditFromInput', () => {
  const job = { id: '1', kind: 'search', status: 'completed' as const, params: {}, priority: 'backfill' as const, maxRequests: null, runBudget: null, requestsSpent: 0 };
  const D = Date.parse('2026-10-01T00:00:00Z');
  const H = 3_600_000;

  it('subtracts what each walk covered from the job range, whatever split it', () => {
    const report = auditFromInput({
      job,
      tweetsPerDay: new Map(),
      slices: [
        // walked [D+10h, D+24h) then handed [D, D+10h) to slice 2, which stopped at D+6h on the budget
        { id: '1', kind: 'search', params: { query: 'q', order: 'latest', sinceMs: D, untilMs: D + 24 * H, stopBelowMs: D + 10 * H }, status: 'done', endReason: 'bound', pages: 5, items: 100, oldestMs: D + 9 * H },
        { id: '2', kind: 'search', params: { query: 'q', order: 'latest', sinceMs: D, untilMs: D + 10 * H }, status: 'done', endReason: 'budget', pages: 2, items: 40, oldestMs: D + 6 * H },
      ],
    });
    expect(report.complete).toBe(false);
    expect(report.uncovered).toEqual([
      expect.objectContaining({ sinceMs: D, untilMs: D + 6 * H + 1, reason: 'budget', sliceId: '2', base: { query: 'q', order: 'latest' } }),
    ]);
    expect(report.days.map((d) => d.stopped)).toEqual([['budget (slice 2)']]);
  });

  it('a walk done before end reasons were recorded counts as complete; empty pages and a repeated cursor do not', () => {
    const slice = (id: string, endReason: string | null) => ({
      id, kind: 'search', params: { query: 'q', order: 'latest', sinceMs: D + Number(id) * H, untilMs: D + (Number(id) + 1) * H }, status: 'done', endReason, pages: 1, items: 20, oldestMs: null,
    });
    const report = auditFromInput({ job, tweetsPerDay: new Map(), slices: [slice('0', null), slice('1', 'empty-pages'), slice('2', 'repeated-cursor'), slice('3', 'end')] });
    expect(report.uncovered.map((u) => [u.reason, u.sinceMs, u.untilMs])).toEqual([
      ['empty-pages', D + H, D + 2 * H],
      ['repeated-cursor', D + 2 * H, D + 3 * H],
    ]);
  });

  it('lists the latest walk of each range the service answered empty, until one brings items', () => {
    const base = { query: 'q', order: 'latest' };
    const walk = (id: string, from: number, items: number, endReason = 'end') => ({
      id, kind: 'search', params: { ...base, sinceMs: D + from * H, untilMs: D + (from + 1) * H }, status: 'done', endReason, pages: 1, items, oldestMs: null,
    });
    const report = auditFromInput({ job, tweetsPerDay: new Map(), slices: [walk('1', 0, 0), walk('2', 1, 0), walk('3', 2, 5), walk('4', 1, 0), walk('5', 0, 3), walk('6', 3, 0, 'budget')] });
    // 1 was read again with items (5); 2 again, still empty (4); 6 stopped early, not answered.
    expect(report.answeredEmpty.map((w) => [w.sliceId, w.sinceMs, w.untilMs])).toEqual([['4', D + H, D + 2 * H]]);
    expect(report.complete).toBe(false);
    expect(repairSlices(report, { recheckEmpty: true })).toContainEqual({ kind: 'search', params: { ...base, sinceMs: D + H, untilMs: D + 2 * H } });
    expect(repairSlices(report)).not.toContainEqual({ kind: 'search', params: { ...base, sinceMs: D + H, untilMs: D + 2 * H } });
  });

  it('a walk without a range stopped twice is listed and queued once; a recheck that split still answers for its range', () => {
    const timeline = (id: string, status: string, endReason: string | null) => ({ id, kind: 'timeline', params: { user: 'u' }, status, endReason, pages: 3, items: 60, oldestMs: null });
    const stopped = auditFromInput({ job, tweetsPerDay: new Map(), slices: [timeline('1', 'failed', null), timeline('2', 'done', 'empty-pages')] });
    expect(stopped.unfinished.map((w) => [w.sliceId, w.reason])).toEqual([['2', 'empty-pages']]);
    expect(repairSlices(stopped)).toEqual([{ kind: 'timeline', params: { user: 'u' } }]);
    expect(auditFromInput({ job, tweetsPerDay: new Map(), slices: [timeline('1', 'failed', null), timeline('3', 'done', 'end')] }).unfinished).toEqual([]);

    const base = { query: 'q', order: 'latest' };
    const empty = { id: '1', kind: 'search', params: { ...base, sinceMs: D, untilMs: D + H }, status: 'done', endReason: 'end', pages: 1, items: 0, oldestMs: null };
    // Read again with --recheck-empty: tweets this time, and half the range handed to a child.
    const recheck = { ...empty, id: '2', params: { ...empty.params, stopBelowMs: D + H / 2 }, endReason: 'bound', items: 40, oldestMs: D + H / 2 };
    const child = { ...empty, id: '3', params: { ...base, sinceMs: D, untilMs: D + H / 2 }, items: 30, oldestMs: D };
    expect(auditFromInput({ job, tweetsPerDay: new Map(), slices: [empty, recheck, child] }).answeredEmpty).toEqual([]);
  });

  it('a repair plan leaves out ranges pending or running slices will walk, and walks queued again', () => {
    const base = { query: 'q', order: 'latest' };
    const stopped = { id: '1', kind: 'search', params: { ...base, sinceMs: D, untilMs: D + 24 * H }, status: 'done', endReason: 'budget', pages: 2, items: 40, oldestMs: D + 20 * H };
    const timeline = { id: '2', kind: 'timeline', params: { user: 'u' }, status: 'failed', endReason: null, pages: 1, items: 20, oldestMs: null };
    const first = repairPlanSlices({ job, tweetsPerDay: new Map(), slices: [stopped, timeline] });
    expect(first).toEqual([
      { kind: 'search', params: { ...base, sinceMs: D, untilMs: D + 20 * H + 1 } },
      { kind: 'timeline', params: { user: 'u' } },
    ]);
    // The first repair's slices, not taken by a worker yet (one running without a tweet yet).
    const queued = first.map((s, i) => ({ id: String(3 + i), kind: s.kind, params: s.params as Record<string, unknown>, status: i === 0 ? 'pending' : 'running', endReason: null, pages: 0, items: 0, oldestMs: null }));
    expect(repairPlanSlices({ job, tweetsPerDay: new Map(), slices: [stopped, timeline, ...queued] })).toEqual([]);
    // A pending slice over part of the gap leaves the rest to queue.
    const part = { id: '9', kind: 'search', params: { ...base, sinceMs: D + 10 * H, untilMs: D + 20 * H + 1 }, status: 'pending', endReason: null, pages: 0, items: 0, oldestMs: null };
    expect(repairPlanSlices({ job, tweetsPerDay: new Map(), slices: [stopped, part] })).toEqual([{ kind: 'search', params: { ...base, sinceMs: D, untilMs: D + 10 * H } }]);
  });
});
