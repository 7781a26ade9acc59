/**
 * The set-based state changes the slice runner makes between page commits: loading a slice to
 * run, finishing it with the job's roll-up, splitting a dense search slice, pausing, failing and
 * ending jobs, and starting watch passes. Each runs under the job row's lock where two slices of
 * one job could race (two slices finishing at once must not both miss "last one out").
 */
import { ErrorCode } from '../errors.ts';
import type { Pool, PoolClient, Queryable } from './db.ts';
import { withTransaction } from './db.ts';
import type { CreatedSlice } from './jobs.ts';
import { addJobEndedEvent, EventType } from './outbox.ts';
import { SliceEndReason } from './slice-ends.ts';
import { isLiveJobStatus, type JobPriority, type JobStatus, type SliceStatus } from './states.ts';
import { finishWatchPass } from './watches.ts';

export interface SliceForRun {
  id: string;
  jobId: string;
  kind: string;
  params: unknown;
  status: SliceStatus;
  cursor: string | null;
  recentCursors: string[];
  pages: number;
  emptyPages: number;
  /** Consecutive committed pages that brought no item new to the job. */
  stalePages: number;
  /** Token of the walk that holds the slice (null before any walk took it). */
  lease: string | null;
  /** The queue it runs from and the limiter mode of its requests (migration 0012). */
  priority: JobPriority;
  job: { kind: string; status: JobStatus; params: unknown; tweets: number };
}

interface SliceRow {
  id: string;
  job_id: string;
  kind: string;
  params: unknown;
  status: SliceStatus;
  cursor: string | null;
  recent_cursors: string[];
  pages: string;
  empty_pages: number;
  stale_pages: number;
  lease: string | null;
  job_kind: string;
  job_status: JobStatus;
  priority: JobPriority;
  job_params: unknown;
  job_tweets: string;
}

export async function loadSliceForRun(db: Queryable, sliceId: string): Promise<SliceForRun | null> {
  const { rows } = await db.query<SliceRow>(
    `SELECT s.id::text, s.job_id::text, s.kind, s.params, s.status, s.cursor, s.recent_cursors, s.pages::text,
            s.empty_pages, s.stale_pages, s.lease, s.priority, j.kind AS job_kind, j.status AS job_status, j.params AS job_params,
            j.tweets::text AS job_tweets
       FROM job_slices s JOIN jobs j ON j.id = s.job_id
      WHERE s.id = $1::bigint`,
    [sliceId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    jobId: r.job_id,
    kind: r.kind,
    params: r.params,
    status: r.status,
    cursor: r.cursor,
    recentCursors: r.recent_cursors,
    pages: Number(r.pages),
    emptyPages: r.empty_pages,
    stalePages: r.stale_pages,
    lease: r.lease,
    priority: r.priority,
    job: { kind: r.job_kind, status: r.job_status, params: r.job_params, tweets: Number(r.job_tweets) },
  };
}

/**
 * A walk takes its slice: the slice is marked running under a fresh lease token (page commits are
 * guarded on it, so a walk started earlier, by a worker that lost the slice, can commit nothing
 * more), and its job is marked running (a parked or queued job resumes). Lock order as everywhere:
 * the slice row, then the job row. Returns false when the slice is no longer runnable.
 */
export async function markSliceRunning(pool: Pool, sliceId: string, jobId: string, lease: string): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    await client.query('SAVEPOINT before_take');
    const taken = await client.query(
      `UPDATE job_slices SET status = 'running', lease = $2, updated_at = now()
        WHERE id = $1::bigint AND status IN ('pending', 'running')`,
      [sliceId, lease],
    );
    if ((taken.rowCount ?? 0) === 0) return false;
    // Read after the slice's lock, in a statement of its own: a pause or cancel that held the
    // slice (it locks the job's slices, then the job) has committed by now and is seen here. The
    // walk's caller checked the job before, and a pause landing in between let it take a paused
    // job's slice and buy a page fetched ahead that the pause then dropped.
    const job = await client.query<{ status: JobStatus }>('SELECT status FROM jobs WHERE id = $1::bigint FOR NO KEY UPDATE', [jobId]);
    if (!job.rows[0] || !isLiveJobStatus(job.rows[0].status)) {
      await client.query('ROLLBACK TO SAVEPOINT before_take');
      return false;
    }
    await client.query(
      `UPDATE jobs SET status = 'running', note = CASE WHEN status = 'paused_quota' THEN NULL ELSE note END,
              started_at = coalesce(started_at, now()), updated_at = now()
        WHERE id = $1::bigint AND status IN ('queued', 'paused_quota', 'scheduled')`,
      [jobId],
    );
    return true;
  });
}

/**
 * Locks a job's live slices (id order) and then the job row: the one lock order every
 * transaction that touches both follows (a page commit holds its slice, then the job), so
 * pause, cancel, fail and end cannot deadlock with commits in flight.
 */
export async function lockJobAndSlices(client: PoolClient, jobId: string): Promise<void> {
  await client.query(
    `SELECT 1 FROM job_slices WHERE job_id = $1::bigint AND status IN ('pending', 'running') ORDER BY id FOR UPDATE`,
    [jobId],
  );
  await client.query('SELECT 1 FROM jobs WHERE id = $1::bigint FOR NO KEY UPDATE', [jobId]);
}

/**
 * Appends to the job's note, keeping its newest 2,000 characters: a quiet watch adds a line a
 * pass, and keeping the oldest froze `status` and the dashboard on the first day's lines.
 */
async function appendJobNote(db: Queryable, jobId: string, note: string | undefined, options: { once?: boolean } = {}): Promise<void> {
  if (!note) return;
  await db.query(
    `UPDATE jobs SET note = right(CASE WHEN note IS NULL OR note = '' THEN $2 ELSE note || '; ' || $2 END, 2000), updated_at = now()
      WHERE id = $1::bigint AND NOT ($3 AND position($2 in coalesce(note, '')) > 0)`,
    [jobId, note, options.once === true],
  );
}

/**
 * Notes on the job what a walk's last page found, before the commit of that page ends the walk.
 * The commit marks the slice done, and another walk's finishSlice may then complete the job at
 * once: a note written by this walk's own finishSlice came after that, so the job was announced
 * completed (and `harvest wait` printed it) without the note. Written once: a walk that commits
 * the same last page again adds nothing.
 */
export async function noteWalkEnd(db: Queryable, jobId: string, note: string): Promise<void> {
  await appendJobNote(db, jobId, note, { once: true });
}

/** A one-shot job that found its target missing and read nothing fails with this (its note says which). */
export const TARGET_MISSING_MESSAGE = 'the target was not found (404: protected, suspended, deleted or unknown)';

/**
 * The job's status once no slice is active: a scheduled watch waits for its next pass, anything
 * else completes, or fails when a slice failed or when a walk found its target missing and no walk
 * read anything (a mistyped handle, a deleted list or tweet: a replies job's conversation search
 * answers an unknown root with nothing, not a 404; completing with nothing made `--wait &&
 * export` go on as if it had worked). A job that read something before a 404 (an account
 * suspended mid-timeline) completes with the note. Caller holds the job row lock.
 */
async function rollUp(client: PoolClient, jobId: string): Promise<JobStatus> {
  const { rows } = await client.query<{
    status: JobStatus;
    active: string;
    failed: string;
    missing_only: boolean;
    every: number | null;
    err: string | null;
    code: string | null;
  }>(
    `SELECT j.status,
            (SELECT count(*) FROM job_slices WHERE job_id = j.id AND status IN ('pending', 'running'))::text AS active,
            (SELECT count(*) FROM job_slices WHERE job_id = j.id AND status = 'failed')::text AS failed,
            (SELECT coalesce(bool_or(end_reason = $2) AND sum(items) = 0, false) FROM job_slices WHERE job_id = j.id) AS missing_only,
            (SELECT every_seconds FROM watches WHERE job_id = j.id AND enabled) AS every,
            (SELECT error_message FROM job_slices WHERE job_id = j.id AND status = 'failed' ORDER BY id LIMIT 1) AS err,
            (SELECT error_code FROM job_slices WHERE job_id = j.id AND status = 'failed' ORDER BY id LIMIT 1) AS code
       FROM jobs j WHERE j.id = $1::bigint`,
    [jobId, SliceEndReason.NOT_FOUND],
  );
  const r = rows[0];
  if (!r) return 'failed';
  if (Number(r.active) > 0 || !isLiveJobStatus(r.status)) return r.status;
  // A failed slice's error, else a missing target's, names why the job failed.
  const missing = r.every === null && Number(r.failed) === 0 && r.missing_only;
  const next: JobStatus = r.every !== null ? 'scheduled' : Number(r.failed) > 0 || missing ? 'failed' : 'completed';
  await client.query(
    `UPDATE jobs SET status = $2, updated_at = now(),
            finished_at = CASE WHEN $2 IN ('completed', 'failed') THEN now() ELSE finished_at END,
            error_code = CASE WHEN $2 = 'failed' THEN $3 ELSE error_code END,
            error_message = CASE WHEN $2 = 'failed' THEN $4 ELSE error_message END
      WHERE id = $1::bigint`,
    [jobId, next, missing ? ErrorCode.API_NOT_FOUND : r.code, missing ? TARGET_MISSING_MESSAGE : r.err],
  );
  if (next === 'completed' || next === 'failed') await addJobEndedEvent(client, jobId, next);
  return next;
}

/** Rolls a job up on its own (after resume: its last slice may have ended while it was paused). */
export async function rollUpJob(pool: Pool, jobId: string): Promise<JobStatus> {
  return withTransaction(pool, async (client) => {
    await client.query('SELECT 1 FROM jobs WHERE id = $1::bigint FOR NO KEY UPDATE', [jobId]);
    return rollUp(client, jobId);
  });
}

export interface FinishSlice {
  sliceId: string;
  jobId: string;
  status: 'done' | 'failed';
  note?: string;
  errorCode?: string;
  errorMessage?: string;
  /** When given, the slice ends only while this walk still holds it (a fenced walk changes nothing). */
  lease?: string;
}

/**
 * Pages an earlier walk of the same kind and params in the slice's job read (0 when none): an
 * `audit --repair` walks a stopped listing (a list's members, a timeline) again from its first
 * page, and what it re-reads brings nothing new. Read only when a walk reaches the stale limit.
 */
export async function pagesOfEarlierWalk(db: Queryable, slice: Pick<SliceForRun, 'id' | 'jobId' | 'kind' | 'params'>): Promise<number> {
  const { rows } = await db.query<{ pages: number }>(
    `SELECT coalesce(max(pages), 0)::int AS pages FROM job_slices
      WHERE job_id = $1::bigint AND kind = $2 AND params = $3::jsonb AND id < $4::bigint`,
    [slice.jobId, slice.kind, JSON.stringify(slice.params), slice.id],
  );
  return rows[0]?.pages ?? 0;
}

/**
 * Ends a slice and rolls its job up; a finished watch pass moves the watch's watermark. The last
 * page's commit may already have marked the slice done (atomically with its page): this step is
 * idempotent, so a crash between the two only means it runs again. Lock order: the slice row (its
 * UPDATE), then the job row, as a page commit takes them.
 */
export async function finishSlice(pool: Pool, f: FinishSlice): Promise<JobStatus> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ newest: string | null; new_items: string; pass: number | null }>(
      `UPDATE job_slices SET status = $2, finished_at = coalesce(finished_at, now()), updated_at = now(),
              error_code = $3, error_message = $4
        WHERE id = $1::bigint AND status IN ('pending', 'running', 'done')
          AND ($5::text IS NULL OR lease IS NOT DISTINCT FROM $5::text)
        RETURNING newest_tweet_id::text AS newest, new_items::text, (params->>'pass')::int AS pass`,
      [f.sliceId, f.status, f.errorCode ?? null, f.errorMessage ?? null, f.lease ?? null],
    );
    await client.query('SELECT 1 FROM jobs WHERE id = $1::bigint FOR NO KEY UPDATE', [f.jobId]);
    const slice = rows[0];
    // A watch pass is recorded with its slice's end, in this transaction: a crash in between left a
    // failed pass uncounted (the next pass took its number, and the dedupe key its event) and its
    // gap unrecorded. finishWatchPass moves the watermark only for a pass that read to its end: a
    // failed pass left tweets unread below its newest, and the next pass must read them.
    if (slice && slice.pass !== null) {
      await finishWatchPass(client, f.jobId, { pass: slice.pass, highWatermarkId: slice.newest, newCount: Number(slice.new_items) });
    }
    if (slice || f.lease === undefined) await appendJobNote(client, f.jobId, f.note);
    if (slice && f.status === 'failed') await noteWatchWalkFailed(client, f.jobId, slice.pass, f.errorMessage);
    return rollUp(client, f.jobId);
  });
}

/**
 * A watch job stays scheduled whatever its other walks did (rollUp), so a walk of it that failed
 * (a community's members, a `--since` backfill) or a pass that did says so in the job's note:
 * it had no error, no note and no event, and later passes read only what is new.
 */
async function noteWatchWalkFailed(client: PoolClient, jobId: string, pass: number | null, errorMessage: string | undefined): Promise<void> {
  const { rows } = await client.query('SELECT 1 FROM watches WHERE job_id = $1::bigint AND enabled', [jobId]);
  if (rows.length === 0) return;
  const why = errorMessage ? ` (${errorMessage})` : '';
  await appendJobNote(
    client,
    jobId,
    pass !== null
      ? `pass ${pass} failed${why}; the next pass reads what it left`
      : `a walk failed${why}; the watch goes on without it: \`harvest audit ${jobId} --repair\` walks it again`,
  );
}

/**
 * Hands [child.sinceMs, stopBelowMs) of a walking search slice to a new slice: the walking one
 * ends on reaching stopBelowMs. Returns the new slice's id, or null when the slice is no longer
 * walking.
 */
export async function splitSlice(
  pool: Pool,
  s: { sliceId: string; jobId: string; stopBelowMs: number; previousStopBelowMs: number | null; childParams: Record<string, unknown> },
): Promise<CreatedSlice | null> {
  return withTransaction(pool, async (client) => {
    // Guarded on the hand-over point the caller saw: a worker holding stale params (after a
    // stalled takeover) must not hand out a range another split already handed out.
    const { rows } = await client.query<{ kind: string; priority: JobPriority }>(
      `UPDATE job_slices SET params = params || jsonb_build_object('stopBelowMs', $2::bigint), updated_at = now()
        WHERE id = $1::bigint AND status IN ('pending', 'running')
          AND (params->>'stopBelowMs')::bigint IS NOT DISTINCT FROM $3::bigint
        RETURNING kind, priority`,
      [s.sliceId, s.stopBelowMs, s.previousStopBelowMs],
    );
    const parent = rows[0];
    if (!parent) return null;
    // The child walks part of its parent's range: the same kind of work, on the same queue.
    const inserted = await client.query<{ id: string }>(
      `INSERT INTO job_slices (job_id, parent_id, kind, params, priority) VALUES ($1::bigint, $2::bigint, $3, $4::jsonb, $5) RETURNING id::text`,
      [s.jobId, s.sliceId, parent.kind, JSON.stringify(s.childParams), parent.priority],
    );
    return { id: inserted.rows[0]!.id, priority: parent.priority };
  });
}

/**
 * A job's active slices (pending or running), and how many of them on the queue of `priority` no
 * walk has taken yet (pending without a lease: a walk's lease stays on its slice for good, so a
 * slice put back by a pause or a retry is not counted). A slice waiting on the other queue (a
 * search watch's pass beside its backfill) is not for the same walkers, so it is not counted.
 */
export async function activeSliceCounts(db: Queryable, jobId: string, priority: JobPriority): Promise<{ active: number; unstarted: number }> {
  const { rows } = await db.query<{ active: number; unstarted: number }>(
    `SELECT count(*)::int AS active, count(*) FILTER (WHERE status = 'pending' AND lease IS NULL AND priority = $2)::int AS unstarted
       FROM job_slices WHERE job_id = $1::bigint AND status IN ('pending', 'running')`,
    [jobId, priority],
  );
  return { active: rows[0]?.active ?? 0, unstarted: rows[0]?.unstarted ?? 0 };
}

/**
 * Parks a job for quota and, in the same statement, announces it; at most one such event per job
 * an hour, since a job whose keys stay spent is resumed and parked again at every recheck. The note
 * can quote a service's message: the text goes in raw and the outbox's trigger escapes it for
 * Slack (migration 0023), as it does for addEvent's.
 */
export async function pauseJobForQuota(db: Queryable, jobId: string, note: string): Promise<void> {
  await db.query(
    `WITH paused AS (
       UPDATE jobs SET status = 'paused_quota', note = $2, updated_at = now()
        WHERE id = $1::bigint AND status IN ('queued', 'running', 'scheduled')
        RETURNING id, kind)
     INSERT INTO outbox (type, job_id, payload)
     SELECT $3, p.id, jsonb_build_object(
              'text', format('harvest: job %s (%s) %s', p.id, p.kind, $2::text),
              'data', jsonb_build_object('jobId', p.id::text, 'kind', p.kind, 'note', $2::text))
       FROM paused p
      WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.job_id = p.id AND o.type = $3 AND o.created_at > now() - interval '1 hour')`,
    [jobId, note, EventType.JOB_PAUSED_QUOTA],
  );
}

/** Fails a job at once (401, 400, 410): its other slices stop. */
export async function failJob(pool: Pool, jobId: string, errorCode: string, errorMessage: string): Promise<void> {
  await withTransaction(pool, async (client) => {
    await lockJobAndSlices(client, jobId);
    await client.query(
      `UPDATE job_slices SET status = 'cancelled', finished_at = now(), updated_at = now()
        WHERE job_id = $1::bigint AND status IN ('pending', 'running')`,
      [jobId],
    );
    await client.query('UPDATE watches SET enabled = false WHERE job_id = $1::bigint', [jobId]);
    const failed = await client.query(
      `UPDATE jobs SET status = 'failed', error_code = $2, error_message = $3, finished_at = now(), updated_at = now()
        WHERE id = $1::bigint AND status NOT IN ('completed', 'failed', 'cancelled')`,
      [jobId, errorCode, errorMessage],
    );
    if ((failed.rowCount ?? 0) > 0) await addJobEndedEvent(client, jobId, 'failed');
  });
}

/**
 * Ends a job early but successfully (--max-tweets reached, --max-requests spent): its pending
 * slices and the calling walk's own (`sliceId`) end here; a slice another walk is walking ends
 * when that walk stops (its next grant refused for the budget, or the --max-tweets check after
 * the page it has in flight), and the job completes, with its event, once none is left. It
 * completed at the first walk's stop before, while the others' pages (paid for, in flight) were
 * still to land: `--wait`, `harvest wait` and the job.completed event gave counts that grew for
 * seconds after, so `wait && export` exported part of the job. Without `sliceId` every walking
 * slice ends at once, as before.
 */
export async function endJob(
  pool: Pool,
  jobId: string,
  note: string,
  reason: SliceEndReason,
  sliceId?: string,
  /** The calling walk has a page fetched ahead to land first: its slice stays walking (it calls again after). */
  options: { keepOwn?: boolean } = {},
): Promise<void> {
  await withTransaction(pool, async (client) => {
    await lockJobAndSlices(client, jobId);
    // The end reason in the same statement that ends the slices: a walk that recorded its own end
    // just before (recordSliceEnd, then a commit this transaction makes stale) is overwritten here,
    // and one recording after it finds the slice ended and writes nothing.
    const { rows: passes } = await client.query<{ pass: number; newest: string | null; new_items: string }>(
      `UPDATE job_slices SET status = 'done', end_reason = $2, finished_at = now(), updated_at = now()
        WHERE job_id = $1::bigint
          AND (status = 'pending' OR (status = 'running' AND NOT $4 AND ($3::bigint IS NULL OR id = $3::bigint)))
        RETURNING (params->>'pass')::int AS pass, newest_tweet_id::text AS newest, new_items::text`,
      [jobId, reason, sliceId ?? null, options.keepOwn === true],
    );
    // A watch pass ended here (its budget spent) is recorded as finishSlice records one: cut short,
    // its unread range a gap the next pass reads without buying again what this one read. Left
    // unrecorded, every pass of a budget bought the same first pages and never got further.
    for (const p of passes) {
      if (p.pass !== null) await finishWatchPass(client, jobId, { pass: p.pass, highWatermarkId: p.newest, newCount: Number(p.new_items) });
    }
    // Once: every walk that meets the spent budget comes here (13 copies on one job).
    await appendJobNote(client, jobId, note, { once: true });
    const ended = await client.query(
      `UPDATE jobs SET status = 'completed', finished_at = now(), updated_at = now()
        WHERE id = $1::bigint AND status IN ('queued', 'running', 'paused_quota')
          AND NOT EXISTS (SELECT 1 FROM job_slices WHERE job_id = $1::bigint AND status IN ('pending', 'running'))`,
      [jobId],
    );
    if ((ended.rowCount ?? 0) > 0) await addJobEndedEvent(client, jobId, 'completed');
  });
}

