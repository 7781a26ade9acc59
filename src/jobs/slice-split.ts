/**
 * The slice runner's splits: a handler's proposal after a page (split), and the largest remainder
 * of a job's other walking slices when one ends (refill). Both only while the job walks fewer
 * slices than its target parallelism, and only when a walker can take the new slice at once.
 *
 * A slice that no walker takes stays whole until a walk ends, and a search's walks end together,
 * at the job's last pages: the slice's whole range then became the job's tail. The three-key whole
 * job (bench/whole-job.ts) split to 68 slices on a worker of 64 walks: 4 slices of ~34 pages each
 * waited 52 s, and the last 4–5 s of the job ran at half its rate while they were walked and split.
 */
import type { RequestPriority } from '../api-client/gate.ts';
import type { Logger } from '../logger.ts';
import type { Pool } from '../store/db.ts';
import type { CreatedSlice } from '../store/jobs.ts';
import { activeSliceCounts, splitSlice, type SliceForRun } from '../store/job-runtime.ts';
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
  /**
   * Promises one of this process's walks on the queue of `priority` to a slice about to be split
   * off (Walkers.promise): answers how to take the promise back when no slice is made, or null
   * when every walk runs or is promised already. A handler's split is made only with a promise:
   * the new slice would otherwise wait unwalked (see above). Without it, walkers are taken as free.
   */
  promiseWalker?(priority: RequestPriority, options?: { always?: boolean }): (() => void) | null;
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
    // A slice of the job still waiting for a walker of its queue: the one this walk frees takes it
    // (or another job's), and a new slice on that queue would only wait beside it. A remainder on
    // the other queue (a search watch's pass beside its backfill) is for other walkers.
    const waiting = new Set(walking.filter((w) => w.unstarted).map((w) => w.priority));
    let best: { id: string; priority: RequestPriority; proposal: SplitProposal; remainingPages: number } | null = null;
    for (const w of walking) {
      if (waiting.has(w.priority)) continue;
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
        best = { id: w.id, priority: w.priority, proposal: split, remainingPages };
      }
    }
    if (best === null) return;
    const { remainingPages } = best;
    // The walk that ends takes the new slice: promised to it, so that no page's split takes the
    // walk first (this walk still counts as running until it returns). A slice of another queue
    // (a search watch's pass ended, its backfill walks on) needs a free walk of that queue.
    const proposal = best.proposal;
    const child = await withPromisedWalker(deps, best.priority, { always: best.priority === ended.priority }, () =>
      splitSlice(deps.pool, { sliceId: best.id, jobId: ended.jobId, ...proposal }),
    );
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
  // No walker of this process could take the new slice now (each of its walks is the one it
  // splits, or another's, or promised to a slice split off a moment ago): asked first, it costs
  // no round trip. Another process's walks of the job, if it has free walkers, split on their
  // own pages. The promise is taken before any await: pages that land together each found the
  // same free walkers while the first one's split was still being written.
  const child = await withPromisedWalker(deps, slice.priority, {}, () => splitIfRoom(slice, proposal, deps));
  if (!child) return false;
  log.info({ child: child.id, splitAt: new Date(proposal.stopBelowMs).toISOString() }, 'slice split');
  await deps.onSplit(slice.jobId, child.id, child.priority);
  return true;
}

/**
 * Runs `make` with one of the process's walks promised to the slice it makes (SplitDeps.promiseWalker);
 * the promise is taken back when it makes none (null, or a failure). Null without a free walk.
 */
async function withPromisedWalker<T>(deps: SplitDeps, priority: RequestPriority, options: { always?: boolean }, make: () => Promise<T | null>): Promise<T | null> {
  const unpromise = deps.promiseWalker === undefined ? () => undefined : deps.promiseWalker(priority, options);
  if (unpromise === null) return null;
  let made: T | null = null;
  try {
    made = await make();
    return made;
  } finally {
    if (made === null) unpromise();
  }
}

/** The split's child, made when the job walks fewer slices than its target and none waits unwalked. */
async function splitIfRoom(slice: SliceForRun, proposal: SplitProposal, deps: SplitDeps): Promise<CreatedSlice | null> {
  const target = deps.targetParallelism();
  const full = fullJobsOf(deps.pool);
  const now = performance.now();
  const seen = full.get(slice.jobId);
  if (seen !== undefined && now - seen.at < FULL_JOB_MEMORY_MS && seen.count >= target) return null;
  const { active, unstarted } = await activeSliceCounts(deps.pool, slice.jobId, slice.priority);
  if (active >= target) {
    rememberFull(full, slice.jobId, active, now);
    return null;
  }
  // A slice made a moment ago is not taken yet: pages that arrive together would otherwise each
  // split before any walker counted as busy.
  if (unstarted > 0) return null;
  full.delete(slice.jobId);
  return splitSlice(deps.pool, { sliceId: slice.id, jobId: slice.jobId, ...proposal });
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
