import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HarvestMetrics } from '../../src/jobs/metrics.ts';
import { parseNotifyUrls } from '../../src/config.ts';
import { NotifyLoop, recordStalledJobs } from '../../src/jobs/notify.ts';
import { silentLogger } from '../../src/logger.ts';
import { jobHealth, stalledJobs } from '../../src/store/job-status.ts';
import { markSliceRunning, pauseJobForQuota } from '../../src/store/job-runtime.ts';
import { runCli } from '../helpers/cli.ts';
import { useHarness } from '../helpers/harness.ts';

const THRESHOLD_MS = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('stalled jobs (computed from Postgres)', () => {
  const h = useHarness();
  const cliEnv = () => ({ ...h.env, HARVEST_STALLED_AFTER_MS: String(THRESHOLD_MS) });
  const submitSearch = (day: string) =>
    h.submit({ kind: 'search', params: { query: 'lang:en', since: `2026-10-${day}`, until: `2026-10-${String(Number(day) + 1).padStart(2, '0')}` } });
  const healthOf = async (jobId: string) => (await jobHealth(h.services.pool, { stalledAfterMs: THRESHOLD_MS, jobId }))[0];

  it('a job no worker ever took shows stalled (no worker seen) after the threshold, and status --check exits 6', async () => {
    const jobId = await submitSearch('05');
    expect((await healthOf(jobId))?.stalled).toBe(false);
    await sleep(THRESHOLD_MS + 100);
    const health = await healthOf(jobId);
    expect(health?.stalled).toBe(true);
    expect(health?.waitsOn).toMatch(/^no worker seen since \d{4}-/);

    const plain = await runCli(['status'], cliEnv());
    expect(plain.code).toBe(0);
    expect(plain.out).toContain('stalled: no worker seen since');
    const check = await runCli(['status', '--check'], cliEnv());
    expect(check.code).toBe(6);
    expect(check.err).toContain(`${jobId} (no worker seen since`);
    const one = await runCli(['status', jobId, '--check'], cliEnv());
    expect(one.code).toBe(6);

    // The gauge and the event say the same; the event is written once per stall.
    const metrics = new HarvestMetrics({ defaultMetrics: false });
    metrics.bindCollectors({
      keyStates: async () => [],
      jobCounts: async () => ({}),
      sliceLagSeconds: async () => null,
      stalledJobs: async () => (await stalledJobs(h.services.pool, { stalledAfterMs: THRESHOLD_MS })).length,
    });
    expect(await metrics.metricsText()).toMatch(/^harvest_jobs_stalled [1-9]/m);
    expect(await recordStalledJobs(h.services.pool, THRESHOLD_MS)).toBeGreaterThanOrEqual(1);
    expect(await recordStalledJobs(h.services.pool, THRESHOLD_MS)).toBe(0);
    const { rows } = await h.services.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox WHERE type = 'job.stalled' AND job_id = $1::bigint`,
      [jobId],
    );
    expect(rows[0]!.n).toBe(1);
    await runCli(['cancel', jobId], cliEnv());
  });

  it('a job whose worker died holding its slices shows "slices running but no page since"', async () => {
    const jobId = await submitSearch('06');
    const { rows } = await h.services.pool.query<{ id: string }>(`SELECT id::text FROM job_slices WHERE job_id = $1::bigint`, [jobId]);
    // What a killed worker leaves: its slices marked running under its lease, and nothing after.
    for (const s of rows) expect(await markSliceRunning(h.services.pool, s.id, jobId, randomUUID())).toBe(true);
    expect((await healthOf(jobId))?.stalled).toBe(false);
    await sleep(THRESHOLD_MS + 100);
    const health = await healthOf(jobId);
    expect(health?.stalled).toBe(true);
    expect(health?.runningSlices).toBe(rows.length);
    expect(health?.waitsOn).toMatch(/^slices running but no page since/);
    await runCli(['cancel', jobId], cliEnv());
  });

  it('a job parked for quota, or waiting for rate, is not stalled; a job that ran to its end has no health row', async () => {
    const parked = await submitSearch('07');
    await pauseJobForQuota(h.services.pool, parked, 'no key can grant');
    const rated = await submitSearch('08');
    await sleep(THRESHOLD_MS + 100);
    expect(await healthOf(parked)).toBeUndefined();
    const rateHealth = (await jobHealth(h.services.pool, { stalledAfterMs: THRESHOLD_MS, jobId: rated, waitingForRate: new Set([rated]) }))[0];
    expect(rateHealth?.stalled).toBe(false);
    expect(rateHealth?.waitsOn).toBe('waiting for rate');
    // Nor is it announced as stalled: the notification loop asks the limiter who waits.
    const loop = new NotifyLoop({
      pool: h.services.pool, logger: silentLogger, targets: parseNotifyUrls('http://127.0.0.1:9/'), stalledAfterMs: THRESHOLD_MS,
      rateWaits: { waitingJobs: async () => [rated] }, deadlineMs: 500,
    });
    await loop.runOnce();
    await loop.stop();
    const announced = await h.services.pool.query(`SELECT 1 FROM outbox WHERE type = 'job.stalled' AND job_id = $1::bigint`, [rated]);
    expect(announced.rowCount).toBe(0);
    await runCli(['cancel', rated], cliEnv());

    const check = await runCli(['status', parked, '--check'], cliEnv());
    expect(check.code).toBe(0);
    expect(check.out).toContain('paused: quota');

    const done = await submitSearch('09');
    const snap = await h.runUntil(done);
    expect(snap.status).toBe('completed');
    expect(await healthOf(done)).toBeUndefined();
    // No stalled job is left in this database: --check over all jobs passes.
    const all = await runCli(['status', '--check'], cliEnv());
    expect(all.err).toBe('');
    expect(all.code).toBe(0);
  });
});
