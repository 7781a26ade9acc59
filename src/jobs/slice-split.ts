/**
 * The slice runner's splits: a handler's proposal after a page (split), and the largest remainder
 * of a job's other walking slices when one ends (refill). Both only while the job walks fewer
 * slices than its target parallelism.
 */
import type { RequestPriority } from '../api-client/gate.ts';
import type { Logger } from '../logger.ts';
import type { Pool } from '../store/db.ts';
import { activeSliceCount, splitSlice, type SliceForRun } from '../store/job-runtime.ts';
import { walkingSlices } from '../store/slice-remainders.ts';
import { isLiveJobStatus } from '../store/states.ts';
import type { SliceHandler, SplitProposal } from './kind.ts';
import { sliceHandler } from './registry.ts';

/** What a split needs of the runner's deps (SliceRunnerDeps extends it). */
export interface SplitDeps {
  pool: Pool;
  /** How many slices of one job should walk at once (rate × latency). */
  targetParallelism(): number;
  /** Called when a split created a new slice that must be queued. */
  onSplit(jobId: string, sliceId: string, priority: RequestPriority): Promise<void>;
}

/**
 * A slice ended: while the job walks fewer slices than its target, split the largest remainder of
 * its other walking slices, so the parallelism (and the rate) holds to the job's last pages instead
 * of trailing off as slices end one by one. The walking slice picks up its new bound from its
 * params on its next page (splitSlice is guarded on the bound it had, so a split of its own in
 * between wins and this one is dropped). Best effort: a failure only logs.
 */
export async function refill(ended: SliceForRun, deps: SplitDeps, log: Logger): Promise<void> {
  try {
    if (!isLiveJobStatus(ended.job.status)) return;
    const walking = await walkingSlices(deps.pool, ended.jobId);
    if (walking.length >= deps.targetParallelism()) return;
    let best: { id: string; proposal: SplitProposal; remainingPages: number } | null = null;
    for (const w of walking) {
      let handler: SliceHandler<unknown>;
      try {
        handler = sliceHandler(w.kind);
      } catch {
        continue;
      }
      if (!handler.splitRemainder) continue;
      const parsed = handler.params.safeParse(w.params);
      if (!parsed.success) continue;
      const proposal = handler.splitRemainder(parsed.data, { pages: w.pages, newestId: w.newestTweetId, oldestId: w.oldestTweetId });
      if (proposal && (best === null || proposal.remainingPages > best.remainingPages)) {
        const { remainingPages, ...split } = proposal;
        best = { id: w.id, proposal: split, remainingPages };
      }
    }
    if (best === null) return;
    const { remainingPages } = best;
    const child = await splitSlice(deps.pool, { sliceId: best.id, jobId: ended.jobId, ...best.proposal });
    if (child) {
      log.info({ split: best.id, child: child.id, remainingPages: Math.round(remainingPages) }, 'a slice ended: split the largest remainder');
      await deps.onSplit(ended.jobId, child.id, child.priority);
    }
  } catch (error) {
    log.warn({ err: error }, 'could not split a remainder after a slice ended');
  }
}

/**
 * Carries out a handler's split proposal when the job walks fewer slices than its target; answers
 * whether it split. A job found walking its target is taken as still full for FULL_JOB_MEMORY_MS
 * (see fullJobsByPool).
 */
export async function split(slice: SliceForRun, proposal: SplitProposal, deps: SplitDeps, log: Logger): Promise<boolean> {
  const target = deps.targetParallelism();
  const full = fullJobsOf(deps.pool);
  const now = performance.now();
  const seen = full.get(slice.jobId);
  if (seen !== undefined && now - seen.at < FULL_JOB_MEMORY_MS && seen.count >= target) return false;
  const count = await activeSliceCount(deps.pool, slice.jobId);
  if (count >= target) {
    rememberFull(full, slice.jobId, count, now);
    return false;
  }
  full.delete(slice.jobId);
  const child = await splitSlice(deps.pool, { sliceId: slice.id, jobId: slice.jobId, ...proposal });
  if (!child) return false;
  log.info({ child: child.id, splitAt: new Date(proposal.stopBelowMs).toISOString() }, 'slice split');
  await deps.onSplit(slice.jobId, child.id, child.priority);
  return true;
}

/**
 * How long a job found walking its target parallelism is taken to stay full without asking again.
 * A search proposes a split on most pages, and counting the job's slices for each proposal was a
 * Postgres round trip per page (issue 13: 513 counts in a 676-page job at its target); now at most
 * one a second per job and process. A slice that ends meanwhile refills the job itself (refill),
 * so a stale "full" delays no split that matters by more than this.
 */
export const FULL_JOB_MEMORY_MS = 1000;

/** Per pool (one per worker process, or per test): jobId → slices counted at `at` (performance.now). */
const fullJobsByPool = new WeakMap<Pool, Map<string, { count: number; at: number }>>();

function fullJobsOf(pool: Pool): Map<string, { count: number; at: number }> {
  let full = fullJobsByPool.get(pool);
  if (!full) {
    full = new Map();
    fullJobsByPool.set(pool, full);
  }
  return full;
}

function rememberFull(full: Map<string, { count: number; at: number }>, jobId: string, count: number, now: number): void {
  // Ended jobs are never asked about again: drop stale entries before the map can grow.
  if (full.size >= 256) for (const [id, seen] of full) if (now - seen.at >= FULL_JOB_MEMORY_MS) full.delete(id);
  full.set(jobId, { count, at: now });
}
