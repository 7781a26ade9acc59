/**
 * `--wait` and `harvest wait <job-id>`: this process works the queue itself until that job ends,
 * showing progress (a live line on a terminal, periodic log lines otherwise); with `follow` it only
 * shows the progress of a job workers elsewhere run. Exit codes: 0 completed, 1 failed, 3 paused
 * for quota, 4 cancelled, 5 paused, 130 interrupted.
 */
import { defaultConcurrency, Harvester } from '../jobs/harvester.ts';
import type { Services } from '../jobs/services.ts';
import { jobSnapshot, type JobSnapshot } from '../store/job-status.ts';
import { onShutdownSignal } from './context.ts';
import { formatCount, ProgressReporter, type ProgressSnapshot } from './progress.ts';

export const WAIT_EXIT = { completed: 0, failed: 1, paused_quota: 3, cancelled: 4, paused: 5, interrupted: 130 } as const;

const ENDED: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled', 'paused', 'paused_quota']);

/** Whether a job in this state is over for a waiter (its exit code is WAIT_EXIT's). */
export function waitEnded(status: string): status is keyof typeof WAIT_EXIT {
  return ENDED.has(status);
}

export async function quotaLeft(services: Services): Promise<number | null> {
  const states = await services.gate.keyStates();
  const known = states.filter((s) => s.remaining !== null);
  return known.length === 0 ? null : known.reduce((sum, s) => sum + (s.remaining ?? 0), 0);
}

/** quotaLeft for a progress line: unknown after a second (a Redis that is down would hold the line). */
function quotaLeftSoon(services: Services): Promise<number | null> {
  return Promise.race([
    quotaLeft(services).catch(() => null),
    new Promise<null>((resolve) => setTimeout(() => resolve(null), 1000).unref()),
  ]);
}

/** How long --wait rides out a Postgres it cannot reach before it gives up with the error. */
const POSTGRES_GRACE_MS = 60_000;

/** jobSnapshot, asked again every half second while Postgres fails, for up to `graceMs`. */
async function snapshotWithin(services: Services, jobId: string, graceMs: number): Promise<JobSnapshot | null> {
  const giveUpAt = Date.now() + graceMs;
  for (;;) {
    try {
      return await jobSnapshot(services.pool, jobId);
    } catch (error) {
      if (Date.now() >= giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

export function toProgress(s: JobSnapshot, quota: number | null): ProgressSnapshot {
  return {
    jobId: s.id,
    kind: s.kind,
    status: s.status,
    pages: s.pages,
    tweets: s.tweets,
    users: s.users,
    requests: s.requests,
    quotaLeft: quota,
    startedAt: s.startedAt ?? s.createdAt,
    heldMs: s.heldMs,
    now: new Date(),
    fractionDone: s.fractionDone,
    ...(s.note ? { note: s.note } : {}),
  };
}

export function describeEnd(s: JobSnapshot): string {
  switch (s.status) {
    case 'completed':
      return `job ${s.id} completed: ${formatCount(s.tweets)} tweets, ${formatCount(s.users)} users, ${formatCount(s.requests)} requests${s.note ? ` (${s.note})` : ''}`;
    case 'failed':
      return `job ${s.id} failed: ${s.errorMessage ?? 'unknown error'}${s.errorCode ? ` [${s.errorCode}]` : ''}`;
    case 'paused_quota':
      // Quota unknown: the service did not answer the usage call (HARVEST_BASE_URL, the network,
      // an outage), which quota returning would not mend.
      return s.note?.startsWith('paused: quota unknown')
        ? `job ${s.id} ${s.note}; it resumes by itself once the service answers (keep a worker running; check HARVEST_BASE_URL and the network)`
        : `job ${s.id} ${s.note ?? 'paused: quota (no key has quota left)'}; it resumes by itself when quota returns (keep a worker running)`;
    case 'paused':
      return `job ${s.id} paused; \`harvest resume ${s.id}\` continues it`;
    case 'cancelled':
      return `job ${s.id} cancelled`;
    default:
      return `job ${s.id} ${s.status}`;
  }
}

export async function waitForJob(
  services: Services,
  jobId: string,
  options: { concurrency?: number; stream?: NodeJS.WriteStream; follow?: boolean } = {},
): Promise<number> {
  const stream = options.stream ?? process.stderr;
  // Following, nothing here works the queue: the workers elsewhere do (keyless, no request).
  const harvester = options.follow ? null : new Harvester(services, { concurrency: options.concurrency ?? (await defaultConcurrency(services)) });
  let interrupted = false;
  let redisGone = false;
  let wake: () => void = () => undefined;
  const removeSignals = onShutdownSignal(() => {
    interrupted = true;
    wake();
  });
  const reporter = new ProgressReporter({
    stream,
    isTTY: stream.isTTY === true,
    poll: async () => {
      const snap = await jobSnapshot(services.pool, jobId);
      if (!snap) throw new Error(`job ${jobId} vanished`);
      return toProgress(snap, await quotaLeftSoon(services));
    },
  });
  await harvester?.start();
  reporter.start();
  let final: JobSnapshot | null = null;
  // A Postgres blip is not the job's end: the workers in this process retry what it broke, so the
  // loop rides it out for POSTGRES_GRACE_MS (it exited 1, "failed", while the job ran on).
  let failingSince: number | null = null;
  try {
    for (;;) {
      try {
        final = await jobSnapshot(services.pool, jobId);
        failingSince = null;
      } catch (error) {
        failingSince ??= Date.now();
        if (Date.now() - failingSince > POSTGRES_GRACE_MS) throw error;
      }
      if (interrupted || (failingSince === null && (!final || waitEnded(final.status)))) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 250);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
    // Its end's event was written with the end: sent before the workers stop, it reaches the
    // webhooks now (the delivery loop polls once a second and was stopped first, so a --wait's
    // own job.completed went out only with the next worker, if one started within a day).
    if (harvester && !interrupted && final && waitEnded(final.status)) await harvester.flushNotifications();
  } finally {
    removeSignals();
    // Stop the workers first: the in-flight pages commit, so the last line is the truth.
    redisGone = harvester ? (await harvester.stop()).redisGone : false;
    await reporter.stop();
  }
  if (redisGone) {
    // Stopped without a Redis that is down: BullMQ's connections would keep the process alive.
    // Postgres still answers: the job's state decides the line and the exit code as ever.
    const last = await jobSnapshot(services.pool, jobId).catch(() => null);
    if (last && waitEnded(last.status)) {
      stream.write(`${describeEnd(last)}\n`);
      process.exit(WAIT_EXIT[last.status as keyof typeof WAIT_EXIT] ?? WAIT_EXIT.failed);
    }
    stream.write(`stopped without Redis; job ${jobId} is ${last?.status ?? 'unknown'} and resumes from its last committed page on the next worker\n`);
    process.exit(WAIT_EXIT.interrupted);
  }
  final = await snapshotWithin(services, jobId, POSTGRES_GRACE_MS);
  if (!final) return WAIT_EXIT.failed;
  if (interrupted && !waitEnded(final.status)) {
    stream.write(
      options.follow
        ? `stopped following; job ${jobId} is ${final.status} (the workers running it go on)\n`
        : `interrupted; job ${jobId} is ${final.status} and resumes from its last committed page on the next worker\n`,
    );
    return WAIT_EXIT.interrupted;
  }
  stream.write(`${describeEnd(final)}\n`);
  return WAIT_EXIT[final.status as keyof typeof WAIT_EXIT] ?? WAIT_EXIT.failed;
}

/**
 * What a job queued without --wait says. Not "re-run with --wait": that queues a second job, and
 * both run in full (every request paid twice).
 */
export function queuedHint(jobId: string): string {
  return `a worker runs it: \`harvest worker\`, or \`harvest wait ${jobId}\` in this terminal until it ends; \`harvest status ${jobId}\` shows progress`;
}
