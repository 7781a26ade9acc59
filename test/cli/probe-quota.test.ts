/**
 * The spending check's probe when no key can grant (every quota spent): the command says so and
 * exits 3, as `--wait` does for a job parked for quota, with nothing queued; `--max-requests`
 * within the threshold (no probe) queues it, parked until quota returns. It exited 1, the exit of
 * a failure, with "no API key can grant a request".
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { useHarness } from '../helpers/harness.ts';

describe('the spending check with every key spent', () => {
  const h = useHarness({ ownKey: true });
  const jobs = async () => (await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n;

  it('refuses with exit 3 and one line naming --yes and --max-requests; nothing is queued', async () => {
    for (const k of h.config.apiKeys) await h.services.gate.setQuota(k.fingerprint, 0);
    const before = await jobs();
    const r = await runCli(['search', 'coffee', '--since', '2026-10-01', '--until', '2026-10-05'], h.env);
    expect(r.code).toBe(3);
    expect(r.err.split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^harvest: no API key can grant a request.*: the spending check cannot probe this job's cost now; nothing was queued \(--yes, or --max-requests N, queues it parked until quota returns\)$/);
    expect(await jobs()).toBe(before);
    const bounded = await runCli(['search', 'coffee', '--since', '2026-10-01', '--until', '2026-10-05', '--max-requests', '5'], h.env);
    expect(bounded.code).toBe(0);
    expect(await jobs()).toBe(before + 1);
  });
});
