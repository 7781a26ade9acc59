/**
 * `audit` of a budget-stopped `--order popular` search: a popular walk reads its range by
 * engagement, so its oldest tweet tells nothing of what it covered. Counted as covered from that
 * tweet up, the audit of the job below called it complete after a repair of slivers, with a third
 * of the query's tweets never read.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { busyWorldOptions, jobTweetIds, useHarness } from '../helpers/harness.ts';
import { expectedSearchIds } from './ground-truth.ts';

describe('audit of a popular search', () => {
  const h = useHarness(busyWorldOptions);

  it('a budget-stopped popular job is not complete, and --repair walks its slices again to every tweet', { timeout: 120_000 }, async () => {
    const range = { since: '2026-10-01', until: '2026-10-08' };
    const expected = expectedSearchIds(h.sim.world, `lang:en since:${range.since} until:${range.until}`);
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', order: 'popular', ...range }, maxRequests: 24 });
    const snap = await h.runUntil(jobId);
    // The job says what a popular walk can claim (a ranking may leave matches out).
    expect(snap.note).toContain('order popular: the service ranks a selection of the matches, so this may not hold every one (--order latest reads them all)');
    expect((await jobTweetIds(h, jobId)).length).toBeLessThan(expected.length / 2);
    const stopped = await runCli(['audit', jobId], h.env);
    expect(stopped.code).toBe(2);
    expect(stopped.out).toMatch(/NOT complete/);

    const repair = await runCli(['audit', jobId, '--repair', '--max-requests', '2000'], h.env);
    expect(repair.out).toMatch(/repair: queued \d+ slice/);
    await h.runUntil(jobId, { timeoutMs: 90_000 });
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
    expect((await runCli(['audit', jobId], h.env)).code).toBe(0);
  });
});
