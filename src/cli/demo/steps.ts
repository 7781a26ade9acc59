/**
 * The demo's steps: each submits a job the way `harvest <kind>` does and works it in this process
 * with the same live progress as `--wait`. A watch pass ends in `scheduled`, not in an end state,
 * so passes have their own loop around the same Harvester and progress display.
 */
import { fromRedis } from '../../jobs/bounded-read.ts';
import { Harvester, planContext } from '../../jobs/harvester.ts';
import type { JobKindName } from '../../jobs/registry.ts';
import type { Services } from '../../jobs/services.ts';
import { submitJob } from '../../jobs/submit.ts';
import { targetParallelism } from '../../jobs/time-slices.ts';
import { runWatchTick } from '../../jobs/watch.ts';
import { jobSnapshot, type JobSnapshot } from '../../store/job-status.ts';
import { ProgressReporter } from '../progress.ts';
import { quotaLeft, toProgress, waitForJob } from '../wait.ts';

export interface StepResult {
  jobId: string;
  exitCode: number;
  snapshot: JobSnapshot;
}

async function snapshotOf(services: Services, jobId: string): Promise<JobSnapshot> {
  const snap = await jobSnapshot(services.pool, jobId);
  if (!snap) throw new Error(`job ${jobId} vanished`);
  return snap;
}

export async function submit(services: Services, kind: JobKindName, params: unknown): Promise<{ jobId: string; concurrency: number }> {
  const ctx = await planContext(services);
  const { jobId } = await submitJob({ pool: services.pool, queues: services.queues, budgets: services.gate, planContext: ctx }, { kind, params });
  return { jobId, concurrency: targetParallelism(ctx.pooledRate, ctx.latencyMs) };
}

/** Submits a one-off job and works it to its end, as `harvest <kind> --wait` does. */
export async function runJob(services: Services, kind: JobKindName, params: unknown, stream: NodeJS.WriteStream): Promise<StepResult> {
  const { jobId, concurrency } = await submit(services, kind, params);
  const exitCode = await waitForJob(services, jobId, { concurrency, stream });
  return { jobId, exitCode, snapshot: await snapshotOf(services, jobId) };
}

const PASS_OVER = new Set(['scheduled', 'completed', 'failed', 'cancelled', 'paused', 'paused_quota']);

/**
 * Works a watch until the pass in flight is over (no pending or running slice left) and returns
 * the snapshot; exit code 0 when the watch is back to `scheduled`.
 */
export async function workWatchPass(services: Services, jobId: string, stream: NodeJS.WriteStream, timeoutMs = 120_000): Promise<StepResult> {
  const harvester = new Harvester(services, { concurrency: 2 });
  // The quota is read from Redis through a bounded read: a Redis that stopped answering held the
  // reporter's last poll (and so the demo) forever.
  const quotaReads = {};
  const reporter = new ProgressReporter({
    stream,
    isTTY: stream.isTTY === true,
    poll: async () =>
      toProgress(await snapshotOf(services, jobId), await fromRedis(quotaReads, 'quota left', () => quotaLeft(services)).catch(() => null)),
  });
  await harvester.start();
  reporter.start();
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const snap = await snapshotOf(services, jobId);
      if (PASS_OVER.has(snap.status) && snap.slices.pending + snap.slices.running === 0) break;
      if (Date.now() > deadline) throw new Error(`watch ${jobId} pass still ${snap.status} after ${timeoutMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    const { redisGone } = await harvester.stop();
    await reporter.stop();
    if (redisGone) await exitWithoutRedis(services, jobId, stream);
  }
  const snapshot = await snapshotOf(services, jobId);
  return { jobId, exitCode: snapshot.status === 'scheduled' ? 0 : 1, snapshot };
}

/**
 * The harvester stopped without a Redis that is unreachable: one line, then exit 1 (as `--wait`
 * does: BullMQ's connections, still waiting for Redis, would keep the process alive). Postgres
 * still answers, so the line says where the watch was left.
 */
async function exitWithoutRedis(services: Services, jobId: string, stream: NodeJS.WriteStream): Promise<never> {
  const status = await jobSnapshot(services.pool, jobId).then(
    (s) => s?.status ?? 'unknown',
    () => 'unknown',
  );
  stream.write(`harvest demo: Redis is unreachable, stopped without it (watch ${jobId} is ${status}, its committed pages are in Postgres); check Redis and run \`harvest demo\` again\n`);
  process.exit(1);
}

/** Starts the watch's next pass now (what its schedule would do at the next interval) and works it. */
export async function nextWatchPass(services: Services, jobId: string, stream: NodeJS.WriteStream): Promise<StepResult> {
  const sliceId = await runWatchTick(jobId, { pool: services.pool, queues: services.queues });
  if (sliceId === null) throw new Error(`watch ${jobId} did not start a pass`);
  return workWatchPass(services, jobId, stream);
}
