/**
 * `harvest wait <job-id>`: a job queued without --wait is worked to its end here (the queued-job
 * hint names it: "re-run with --wait" queued the job twice); `--follow` only shows the progress of
 * a job other workers run, with no key. An ended job answers at once with --wait's exit code and
 * no request; an unknown one is an error.
 */
import { describe, expect, it } from 'vitest';
import { jobSnapshot } from '../../src/store/job-status.ts';
import { runCli } from '../helpers/cli.ts';
import { useHarness } from '../helpers/harness.ts';

describe('harvest wait', () => {
  const h = useHarness();
  const run = (argv: string[], env: Record<string, string> = h.env) => runCli(argv, env);
  const requests = () => h.sim.control.requestLog().length;

  async function queued(): Promise<string> {
    const created = await run(['search', 'coffee', '--since', '2026-10-01', '--until', '2026-10-03', '--max-requests', '6']);
    expect(created.code).toBe(0);
    const jobId = created.out.split('\n')[0]!;
    expect(created.err).toContain(`\`harvest wait ${jobId}\``);
    return jobId;
  }

  it('works a queued job to its end in this process; waiting again answers at once, spending nothing', async () => {
    const jobId = await queued();
    const before = requests();
    const waited = await run(['wait', jobId]);
    expect(waited.code).toBe(0);
    expect(waited.err).toMatch(new RegExp(`job ${jobId} completed: [\\d,]+ tweets`));
    const done = await jobSnapshot(h.services.pool, jobId);
    expect(done?.status).toBe('completed');
    expect(done?.tweets).toBeGreaterThan(0);
    expect(requests() - before).toBeGreaterThan(0);

    const spent = requests();
    const again = await run(['wait', jobId]);
    expect([again.code, again.err]).toEqual([0, `job ${jobId} completed: ${done!.tweets.toLocaleString('en-US')} tweets, ${done!.users.toLocaleString('en-US')} users, ${done!.requests.toLocaleString('en-US')} requests${done!.note ? ` (${done!.note})` : ''}`]);
    expect(requests()).toBe(spent);
  });

  it('--follow shows a job others work until it ends, with no key and no request of its own', async () => {
    const jobId = await queued();
    const keyless = { ...h.env, HARVEST_API_KEYS: '' };
    const following = run(['wait', jobId, '--follow'], keyless);
    const snap = await h.runUntil(jobId);
    expect(snap.status).toBe('completed');
    const followed = await following;
    expect(followed.code).toBe(0);
    expect(followed.err).toContain(`job ${jobId} completed`);
  });

  it('a user job whose account is missing (protected) exits 1 with the reason, not 0 with nothing', async () => {
    const hidden = h.sim.world.users.find((u) => u.protected)!;
    const waited = await run(['user', hidden.username, '--wait']);
    expect(waited.code).toBe(1);
    expect(waited.err).toMatch(/failed: the target was not found \(404/);
  });

  it('a paused job answers with exit 5, an unknown one with exit 1, a bad id is refused', async () => {
    const jobId = await queued();
    expect((await run(['pause', jobId])).code).toBe(0);
    const paused = await run(['wait', jobId]);
    expect([paused.code, paused.err]).toEqual([5, `job ${jobId} paused; \`harvest resume ${jobId}\` continues it`]);
    const unknown = await run(['wait', '999999', '--follow'], { ...h.env, HARVEST_API_KEYS: '' });
    expect([unknown.code, unknown.err]).toEqual([1, 'no job 999999']);
    const bad = await run(['wait', 'abc']);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/job id/i);
    expect((await run(['cancel', jobId])).code).toBe(0);
  });
});
