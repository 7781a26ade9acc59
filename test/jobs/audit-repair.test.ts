/**
 * `audit --repair` as a researcher meets it: an explicit --max-requests always bounds the repair,
 * a crawl stopped by --max-tweets can be finished a repair at a time, a 404 is an end (listed
 * apart, never bought again), a recheck already queued is not queued twice, a cancelled job is
 * reopened (a cancelled watch refused), a walk that sent no request is not "answered empty", and
 * the day table claims nothing for days no ranged walk read.
 */
import { describe, expect, it } from 'vitest';
import { auditFromInput, repairPlanSlices } from '../../src/jobs/audit.ts';
import { submitConversations } from '../../src/jobs/kinds/conversations.ts';
import type { AuditSliceRow } from '../../src/store/audit.ts';
import { jobBudgets } from '../../src/store/job-control.ts';
import { runCli } from '../helpers/cli.ts';
import { useHarness, type Harness } from '../helpers/harness.ts';

const sent = (h: Harness, path?: string) =>
  h.sim.control.requestLog().filter((r) => r.path !== '/v3/key-usage-info' && (path === undefined || r.path === path)).length;

const publicUsers = (h: Harness) => h.sim.world.users.filter((u) => !u.protected && !u.suspended && !u.deleted);

/** The public user with the most tweets in the world. */
const busiest = (h: Harness) =>
  [...publicUsers(h)].sort((a, b) => h.sim.world.tweetsByAuthor(b.index).length - h.sim.world.tweetsByAuthor(a.index).length)[0]!;

const jobTweets = async (h: Harness, jobId: string) =>
  (await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM job_tweets WHERE job_id = $1::bigint', [jobId])).rows[0]!.n;

describe('audit --repair of listings', () => {
  const h = useHarness();

  it('--repair --max-requests N bounds the repair of a job submitted without a budget: at most N requests reach the service', { timeout: 120_000 }, async () => {
    // No budget of its own; a cursor that repeats after 2 pages stops its timeline early.
    h.sim.control.setFaults({ repeatCursorAfterPages: 2 });
    const jobId = await h.submit({ kind: 'user', params: { target: { username: busiest(h).username } } });
    expect((await h.runUntil(jobId, { timeoutMs: 60_000 })).status).toBe('completed');
    h.sim.control.setFaults({ repeatCursorAfterPages: null });
    expect((await runCli(['audit', jobId], h.env)).code).toBe(2);

    const row = async () =>
      (await h.services.pool.query<{ max: string | null; run: string | null; spent: string }>(
        'SELECT max_requests::text AS max, run_budget::text AS run, requests_spent::text AS spent FROM jobs WHERE id = $1::bigint',
        [jobId],
      )).rows[0]!;
    const spent = Number((await row()).spent);
    const before = sent(h);
    const repair = await runCli(['audit', jobId, '--repair', '--max-requests', '3'], h.env);
    expect(repair.out).toMatch(/repair: queued 1 slice/);
    // Recorded in Postgres, where reconcile restores the Redis budget from after a restart.
    expect(await row()).toMatchObject({ max: String(spent + 3), run: '3' });
    expect(await jobBudgets(h.services.pool)).toContainEqual({ jobId, remaining: 3 });
    expect((await h.runUntil(jobId, { timeoutMs: 60_000 })).status).toBe('completed');
    const served = sent(h) - before;
    expect(served).toBeGreaterThan(0);
    expect(served).toBeLessThanOrEqual(3); // 27 before: the walk to its end
  });

  it('a job its --max-tweets stopped gets another --max-tweets with each repair, and its days claim no "end of results"', { timeout: 120_000 }, async () => {
    const u = busiest(h);
    expect(h.sim.world.tweetsByAuthor(u.index).length).toBeGreaterThan(150);
    const jobId = await h.submit({ kind: 'user', params: { target: { username: u.username }, maxTweets: 30 } });
    expect((await h.runUntil(jobId)).status).toBe('completed');

    const audit = await runCli(['audit', jobId], h.env);
    expect(audit.code).toBe(2);
    const days = [...audit.out.matchAll(/^(\d{4}-\d\d-\d\d)\s+\d+\s+(\S+)\s+(.*)$/gm)].map((m) => ({ day: m[1]!, pages: m[2]!, walked: m[3]! }));
    expect(days.length).toBeGreaterThan(1);
    // A timeline has no range: no pages per day, and never "to the end of results" (it stopped).
    expect(days.every((d) => d.pages === '-')).toBe(true);
    expect(audit.out).not.toMatch(/to the end of results/);
    // Newest first: the day of its oldest tweet (the table's first) was not read to the end; the
    // newest day, above it, was, but nothing in the table says so for a walk without a range.
    expect(days[0]!.walked).toMatch(/^stopped early: max-tweets \(slice \d+\)$/);
    expect(days.at(-1)!.walked).toBe('-');

    // Each repair stores another --max-tweets (it stopped after one page before: no progress
    // without --resume, 20 tweets with it), from the first page again or from its cursor.
    for (const resume of [false, true]) {
      const tweets = await jobTweets(h, jobId);
      const repair = await runCli(['audit', jobId, '--repair', ...(resume ? ['--resume'] : [])], h.env);
      expect(repair.out).toMatch(/repair: queued 1 slice/);
      expect((await h.runUntil(jobId, { timeoutMs: 60_000 })).status).toBe('completed');
      expect((await jobTweets(h, jobId)) - tweets, resume ? 'with --resume' : 'from the first page').toBeGreaterThanOrEqual(30);
    }
  });

  it('--repair of a cancelled job reopens it and its walks run; a cancelled watch is refused, nothing queued', { timeout: 60_000 }, async () => {
    const u = busiest(h);
    const jobId = await h.submit({ kind: 'user', params: { target: { username: u.username } } });
    expect((await runCli(['cancel', jobId], h.env)).code).toBe(0);
    const repair = await runCli(['audit', jobId, '--repair', '--max-requests', '5'], h.env);
    expect(repair.out).toMatch(/repair: queued 2 slice\(s\)/);
    const before = sent(h);
    const snap = await h.runUntil(jobId, { timeoutMs: 30_000 });
    expect(snap.status).toBe('completed');
    expect(sent(h) - before).toBeGreaterThan(0);
    expect(await jobTweets(h, jobId)).toBeGreaterThan(0);

    const watch = await h.submit({ kind: 'user', params: { target: { username: u.username }, everySeconds: 3600 } });
    expect((await runCli(['cancel', watch], h.env)).code).toBe(0);
    const slices = async () => (await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM job_slices WHERE job_id = $1::bigint', [watch])).rows[0]!.n;
    const count = await slices();
    const refused = await runCli(['audit', watch, '--repair'], h.env);
    expect(refused.code).toBe(1);
    expect(refused.err.trim()).toBe(`harvest: job ${watch} is a cancelled watch: a repair would run it again; nothing was queued (submit the watch anew)`);
    expect(refused.out).not.toMatch(/repair: queued/);
    expect(await slices()).toBe(count);
    const state = await h.services.pool.query<{ status: string; enabled: boolean }>(
      'SELECT j.status, w.enabled FROM jobs j JOIN watches w ON w.job_id = j.id WHERE j.id = $1::bigint',
      [watch],
    );
    expect(state.rows[0]).toEqual({ status: 'cancelled', enabled: false });
  });
});

describe('audit --repair of what the service answered empty or 404', () => {
  const h = useHarness();

  async function sourceJob(ids: string[]): Promise<string> {
    const jobId = await h.submit({ kind: 'hydrate', params: { ids } });
    expect((await h.runUntil(jobId, { timeoutMs: 60_000 })).status).toBe('completed');
    return jobId;
  }

  it('a walk that ended 404 (a protected root) is listed apart, leaves the job complete, and --repair does not buy it again', { timeout: 60_000 }, async () => {
    const [a] = publicUsers(h);
    const p = h.sim.world.users.find((u) => u.protected && !u.suspended && !u.deleted)!;
    const now = Date.now();
    const [root] = h.sim.control.addTweets([{ authorHandle: p.username, text: 'protected root', createdAtMs: now - 120_000 }]);
    const [reply] = h.sim.control.addTweets([{ authorHandle: a!.username, text: 'public reply', inReplyToId: root!, createdAtMs: now - 60_000 }]);
    const source = await sourceJob([reply!]);
    const { jobId } = await submitConversations({ pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate }, { params: { sourceJobId: source } });
    expect((await h.runUntil(jobId)).status).toBe('completed');

    const before = sent(h);
    const audit = await runCli(['audit', jobId, '--repair'], h.env);
    expect(audit.code, audit.out).toBe(0);
    expect(audit.out).toMatch(new RegExp(`targets missing \\(404[^\\n]*\\): 1\\n\\s+slice \\d+ \\(comments\\) \\{"tweetId":"${root}"\\}`));
    expect(audit.out).not.toMatch(/walks that stopped early/);
    expect(audit.out).not.toMatch(/repair: queued/);
    expect(sent(h)).toBe(before);
  });

  it('a job that failed as a missing target audits complete, saying why it failed, and --repair buys nothing', { timeout: 60_000 }, async () => {
    const hidden = h.sim.world.users.find((u) => u.protected && !u.suspended && !u.deleted)!;
    const jobId = await h.submit({ kind: 'user', params: { target: { username: hidden.username } } });
    expect((await h.runUntil(jobId)).status).toBe('failed');
    const before = sent(h);
    const audit = await runCli(['audit', jobId, '--repair'], h.env);
    expect(audit.code, audit.out).toBe(0);
    expect(audit.out).toMatch(new RegExp(`^job ${jobId} \\(user, failed\\): complete\n  it failed because its target is missing and nothing was read`));
    expect(audit.out).toMatch(/targets missing \(404[^\n]*\): 2/);
    expect(sent(h)).toBe(before);
  });

  it('a parents walk that sent no request (nothing missing) is not "answered empty"', { timeout: 60_000 }, async () => {
    const [a, b] = publicUsers(h);
    const now = Date.now();
    const [root] = h.sim.control.addTweets([{ authorHandle: a!.username, text: 'root F', createdAtMs: now - 120_000 }]);
    const [reply] = h.sim.control.addTweets([{ authorHandle: b!.username, text: 'reply F', inReplyToId: root!, createdAtMs: now - 60_000 }]);
    const source = await sourceJob([root!, reply!]);
    const { jobId } = await submitConversations({ pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate }, { params: { sourceJobId: source } });
    expect((await h.runUntil(jobId)).status).toBe('completed');
    const parents = await h.services.pool.query<{ requests: number }>(
      "SELECT requests::int FROM job_slices WHERE job_id = $1::bigint AND kind = 'conversation-parents'",
      [jobId],
    );
    expect(parents.rows).toEqual([{ requests: 0 }]);
    const audit = await runCli(['audit', jobId, '--repair', '--recheck-empty'], h.env);
    expect(audit.code, audit.out).toBe(0);
    expect(audit.out).not.toMatch(/answered empty/);
    expect(audit.out).not.toMatch(/repair: queued/);
  });

  it('a second --repair --recheck-empty before a worker ran the first queues nothing more: each recheck is paid once', { timeout: 60_000 }, async () => {
    const p = h.sim.world.users.find((u) => u.protected && !u.suspended && !u.deleted)!;
    const ids = h.sim.control.addTweets([{ authorHandle: p.username, text: 'hidden' }]);
    const jobId = await sourceJob(ids);
    expect((await runCli(['audit', jobId], h.env)).out).toMatch(/answered empty/);
    expect((await runCli(['audit', jobId, '--repair', '--recheck-empty'], h.env)).out).toMatch(/repair: queued 1 slice/);
    expect((await runCli(['audit', jobId, '--repair', '--recheck-empty'], h.env)).out).toMatch(/nothing to repair yet/);
    const before = sent(h, '/v3/tweet-info-bulk');
    expect((await h.runUntil(jobId)).status).toBe('completed');
    expect(sent(h, '/v3/tweet-info-bulk') - before).toBe(1);
  });
});

describe('the audit of 404s, unasked walks and queued rechecks', () => {
  const job = { id: '1', kind: 'conversations', status: 'completed' as const, params: {}, maxRequests: null, runBudget: null, requestsSpent: 0 };
  const D = Date.parse('2026-10-01T00:00:00Z');
  const H = 3_600_000;
  const row = (r: Partial<AuditSliceRow> & Pick<AuditSliceRow, 'id' | 'kind' | 'params'>): AuditSliceRow => ({
    status: 'done', endReason: 'end', pages: 1, items: 20, requests: 1, oldestMs: null, ...r,
  });

  it('a 404 ends a walk, ranged or not: listed as missing, not incomplete, not repaired', () => {
    const input = {
      job,
      tweetsPerDay: new Map(),
      slices: [
        row({ id: '1', kind: 'comments', params: { tweetId: '7' }, endReason: 'not-found', items: 0 }),
        row({ id: '2', kind: 'search', params: { query: 'q', order: 'latest', sinceMs: D, untilMs: D + H }, endReason: 'not-found', items: 0 }),
      ],
    };
    const report = auditFromInput(input);
    expect([report.complete, report.uncovered, report.unfinished]).toEqual([true, [], []]);
    expect(report.missing.map((m) => [m.sliceId, m.kind])).toEqual([['1', 'comments'], ['2', 'search']]);
    expect(repairPlanSlices(input, { recheckEmpty: true })).toEqual([]);
    // Walked again (by another repair) and read to its end: no longer missing.
    expect(auditFromInput({ ...input, slices: [...input.slices, row({ id: '3', kind: 'comments', params: { tweetId: '7' } })] }).missing.map((m) => m.sliceId)).toEqual(['2']);
  });

  it('a walk that sent no request was not answered empty', () => {
    const parents = row({ id: '1', kind: 'conversation-parents', params: { sourceJobId: '9' }, items: 0, requests: 0 });
    expect(auditFromInput({ job, tweetsPerDay: new Map(), slices: [parents] }).answeredEmpty).toEqual([]);
    expect(auditFromInput({ job, tweetsPerDay: new Map(), slices: [{ ...parents, requests: 1 }] }).answeredEmpty.map((w) => w.sliceId)).toEqual(['1']);
  });

  it('a recheck a pending or running slice already walks is not queued again; a ranged one only where none does', () => {
    const base = { query: 'q', order: 'latest' };
    const empty = row({ id: '1', kind: 'search', params: { ...base, sinceMs: D, untilMs: D + 10 * H }, items: 0 });
    const listing = row({ id: '2', kind: 'comments', params: { tweetId: '7' }, items: 0 });
    const input = { job, tweetsPerDay: new Map(), slices: [empty, listing] };
    expect(repairPlanSlices(input, { recheckEmpty: true })).toEqual([
      { kind: 'search', params: empty.params },
      { kind: 'comments', params: listing.params },
    ]);
    // The first recheck's slices, not taken yet; one pending over part of the range only.
    const queued = [
      row({ id: '3', kind: 'search', params: empty.params, status: 'pending', endReason: null, pages: 0, items: 0, requests: 0 }),
      row({ id: '4', kind: 'comments', params: listing.params, status: 'running', endReason: null, pages: 0, items: 0, requests: 0 }),
    ];
    expect(repairPlanSlices({ ...input, slices: [...input.slices, ...queued] }, { recheckEmpty: true })).toEqual([]);
    const part = row({ id: '5', kind: 'search', params: { ...base, sinceMs: D + 4 * H, untilMs: D + 10 * H }, status: 'pending', endReason: null, pages: 0, items: 0 });
    expect(repairPlanSlices({ ...input, slices: [...input.slices, part] }, { recheckEmpty: true })).toEqual([
      { kind: 'search', params: { ...base, sinceMs: D, untilMs: D + 4 * H } },
      { kind: 'comments', params: listing.params },
    ]);
  });
});
