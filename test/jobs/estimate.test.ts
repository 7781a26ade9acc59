import { describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { estimateSearch } from '../../src/jobs/estimate.ts';
import { firstIdAtMs } from '../../src/jobs/time-slices.ts';
import { runCli } from '../helpers/cli.ts';
import { withSearch } from '../helpers/slice-runner.ts';
import { useHarness } from '../helpers/harness.ts';
import { expectedSearchIds } from './ground-truth.ts';

describe('search --estimate', () => {
  const h = useHarness();

  const searches = () => h.sim.control.requestLog().filter((r) => r.path === '/v3/search-tweets').length;
  const deps = () => ({ client: h.services.client, pooledRate: 20, latencyMs: 500, quotaLeft: async () => 1000 });

  it('estimates a dense range within 25% from a 4-request probe', async () => {
    const actual = expectedSearchIds(h.sim.world, 'lang:en since:2026-09-01 until:2026-10-31').length;
    const before = searches();
    const e = await estimateSearch(deps(), { query: 'lang:en', order: 'latest', since: '2026-09-01', until: '2026-10-31' }, new Date());
    expect(searches() - before).toBe(4);
    expect(e.probeRequests).toBe(4);
    expect(e.tweets).not.toBeNull();
    expect(Math.abs(e.tweets! - actual) / actual).toBeLessThan(0.25);
    expect(e.requests).toBeGreaterThanOrEqual(Math.ceil(actual / 20) * 0.75);
    expect(e.seconds).toBeCloseTo(e.requests! / 20);
    expect(e.quotaShare).toBeCloseTo(e.requests! / 1000);
  });

  it('probes a --until ahead of now only up to now (no max_id beyond 64 bits, no empty future part)', async () => {
    const queries: string[] = [];
    const client = withSearch(h.services.client, (real) => (params, options) => {
      queries.push(params.query);
      return real(params, options);
    });
    const now = new Date();
    const e = await estimateSearch({ ...deps(), client }, { query: 'coffee', order: 'latest', since: '2026-10-01', until: '2099-01-01' }, now);
    expect(e.tweets).not.toBeNull();
    const maxIds = queries.map((q) => BigInt(/max_id:(\d+)/.exec(q)![1]!));
    expect(maxIds.length).toBeGreaterThan(0);
    for (const id of maxIds) expect(id < firstIdAtMs(now.getTime())).toBe(true);
  });

  it('counts a sparse range exactly', async () => {
    const actual = expectedSearchIds(h.sim.world, 'coffee since:2026-10-01 until:2026-10-08').length;
    expect(actual).toBeLessThan(60);
    const e = await estimateSearch(deps(), { query: 'coffee', order: 'latest', since: '2026-10-01', until: '2026-10-08' }, new Date());
    expect(e.exact).toBe(true);
    expect(e.tweets).toBe(actual);
  });

  it('the command prints the estimate and enqueues nothing', async () => {
    const out: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
    try {
      expect(await main(['search', 'lang:en', '--since', '2026-10-01', '--until', '2026-10-15', '--estimate'], h.env)).toBe(0);
    } finally {
      log.mockRestore();
    }
    expect(out.join('\n')).toMatch(/tweets\s+~?[\d,]+/);
    expect(out.join('\n')).toMatch(/probe\s+cost 4 requests; nothing was queued/);
    const { rows } = await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs');
    expect(rows[0]!.n).toBe(0);
  });

  it('a sparse range: the job plans no more slices than the probe expects pages, and spends what --estimate said', async () => {
    const args = ['search', 'zzqqxxnomatch', '--since', '2026-09-01', '--until', '2026-10-15'];
    const estimate = await runCli([...args, '--estimate'], h.env);
    expect(estimate.code, estimate.err).toBe(0);
    const figure = Number(/^requests +~?([\d,]+)/m.exec(estimate.out)![1]!.replace(/,/g, ''));
    expect(figure).toBeLessThanOrEqual(2);
    const run = await runCli([...args, '--wait'], h.env);
    expect(run.code, run.err).toBe(0);
    const jobId = run.out.split('\n')[0]!;
    const { rows } = await h.services.pool.query<{ spent: number; slices: number }>(
      'SELECT requests_spent::int AS spent, (SELECT count(*)::int FROM job_slices WHERE job_id = jobs.id) AS slices FROM jobs WHERE id = $1::bigint',
      [jobId],
    );
    // Without the probe's pages the job planned its full target parallelism, a request a slice.
    expect(rows[0]).toEqual({ spent: figure, slices: 1 });
  });
});
