/**
 * `--wait`: after enqueueing, this process works the queue itself until that job ends, showing
 * progress (a live line on a terminal, periodic log lines otherwise). Exit codes: 0 completed,
 * 1 failed, 3 paused for quota, 4 cancelled, 5 paused, 130 interrupted.
 */
import { Harvester } from '../jobs/harvester.ts';
import type { Services } from '../jobs/services.ts';
import { jobSnapshot, type JobSnapshot } from '../store/job-status.ts';
import { onShutdownSignal } from './context.ts';
import { ProgressReporter, type ProgressSnapshot } from './progress.ts';

export const WAIT_EXIT = { completed: 0, failed: 1, paused_quota: 3, cancelled: 4, paused: 5, interrupted: 130 } as const;

const ENDED = new Set(['completed', 'failed', 'cancelled', 'paused', 'paused_quota']);

export async function quotaLeft(services: Services): Promise<number | null> {
  const states = await services.gate.keyStates();
  const known = states.filter((s) => s.remaining !== null);
  return known.length === 0 ? null : known.reduce((sum, s) => sum + (s.remaining ?? 0), 0);
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
    now: new Date(),
    fractionDone: s.fractionDone,
    ...(s.note ? { note: s.note } : {}),
  };
}

export function describeEnd(s: JobSnapshot): string {
  switch (s.status) {
    case 'completed':
      return `job ${s.id} completed: ${s.tweets} tweets, ${s.users} users, ${s.requests} requests${s.note ? ` (${s.note})` : ''}`;
    case 'failed':
      return `job ${s.id} failed: ${s.errorMessage ?? 'unknown error'}${s.errorCode ? ` [${s.errorCode}]` : ''}`;
    case 'paused_quota':
      return `job ${s.id} ${s.note ?? 'paused: quota (no key has quota left)'}; it resumes by itself when quota returns (keep a worker running)`;
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
  options: { concurrency: number; stream?: NodeJS.WriteStream },
): Promise<number> {
  const stream = options.stream ?? process.stderr;
  const harvester = new Harvester(services, { concurrency: options.concurrency });
  let interrupted = false;
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
      return toProgress(snap, await quotaLeft(services).catch(() => null));
    },
  });
  await harvester.start();
  reporter.start();
  let final: JobSnapshot | null = null;
  try {
    for (;;) {
      final = await jobSnapshot(services.pool, jobId);
      if (!final || ENDED.has(final.status) || interrupted) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 250);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  } finally {
    removeSignals();
    // Stop the workers first: the in-flight pages commit, so the last line is the truth.
    await harvester.stop();
    await reporter.stop();
  }
  final = await jobSnapshot(services.pool, jobId);
  if (!final) return WAIT_EXIT.failed;
  if (interrupted && !ENDED.has(final.status)) {
    stream.write(`interrupted; job ${jobId} is ${final.status} and resumes from its last committed page on the next worker\n`);
    return WAIT_EXIT.interrupted;
  }
  stream.write(`${describeEnd(final)}\n`);
  return WAIT_EXIT[final.status as keyof typeof WAIT_EXIT] ?? WAIT_EXIT.failed;
}
