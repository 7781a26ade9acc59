/**
 * Creating a job: validate its params (again at run time: payloads outlive deploys), plan its
 * slices, record job + slices (+ watch) in Postgres in one transaction, then put the runnable
 * work on the queue. Postgres first: if the enqueue fails, reconcile finds the slices.
 */
import type { Pool } from '../store/db.ts';
import { withTransaction } from '../store/db.ts';
import { completeEmptyJob, createJob, insertSlices } from '../store/jobs.ts';
import { startWatchPassIn } from '../store/watches.ts';
import type { PlanContext, SubmitQueues } from './kind.ts';
import type { HarvestQueues } from './queue.ts';
import { jobKind, type JobKindName } from './registry.ts';

export interface SubmitDeps {
  pool: Pool;
  queues: HarvestQueues;
  /** The limiter's budget store (exact --max-requests). */
  budgets: { setBudget(jobId: string, maxRequests: number, options?: { replace?: boolean }): Promise<number> };
  planContext: PlanContext;
}

export interface SubmitInput {
  kind: JobKindName;
  params: unknown;
  maxRequests?: number;
  /**
   * Told the job's id once it is committed in Postgres, before its slices are queued (one Redis
   * call each: seconds for a million ids to hydrate). A caller prints it here, so a Ctrl-C while
   * they are queued still leaves the user the id of the job a worker will run (reconcile queues
   * the rest); printed after, it was lost and the job, run anyway, was easily queued again.
   */
  onCreated?: (jobId: string) => void;
}

export async function submitJob(deps: SubmitDeps, input: SubmitInput): Promise<{ jobId: string; slices: number }> {
  const kind = jobKind(input.kind);
  const params = kind.params.parse(input.params);
  const slices = kind.planWithStore ? await kind.planWithStore(deps.pool, params, deps.planContext) : kind.plan(params, deps.planContext);
  const { jobId, queued, passStarted } = await withTransaction(deps.pool, async (client) => {
    const id = await createJob(client, {
      kind: kind.kind,
      params: kind.recordedParams?.(params) ?? (params as Record<string, unknown>),
      priority: kind.priority,
      maxRequests: input.maxRequests ?? null,
    });
    // Set before the commit, replacing: a key under this id is an older job's (ids start at 1
    // again when a database on this prefix is recreated or restored), maybe spent, and a reconcile
    // that sees the job once committed keeps the budget it finds (it never raises one).
    if (input.maxRequests !== undefined) await deps.budgets.setBudget(id, input.maxRequests, { replace: true });
    const created = await insertSlices(client, id, slices);
    await kind.onCreate?.(client, id, params);
    // A watch kind that planned no pass starts its first one here, from the state of its
    // identity's watch (watermark, floor): a one-shot pass continues where the last one stopped.
    const passSlice = kind.passSlice?.bind(kind);
    let passStarted = false;
    if (passSlice && !slices.some((s) => s.params.pass !== undefined)) {
      const first = await startWatchPassIn(
        client,
        id,
        (w) =>
          passSlice(params, { watermarkId: w.watermarkId, floorMs: w.floorMs, gaps: w.gaps, pass: w.passes + 1, now: deps.planContext.now, profileUserId: w.profileUserId }),
        { markRunning: false },
      );
      if (first?.started) {
        created.push({ id: first.sliceId, priority: first.priority });
        passStarted = true;
      }
    }
    // Nothing to walk (a range that ends before it starts: `--since` later than now) and no watch
    // to run passes later: the job ends here, or it would wait as `queued` for a slice forever.
    if (created.length === 0) await completeEmptyJob(client, id, 'nothing to harvest: the planned range is empty');
    return { jobId: id, queued: created, passStarted };
  });
  input.onCreated?.(jobId);
  // Each on its own slice's queue: a watch's history backfill is backfill work, its passes watch work.
  for (const s of queued) await deps.queues.enqueueSlice(s.priority, { jobId, sliceId: s.id });
  // A watch whose first pass was started here: its scheduler's first tick is the second pass, due
  // an interval from now. BullMQ's every-scheduler ticks at once otherwise, and on a busy watch
  // queue that tick came after the first pass ended and started the second straight away.
  const queues: SubmitQueues = passStarted
    ? { scheduleWatch: (id, everyMs) => deps.queues.scheduleWatch(id, everyMs, new Date(Date.now() + everyMs)) }
    : deps.queues;
  await kind.afterSubmit?.(queues, jobId, params);
  return { jobId, slices: queued.length };
}
