/**
 * Watches: a job re-read every so often, newest first, down to a watermark. A watch has an
 * identity (kind, target, filters): every watches row of one identity carries the same watermark,
 * gaps and first-pass floor, so a one-shot pass continues where a scheduled one stopped and the
 * other way round.
 *
 * Gap-proof: a pass moves the watermark only when it read down to where it started from (the
 * previous watermark, or the first pass's floor) or the service ended the walk (but not on an
 * empty page above the watermark of a walk the service does not bound: passEnd). A pass cut short
 * (empty pages, a repeated cursor, a 404, a failure) keeps the watermark, so the next pass reads
 * the new items and then, in the same newest-first walk, what the short pass left unread; the
 * unread id range is recorded in `gaps` until a pass covers it. The watermark only moves forward
 * (greatest), so a pass that finishes late can never pull it back.
 */
import type { Pool, Queryable } from './db.ts';
import { withTransaction } from './db.ts';
import { addEvent, EventType } from './outbox.ts';
import { SliceEndReason } from './slice-ends.ts';
import { TWITTER_EPOCH_MS } from './snowflake.ts';
import { insertSlices } from './jobs.ts';
import { greatestId } from './page-rows.ts';
import { InputError } from '../errors.ts';
import { isLiveJobStatus, JobStatus, LIVE_JOB_STATUSES, type JobPriority } from './states.ts';

export interface WatchGap {
  /** The unread range starts above this id (exclusive): the watermark the pass started from. */
  afterId: string;
  /** ...and ends below this id (exclusive); null: nothing of the pass's range was read. */
  beforeId: string | null;
  /**
   * The newest id the pass read: it read [beforeId, readFromId] of the listing, which the next pass
   * from the same watermark does not buy again (cutPassResume). Absent on gaps recorded before it.
   */
  readFromId?: string | null;
  reason: string;
  pass: number;
  jobId: string;
  at: string;
}

export interface WatchRow {
  jobId: string;
  kind: string;
  identity: string | null;
  handle: string | null;
  params: unknown;
  everySeconds: number | null;
  highWatermarkId: string | null;
  floorMs: number | null;
  gaps: WatchGap[];
  passes: number;
  nextDueAt: Date | null;
  lastPassStartedAt: Date | null;
  lastPassFinishedAt: Date | null;
  lastPassNew: number | null;
  enabled: boolean;
}

const COLUMNS = `job_id::text, kind, identity, handle, params, every_seconds, high_watermark_id::text, floor_ms::text,
  gaps, passes, next_due_at, last_pass_started_at, last_pass_finished_at, last_pass_new, enabled`;

function toWatch(r: Record<string, unknown>): WatchRow {
  return {
    jobId: r.job_id as string,
    kind: r.kind as string,
    identity: r.identity as string | null,
    handle: r.handle as string | null,
    params: r.params,
    everySeconds: r.every_seconds as number | null,
    highWatermarkId: r.high_watermark_id as string | null,
    floorMs: r.floor_ms === null ? null : Number(r.floor_ms),
    gaps: r.gaps as WatchGap[],
    passes: r.passes as number,
    nextDueAt: r.next_due_at as Date | null,
    lastPassStartedAt: r.last_pass_started_at as Date | null,
    lastPassFinishedAt: r.last_pass_finished_at as Date | null,
    lastPassNew: r.last_pass_new as number | null,
    enabled: r.enabled as boolean,
  };
}

/** A watch's identity: its kind and the canonical JSON of its target and filters (keys sorted). */
export function watchIdentity(kind: string, targetAndFilters: Record<string, unknown>): string {
  const keys = Object.keys(targetAndFilters)
    .filter((k) => targetAndFilters[k] !== undefined)
    .sort();
  return `${kind}:${JSON.stringify(keys.map((k) => [k, targetAndFilters[k]]))}`;
}

export interface NewWatch {
  jobId: string;
  /** A label for people (the handle, `community:<id>`...). */
  handle: string | null;
  params: unknown;
  everySeconds: number | null;
  nextDueAt?: Date | null;
  /** Default: the job's kind. */
  kind?: string;
  /** Passes of one identity share their watermark; without one the watch stands alone. */
  identity?: string;
  /** Where a first pass reads back to. An earlier watch of the identity that has one wins. */
  floorMs?: number | null;
  /** Start from this watermark (a backfill's upper bound) unless the identity's is higher. */
  seedWatermarkId?: string | null;
}

/**
 * Records a watch. With an identity, it takes over the state of the identity's latest watch:
 * watermark (the greater of that and the seed), floor and open gaps.
 */
export async function createWatch(db: Queryable, watch: NewWatch): Promise<void> {
  if (watch.identity && watch.everySeconds !== null) await refuseSecondSchedule(db, watch.identity);
  await db.query(
    `WITH prior AS (
       SELECT high_watermark_id, floor_ms, gaps FROM watches
        WHERE $6::text IS NOT NULL AND identity = $6 ORDER BY job_id DESC LIMIT 1)
     INSERT INTO watches (job_id, handle, params, every_seconds, next_due_at, kind, identity, floor_ms, high_watermark_id, gaps, linked_to_id)
     SELECT $1::bigint, $2, $3::jsonb, $4, $5, coalesce($7, (SELECT kind FROM jobs WHERE id = $1::bigint), 'mentions'), $6,
            coalesce((SELECT floor_ms FROM prior), $8::bigint),
            -- greatest() ignores nulls: either one alone is the watermark
            greatest((SELECT high_watermark_id FROM prior), $9::bigint),
            coalesce((SELECT gaps FROM prior), '[]'::jsonb),
            -- The job holds the identity's tweets from here on (linkIdentityTweets), not its history.
            greatest((SELECT high_watermark_id FROM prior), $9::bigint)`,
    [
      watch.jobId,
      watch.handle,
      JSON.stringify(watch.params ?? {}),
      watch.everySeconds,
      watch.nextDueAt?.toISOString() ?? new Date().toISOString(),
      watch.identity ?? null,
      watch.kind ?? null,
      watch.floorMs ?? null,
      watch.seedWatermarkId ?? null,
    ],
  );
}

/**
 * One schedule per identity: two scheduled watches of one target and filters would each read the
 * same pages from the same watermark at every interval (passes never overlap within a job, not
 * across jobs). Serialised on the identity, so two submits at once cannot both pass.
 */
async function refuseSecondSchedule(db: Queryable, identity: string): Promise<void> {
  await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [identity]);
  const { rows } = await db.query<{ job_id: string; status: string }>(
    `SELECT w.job_id::text, j.status FROM watches w JOIN jobs j ON j.id = w.job_id
      WHERE w.identity = $1 AND w.every_seconds IS NOT NULL AND j.status = ANY($2::text[])
      ORDER BY w.job_id LIMIT 1`,
    [identity, [...LIVE_JOB_STATUSES, JobStatus.PAUSED]],
  );
  const other = rows[0];
  if (other) {
    throw new InputError(
      `job ${other.job_id} already watches this target with these filters on a schedule (${other.status}): ` +
        `a second schedule would buy every page twice; cancel job ${other.job_id} first, or use other filters`,
    );
  }
}

/** The upper bound (ms) of a job's time-ranged backfill slices, or null when it has none. */
export async function backfillUpperBoundMs(db: Queryable, jobId: string): Promise<number | null> {
  const { rows } = await db.query<{ upper: string | null }>(
    `SELECT max((params->>'untilMs')::bigint)::text AS upper FROM job_slices
      WHERE job_id = $1::bigint AND params ? 'untilMs' AND NOT params ? 'pass'`,
    [jobId],
  );
  return rows[0]?.upper == null ? null : Number(rows[0].upper);
}

export async function getWatchRow(db: Queryable, jobId: string): Promise<WatchRow | null> {
  const { rows } = await db.query<Record<string, unknown>>(`SELECT ${COLUMNS} FROM watches WHERE job_id = $1::bigint`, [jobId]);
  return rows[0] ? toWatch(rows[0]) : null;
}

interface PassSliceRow {
  kind: string;
  end_reason: string | null;
  status: string;
  watermark: string | null;
  floor_ms: string | null;
  oldest: string | null;
  newest: string | null;
  resume_from: string | null;
  resume_below: string | null;
  empty_pages: number;
}

/** A pass the service ended on an empty page above its watermark (see passEnd). */
const EMPTY_END = 'empty-end';

/**
 * Whether a finished pass's walk ended where its whole range was read, and if not, why not. The
 * service's end of results counts, but for one case: a walk that nothing on the service's side
 * bounds (every kind but search, whose passes carry `since_id:` or `since:`) ending on an empty
 * page above its watermark. The watermark's tweet was listed before, so that end came early: the
 * outage that answers every endpoint empty (service-notes) looks exactly like it, and moving the
 * watermark would skip, for good, what lay between the last page read and the watermark. Such a
 * pass is cut short ('empty-end') once; when the next pass from the same watermark ends the same
 * way, the listing ends there (the service's depth, a watermark tweet deleted with nothing older
 * listed), and reading it again at every pass would buy it forever: it counts as complete, and the
 * gap stays listed as a range no pass will read.
 *
 * A pass resuming a cut one (cutPassResume) that read nothing below that pass's oldest
 * (`resume_below`) ended before its second part gave anything: above the cut pass's newest, which
 * was listed before, or at once below its oldest, where that pass was cut. It is held to the same
 * rule, search too (its `since_id:` bounds the whole walk, not the part below the cut). Once it has
 * read below, its end is an ordinary one: a first pass's at its floor, where nothing was listed.
 *
 * `own`: this pass. The gap it wrote when it was recorded before (a roll-up re-run after a crash)
 * is not an earlier pass's: counted as one, it made the second recording complete and moved the
 * watermark over the range the pass had not read.
 */
function passEnd(
  s: PassSliceRow,
  gaps: readonly WatchGap[],
  own: { jobId: string; pass: number },
): { complete: true; keepsGap?: true } | { complete: false; reason: string } {
  if (s.status !== 'done') return { complete: false, reason: s.status === 'failed' ? 'failed' : (s.end_reason ?? 'failed') };
  if (s.end_reason === null || s.end_reason === SliceEndReason.BOUND) return { complete: true };
  if (s.end_reason !== SliceEndReason.END) return { complete: false, reason: s.end_reason };
  const nothingBelowCut = s.resume_from !== null && s.resume_below !== null && (s.oldest === null || BigInt(s.oldest) >= BigInt(s.resume_below));
  const serviceBounded = s.kind === 'search' && !nothingBelowCut;
  const listedBefore = s.watermark !== null || nothingBelowCut;
  if (serviceBounded || !listedBefore || s.empty_pages === 0) return { complete: true };
  const lower = passLowerBound(s.watermark, s.floor_ms);
  const again = gaps.some((g) => g.afterId === lower && g.reason === EMPTY_END && !(g.jobId === own.jobId && g.pass === own.pass));
  return again ? { complete: true, keepsGap: true } : { complete: false, reason: EMPTY_END };
}

/** The lower bound (exclusive) of what a pass walks: its watermark, or the id just below its floor. */
export function passLowerBound(watermarkId: string | null, floorMs: number | string | null): string | null {
  if (watermarkId !== null) return watermarkId;
  if (floorMs === null) return null;
  return (((BigInt(floorMs) - BigInt(TWITTER_EPOCH_MS)) << 22n) - 1n).toString();
}

/** What a pass cut short had read of its range: [belowId, fromId], newest first from fromId. */
export interface PassResume {
  fromId: string;
  belowId: string;
}

/**
 * The range the last pass cut short from `lowerId` (the same watermark, or the same first-pass
 * floor) had read, when it recorded one. The next pass of a kind that can bound a walk from above
 * (search: max_id:, mentions: until_date) reads what is newer than `fromId`, then from `belowId`
 * down to `lowerId`, in one slice: a first pass that failed at page 250 of 300 costs the new pages
 * and the 50 unread, not all 300 again.
 */
export function cutPassResume(gaps: readonly WatchGap[] | undefined, lowerId: string | null): PassResume | null {
  if (lowerId === null) return null;
  const gap = (gaps ?? []).find((g) => g.afterId === lowerId && g.beforeId != null && g.readFromId != null);
  if (!gap || BigInt(gap.readFromId!) < BigInt(gap.beforeId!)) return null;
  return { fromId: gap.readFromId!, belowId: gap.beforeId! };
}

/**
 * The unread range a pass cut short leaves, and what of the listing it read. A pass that resumed
 * an earlier cut one and was cut again before it got below that pass's read range (`resume_below`)
 * leaves that range as it was: what it read above it is new and the next pass reads it again (a
 * few pages), where forgetting the older range would buy it all again.
 */
function cutRange(s: PassSliceRow | undefined): { beforeId: string | null; readFromId: string | null } {
  if (!s) return { beforeId: null, readFromId: null };
  const resumed = s.resume_from !== null && s.resume_below !== null;
  if (resumed && (s.oldest === null || BigInt(s.oldest) >= BigInt(s.resume_below!))) {
    return { beforeId: s.resume_below, readFromId: s.resume_from };
  }
  if (s.oldest === null) return { beforeId: null, readFromId: null };
  // Read: [oldest, newest], and, for a resumed pass, up to the earlier pass's newest as well.
  return { beforeId: s.oldest, readFromId: greatestId(s.newest, s.resume_from) };
}

/**
 * Records a finished pass. A complete pass (its slice ended at the service's end of results or at
 * its bound, or the slice is unknown: a caller recording by hand) moves the watermark of every
 * watch of the identity and closes the gaps it covered; a pass cut short keeps the watermark and
 * records its unread range. Idempotent per pass number (a roll-up re-run after a crash counts it
 * once); schedules the next pass (or none).
 */
export async function finishWatchPass(
  db: Queryable,
  jobId: string,
  pass: { pass: number; highWatermarkId: string | null; newCount: number; finishedAt?: Date },
): Promise<WatchRow | null> {
  const finishedAt = (pass.finishedAt ?? new Date()).toISOString();
  const { rows: slices } = await db.query<PassSliceRow>(
    // A keyword watch's first pass carries its floor as sinceMs (search.ts), the others as floorMs.
    `SELECT kind, end_reason, status, params->>'watermarkId' AS watermark, coalesce(params->>'floorMs', params->>'sinceMs') AS floor_ms,
            oldest_tweet_id::text AS oldest, newest_tweet_id::text AS newest,
            params->>'resumeFromId' AS resume_from, params->>'resumeBelowId' AS resume_below, empty_pages
       FROM job_slices WHERE job_id = $1::bigint AND (params->>'pass')::int = $2::int ORDER BY id DESC LIMIT 1`,
    [jobId, pass.pass],
  );
  const slice = slices[0];
  // Every watch row of the identity, locked in one order before any is written: this pass writes
  // them all (the watermark, the gaps), and two passes of one identity finishing at once (a
  // schedule's and a one-shot's) each locking its own row first deadlocked.
  await db.query(
    `SELECT 1 FROM watches
      WHERE job_id = $1::bigint OR identity = (SELECT identity FROM watches WHERE job_id = $1::bigint)
      ORDER BY job_id FOR UPDATE`,
    [jobId],
  );
  // No slice: a caller recording a pass by hand.
  const end = slice ? passEnd(slice, await openGaps(db, jobId), { jobId, pass: pass.pass }) : ({ complete: true } as const);
  const lower = slice ? passLowerBound(slice.watermark, slice.floor_ms) : null;
  // What the pass found: the job's tweets above where it began, less what a cut pass it resumed
  // had read. Not the slice's new rows: those hold the users new to the job too, and, in a pass's
  // first page, tweets at or below the watermark (new to a one-shot job, not to the watch).
  const found = slice ? passFound(lower, slice) : null;
  const newCount = found ? await countFound(db, jobId, found) : pass.newCount;
  const { rows: updated } = await db.query<{ identity: string | null }>(
    `UPDATE watches SET
       passes = greatest(passes, $2::int),
       last_pass_finished_at = $3,
       last_pass_new = $4,
       next_due_at = CASE WHEN every_seconds IS NULL THEN NULL ELSE $3::timestamptz + make_interval(secs => every_seconds) END
     WHERE job_id = $1::bigint
     RETURNING identity`,
    [jobId, pass.pass, finishedAt, newCount],
  );
  const row = updated[0];
  if (!row) return null;
  // The shared state: every watch of the identity, or this one alone when it has none.
  const scope = `(job_id = $1::bigint OR ($2::text IS NOT NULL AND identity = $2))`;
  if (newCount > 0) await newTweetsEvent(db, jobId, pass.pass, newCount, found ?? { aboveId: lower, readFrom: null, readTo: null });
  // A resuming pass that read nothing (an outage answering every page empty, or nothing new above
  // the cut pass and nothing below it) leaves the watch as it was, complete or cut: the watermark,
  // and the gap that lets the next pass resume again for a request or two instead of buying the
  // cut range again.
  const noProgress = slice !== undefined && slice.resume_from !== null && slice.newest === null;
  if (noProgress) {
    // Nothing to record.
  } else if (end.complete) {
    // A gap older than the pass's lower bound stays (this pass did not read it); so does the
    // empty-end gap a pass accepted as the listing's end (a range nothing will read again). A pass
    // that resumed a cut one and read nothing newer than that pass's newest moves the watermark there.
    await db.query(
      `UPDATE watches SET high_watermark_id = greatest(high_watermark_id, $3::bigint, $6::bigint),
              gaps = coalesce((SELECT jsonb_agg(g) FROM jsonb_array_elements(gaps) g
                                WHERE $4::bigint IS NOT NULL AND ((g->>'afterId')::bigint < $4::bigint
                                  OR ($5 AND g->>'reason' = '${EMPTY_END}' AND g->>'afterId' = $4::text))), '[]'::jsonb)
        WHERE ${scope}`,
      [jobId, row.identity, pass.highWatermarkId, lower, 'keepsGap' in end && end.keepsGap === true, slice?.resume_from ?? null],
    );
    if (row.identity !== null && lower !== null) {
      await linkIdentityTweets(db, jobId, greatestId(lower, slice?.resume_from)!, [pass.highWatermarkId, slice?.resume_from ?? null]);
    }
  } else if (lower !== null) {
    const gap: WatchGap = {
      afterId: lower,
      ...cutRange(slice),
      reason: end.reason,
      pass: pass.pass,
      jobId,
      at: finishedAt,
    };
    // A later short pass from the same watermark replaces the earlier gap (what it read is
    // covered), and recording the same pass again (a roll-up re-run) changes nothing. A watermark
    // already above where the pass began was moved there by a complete pass that read that range
    // (another job of the identity, run alongside this one; or this pass was a --full re-read):
    // no pass will start from `lower` again, so the gap would be listed forever for nothing.
    await db.query(
      `UPDATE watches SET gaps = coalesce((SELECT jsonb_agg(g) FROM jsonb_array_elements(gaps) g
                                            WHERE g->>'afterId' <> $3), '[]'::jsonb) || jsonb_build_array($4::jsonb)
        WHERE ${scope} AND (high_watermark_id IS NULL OR high_watermark_id <= $5::bigint)`,
      [jobId, row.identity, gap.afterId, JSON.stringify(gap), gap.afterId],
    );
  }
  return getWatchRow(db, jobId);
}

/**
 * After a complete pass of an identity's watch: links into the job the tweets the identity's other
 * jobs read between how far this job was linked and where the pass began (`upToId`: its lower
 * bound, or above it the newest a cut pass it resumed had read, which it skipped), with their
 * authors (job_users, role author), counted in jobs.tweets and jobs.users; then records how far
 * the job now holds (`covered`: its newest). A linked row's first_seen_at is when it was linked:
 * when this job first had it. Only the job's own rows are written (finishSlice holds its job row
 * already), so two passes finishing at once cannot deadlock over each other's jobs.
 */
async function linkIdentityTweets(db: Queryable, jobId: string, upToId: string, covered: ReadonlyArray<string | null>): Promise<void> {
  await db.query(
    `WITH me AS (
       SELECT identity, coalesce(linked_to_id, ((floor_ms - ${TWITTER_EPOCH_MS}) << 22) - 1, $2::bigint) AS from_id
         FROM watches WHERE job_id = $1::bigint),
     linked AS (
       INSERT INTO job_tweets (job_id, tweet_id, first_seen_at)
       SELECT DISTINCT $1::bigint, jt.tweet_id, now()
         FROM me JOIN watches o ON o.identity = me.identity AND o.job_id <> $1::bigint
         JOIN job_tweets jt ON jt.job_id = o.job_id AND jt.tweet_id > me.from_id AND jt.tweet_id <= $2::bigint
       ON CONFLICT DO NOTHING
       RETURNING tweet_id),
     authors AS (
       INSERT INTO job_users (job_id, user_id, role, first_seen_at)
       SELECT DISTINCT $1::bigint, t.author_id, 'author', now()
         FROM linked l JOIN tweets t ON t.id = l.tweet_id WHERE t.author_id IS NOT NULL
       ON CONFLICT DO NOTHING
       RETURNING user_id),
     counted AS (
       -- Users new to the job: no row of theirs in another role (the snapshot predates \`authors\`).
       UPDATE jobs SET tweets = tweets + (SELECT count(*) FROM linked),
              users = users + (SELECT count(*) FROM authors a WHERE NOT EXISTS (
                        SELECT 1 FROM job_users ju WHERE ju.job_id = $1::bigint AND ju.user_id = a.user_id)),
              updated_at = now()
        WHERE id = $1::bigint AND EXISTS (SELECT 1 FROM linked))
     UPDATE watches SET linked_to_id = greatest(linked_to_id, $2::bigint, $3::bigint, $4::bigint) WHERE job_id = $1::bigint`,
    [jobId, upToId, covered[0] ?? null, covered[1] ?? null],
  );
}

/** The ids a pass found: above `aboveId` (its lower bound), outside [readFrom, readTo] (what the cut pass it resumed had read). */
interface PassFound {
  aboveId: string | null;
  readFrom: string | null;
  readTo: string | null;
}

function passFound(lower: string | null, slice: PassSliceRow): PassFound {
  const resumed = slice.resume_from !== null && slice.resume_below !== null;
  return { aboveId: lower, readFrom: resumed ? slice.resume_below : null, readTo: resumed ? slice.resume_from : null };
}

/** The condition on a tweet id column for PassFound as $2–$4. */
const FOUND = (id: string): string =>
  `($2::bigint IS NULL OR ${id} > $2::bigint) AND NOT coalesce(${id} BETWEEN $3::bigint AND $4::bigint, false)`;

async function countFound(db: Queryable, jobId: string, found: PassFound): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM job_tweets WHERE job_id = $1::bigint AND ${FOUND('tweet_id')}`, [
    jobId,
    found.aboveId,
    found.readFrom,
    found.readTo,
  ]);
  return rows[0]?.n ?? 0;
}

/** How many of a pass's new tweets an event quotes (newest first). */
const QUOTED_TWEETS = 3;

/**
 * Announces a pass that found tweets, in the transaction that records the pass; once per pass
 * (dedupe key), so recording the same pass again sends nothing.
 */
async function newTweetsEvent(db: Queryable, jobId: string, pass: number, count: number, found: PassFound): Promise<void> {
  const { rows } = await db.query<{ id: string; text: string | null; kind: string; handle: string | null }>(
    `SELECT t.id::text, t.full_text AS text, w.kind, w.handle
       FROM watches w
       JOIN job_tweets jt ON jt.job_id = w.job_id AND ${FOUND('jt.tweet_id')}
       JOIN tweets t ON t.id = jt.tweet_id
      WHERE w.job_id = $1::bigint
      ORDER BY jt.tweet_id DESC LIMIT $5`,
    [jobId, found.aboveId, found.readFrom, found.readTo, QUOTED_TWEETS],
  );
  const first = rows[0];
  const label = first ? `${first.kind}${first.handle ? ` ${first.handle}` : ''}` : 'watch';
  const quoted = rows.map((r) => `• ${r.id}: ${(r.text ?? '').replace(/\s+/g, ' ').slice(0, 140)}`);
  await addEvent(db, {
    type: EventType.WATCH_NEW_TWEETS,
    jobId,
    dedupeKey: `watch-pass:${jobId}:${pass}`,
    text: [`harvest: ${label} (job ${jobId}) found ${count} new tweet${count === 1 ? '' : 's'} in pass ${pass}`, ...quoted].join('\n'),
    data: { jobId, pass, count, tweets: rows.map((r) => ({ id: r.id, text: r.text })) },
  });
}

export interface WatchForPass {
  jobId: string;
  jobKind: string;
  jobStatus: JobStatus;
  jobParams: unknown;
  enabled: boolean;
  watermarkId: string | null;
  floorMs: number | null;
  passes: number;
  /** Unread ranges of passes cut short (cutPassResume). */
  gaps: WatchGap[];
  /** A pass slice that is still pending or running, if any. */
  activeSliceId: string | null;
  /**
   * The account the job's profile walk resolved (job_users, role profile), or null: a timeline
   * watch reads by it, not by the handle, which an account can give up and another take.
   */
  profileUserId: string | null;
}

type MakePassSlice = (w: WatchForPass) => { kind: string; params: Record<string, unknown> };

/**
 * Starts a watch pass unless one is active (passes never overlap): under the watch row's lock,
 * `makeSlice` builds the pass's slice from the watermark; returns the slice to queue, or null.
 */
export async function startWatchPass(pool: Pool, jobId: string, makeSlice: MakePassSlice): Promise<{ sliceId: string; priority: JobPriority; started: boolean } | null> {
  return withTransaction(pool, (client) => startWatchPassIn(client, jobId, makeSlice, { markRunning: true }));
}

/** startWatchPass inside the caller's transaction (submitJob starts the first pass with the job). */
export async function startWatchPassIn(
  client: Queryable,
  jobId: string,
  makeSlice: MakePassSlice,
  options: { markRunning: boolean },
): Promise<{ sliceId: string; priority: JobPriority; started: boolean } | null> {
  // Lock first, then read in a new statement: in READ COMMITTED a statement that waited for the
  // lock still reads with its old snapshot and would miss the pass a concurrent tick just made.
  // The job row before the watch row, as pause/cancel and finishSlice take them (docs/architecture.md,
  // "One lock order"): the other way round a pause landing as a tick starts a pass deadlocks.
  await client.query('SELECT 1 FROM jobs WHERE id = $1::bigint FOR NO KEY UPDATE', [jobId]);
  await client.query('SELECT 1 FROM watches WHERE job_id = $1::bigint FOR UPDATE', [jobId]);
  const { rows } = await client.query<{
    status: JobStatus;
    kind: string;
    params: unknown;
    enabled: boolean;
    high_watermark_id: string | null;
    floor_ms: string | null;
    passes: number;
    gaps: WatchGap[];
    active: string | null;
    active_priority: JobPriority | null;
    profile_user_id: string | null;
  }>(
    `SELECT j.status, j.kind, j.params, w.enabled, w.high_watermark_id::text, w.floor_ms::text, w.passes, w.gaps,
            (SELECT user_id::text FROM job_users WHERE job_id = j.id AND role = 'profile' ORDER BY user_id LIMIT 1) AS profile_user_id,
            -- A pass is still active until the watch has recorded it: its last page may have
            -- committed (status done) before finishSlice moved the watermark. Other slices of the
            -- job (a backfill before the watch, a community's members) are not passes. The one
            -- unrecorded pass is passes + 1 (each pass is numbered so, and passes only grows to a
            -- recorded pass's number): an equality, so job_slices_pass_idx finds it among a year's
            -- 105,000 passes without reading them all (was 28 ms a tick).
            a.id AS active, a.priority AS active_priority
       FROM watches w JOIN jobs j ON j.id = w.job_id
       LEFT JOIN LATERAL (
             SELECT id::text, priority FROM job_slices
              WHERE job_id = j.id AND params ? 'pass'
                AND (status IN ('pending', 'running')
                     OR (status = 'done' AND (params->>'pass')::int = w.passes + 1))
              ORDER BY id LIMIT 1) a ON true
      WHERE w.job_id = $1::bigint`,
    [jobId],
  );
  const r = rows[0];
  if (!r || !r.enabled || !isLiveJobStatus(r.status)) return null;
  if (r.active) return { sliceId: r.active, priority: r.active_priority!, started: false };
  const slice = makeSlice({
    jobId,
    jobKind: r.kind,
    jobStatus: r.status,
    jobParams: r.params,
    enabled: r.enabled,
    watermarkId: r.high_watermark_id,
    floorMs: r.floor_ms === null ? null : Number(r.floor_ms),
    passes: r.passes,
    gaps: r.gaps,
    activeSliceId: null,
    profileUserId: r.profile_user_id,
  });
  const [inserted] = await insertSlices(client, jobId, [slice]);
  await client.query(
    `UPDATE watches SET last_pass_started_at = now(),
            next_due_at = CASE WHEN every_seconds IS NULL THEN NULL ELSE now() + make_interval(secs => every_seconds) END
      WHERE job_id = $1::bigint`,
    [jobId],
  );
  if (options.markRunning) {
    await client.query(
      `UPDATE jobs SET status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
        WHERE id = $1::bigint AND status IN ('scheduled', 'queued')`,
      [jobId],
    );
  }
  return { sliceId: inserted!.id, priority: inserted!.priority, started: true };
}

/** Open gaps of a job's watch (empty when it has none, or no watch). */
export async function openGaps(db: Queryable, jobId: string): Promise<WatchGap[]> {
  const { rows } = await db.query<{ gaps: WatchGap[] }>('SELECT gaps FROM watches WHERE job_id = $1::bigint', [jobId]);
  return rows[0]?.gaps ?? [];
}

export interface ScheduledWatch {
  jobId: string;
  everySeconds: number;
  /** When its next pass is due (null: before its first pass ended). */
  nextDueAt: Date | null;
}

export async function scheduledWatches(db: Queryable, jobId?: string): Promise<ScheduledWatch[]> {
  const { rows } = await db.query<{ job_id: string; every_seconds: number; next_due_at: Date | null }>(
    `SELECT w.job_id::text, w.every_seconds, w.next_due_at FROM watches w JOIN jobs j ON j.id = w.job_id
      WHERE w.enabled AND w.every_seconds IS NOT NULL
        AND j.status = ANY($2::text[])
        AND ($1::bigint IS NULL OR j.id = $1::bigint)`,
    [jobId ?? null, LIVE_JOB_STATUSES],
  );
  return rows.map((r) => ({ jobId: r.job_id, everySeconds: r.every_seconds, nextDueAt: r.next_due_at }));
}
