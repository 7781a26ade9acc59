/**
 * The notification outbox (migrations/0007_outbox.sql, 0023). Writers call `addEvent` with the
 * transaction that makes the change the event announces, so an event exists exactly when its cause
 * committed; the worker's delivery loop (src/jobs/notify.ts) claims due events per webhook, POSTs
 * them and records the outcome here. Delivery is at least once: receivers de-duplicate by id.
 * It is not in order: a worker tries a webhook's due events oldest first, but several workers send
 * side by side and a failed event is retried after later ones went out (receivers order by `at`).
 */
import { withTransaction, type Pool, type Queryable } from './db.ts';

export const EventType = {
  WATCH_NEW_TWEETS: 'watch.new_tweets',
  JOB_COMPLETED: 'job.completed',
  JOB_FAILED: 'job.failed',
  JOB_PAUSED_QUOTA: 'job.paused_quota',
  JOB_STALLED: 'job.stalled',
  QUOTA_LOW: 'quota.low',
  TEST: 'test',
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

export interface NewEvent {
  type: EventType;
  jobId?: string | null;
  /** One-line summary, as it is: the outbox escapes it for Slack (migration 0023). */
  text: string;
  data: Record<string, unknown>;
  /** Once-only guard: a second event with the same key is dropped. */
  dedupeKey?: string | null;
}

/** Events are pruned after this long. */
export const EVENT_MAX_AGE_MS = 7 * 24 * 3_600_000;
/** Events older than this are no longer sent: a failing delivery is given up, a webhook added later gets only the last day's. */
export const DELIVERY_GIVE_UP_MS = 24 * 3_600_000;

/**
 * Records an event in the caller's transaction; returns false when its dedupe key was already used.
 * `text` goes in raw: the outbox_slack_text trigger (migration 0023) writes `&`, `<` and `>` as
 * entities on every insert, so what a tweet (anyone who mentions a watched handle) or a service
 * message says cannot become `<!channel>` in the channel, whichever statement writes the event
 * (pauseJobForQuota builds its own in SQL). `data` keeps every value as it is.
 */
export async function addEvent(db: Queryable, e: NewEvent): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO outbox (type, job_id, dedupe_key, payload) VALUES ($1, $2::bigint, $3, $4::jsonb)
     ON CONFLICT (dedupe_key) DO NOTHING`,
    [e.type, e.jobId ?? null, e.dedupeKey ?? null, JSON.stringify({ text: e.text, data: e.data })],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * Announces that a job ended (completed or failed) in the transaction that ended it: once per
 * ending (the dedupe key names the job and its newest slice), so a roll-up re-run after a crash
 * sends nothing more, and a job a repair reopened announces its next end.
 */
export async function addJobEndedEvent(db: Queryable, jobId: string, status: 'completed' | 'failed'): Promise<void> {
  // The generation names the job's newest slice: an `audit --repair` reopens a job with new
  // slices, and its next end is news.
  const { rows } = await db.query<{ kind: string; tweets: string; users: string; requests: string; note: string | null; error_message: string | null; generation: string }>(
    `SELECT kind, tweets::text, users::text, requests_spent::text AS requests, note, error_message,
            (SELECT coalesce((extract(epoch FROM max(s.created_at)) * 1000000)::bigint, 0)::text FROM job_slices s WHERE s.job_id = j.id) AS generation
       FROM jobs j WHERE j.id = $1::bigint`,
    [jobId],
  );
  const j = rows[0];
  if (!j) return;
  const counts = `${j.tweets} tweets, ${j.users} users, ${j.requests} requests`;
  const why = status === 'failed' ? `: ${j.error_message ?? 'unknown'}` : j.note ? ` (${j.note})` : '';
  await addEvent(db, {
    type: status === 'failed' ? EventType.JOB_FAILED : EventType.JOB_COMPLETED,
    jobId,
    dedupeKey: `job-end:${jobId}:${j.generation}`,
    text: `harvest: job ${jobId} (${j.kind}) ${status}${why}; ${counts}`,
    data: { jobId, kind: j.kind, status, tweets: j.tweets, users: j.users, requests: j.requests, note: j.note, error: j.error_message },
  });
}

/** What a webhook receives. */
export interface EventBody {
  id: string;
  type: string;
  at: string;
  jobId: string | null;
  text: string;
  data: Record<string, unknown>;
}

export interface ClaimedEvent {
  outboxId: string;
  attempts: number;
  body: EventBody;
}

interface ClaimRow {
  id: string;
  event_id: string;
  type: string;
  job_id: string | null;
  payload: { text: string; data: Record<string, unknown> };
  created_at: Date;
  attempts: number;
}

/** Advisory lock class of a webhook's claim (two-int keys: apart from the one-bigint keys elsewhere). */
const CLAIM_LOCK_CLASS = 72_430_007;

/**
 * Claims up to `limit` events due for one webhook (never sent to it, or failed and past their
 * backoff), oldest first, and leases them for `leaseMs` so another worker does not send them at the
 * same moment. One claim per webhook at a time, under a transaction-scoped advisory lock on it
 * (call it outside a transaction: the lock lasts as long as the caller's): a claim that finds
 * another claiming for the same webhook gets nothing and its loop tries again at its next pass.
 * Not row locks on the events, which every webhook's claim shares: with SKIP LOCKED, claims for
 * two webhooks at the same moment skipped each other's rows, and one webhook got nothing that pass
 * (a `--wait` flush with two webhooks sent its job's end to one of them).
 */
export async function claimDueEvents(db: Queryable, target: string, limit: number, leaseMs: number): Promise<ClaimedEvent[]> {
  const { rows } = await db.query<ClaimRow>(
    `WITH claim_lock AS MATERIALIZED (SELECT pg_try_advisory_xact_lock($5::int, hashtext($1)) AS held),
     due AS (
       SELECT o.id FROM outbox o
         LEFT JOIN outbox_deliveries d ON d.outbox_id = o.id AND d.target = $1
        WHERE (SELECT held FROM claim_lock)
          AND o.created_at > now() - make_interval(secs => $4::float8 / 1000)
          AND (d.outbox_id IS NULL OR (d.delivered_at IS NULL AND d.next_attempt_at <= now()))
        ORDER BY o.id LIMIT $2),
     claimed AS (
       INSERT INTO outbox_deliveries (outbox_id, target, next_attempt_at)
       SELECT id, $1, now() + make_interval(secs => $3::float8 / 1000) FROM due
       ON CONFLICT (outbox_id, target) DO UPDATE SET next_attempt_at = excluded.next_attempt_at
         -- Re-checked on the row as it is now: another worker may have leased or delivered it
         -- since this statement's snapshot; a row not updated is not returned, so not claimed.
         WHERE outbox_deliveries.delivered_at IS NULL AND outbox_deliveries.next_attempt_at <= now()
       RETURNING outbox_id, attempts)
     SELECT o.id::text, o.event_id::text, o.type, o.job_id::text, o.payload, o.created_at, c.attempts
       FROM claimed c JOIN outbox o ON o.id = c.outbox_id ORDER BY o.id`,
    [target, limit, leaseMs, DELIVERY_GIVE_UP_MS, CLAIM_LOCK_CLASS],
  );
  return rows.map((r) => ({
    outboxId: r.id,
    attempts: r.attempts,
    body: { id: r.event_id, type: r.type, at: r.created_at.toISOString(), jobId: r.job_id, text: r.payload.text, data: r.payload.data },
  }));
}

export async function markDelivered(db: Queryable, target: string, outboxId: string): Promise<void> {
  await db.query(
    `UPDATE outbox_deliveries SET delivered_at = now(), attempts = attempts + 1, last_error = NULL
      WHERE outbox_id = $1::bigint AND target = $2`,
    [outboxId, target],
  );
}

/** Records a failed attempt; the next one waits `retryInMs` (the caller's backoff). */
export async function markFailed(db: Queryable, target: string, outboxId: string, error: string, retryInMs: number): Promise<void> {
  await db.query(
    `UPDATE outbox_deliveries SET attempts = attempts + 1, last_error = left($3, 500),
            next_attempt_at = now() + make_interval(secs => $4::float8 / 1000)
      WHERE outbox_id = $1::bigint AND target = $2`,
    [outboxId, target, error, retryInMs],
  );
}

/** Gives a claimed event back untried: due again after `retryInMs`, its attempts unchanged. */
export async function releaseEvent(db: Queryable, target: string, outboxId: string, retryInMs: number): Promise<void> {
  await db.query(
    `UPDATE outbox_deliveries SET next_attempt_at = now() + make_interval(secs => $3::float8 / 1000)
      WHERE outbox_id = $1::bigint AND target = $2 AND delivered_at IS NULL`,
    [outboxId, target, retryInMs],
  );
}

/** Deletes events past EVENT_MAX_AGE_MS (their deliveries go with them). */
export async function pruneEvents(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(`DELETE FROM outbox WHERE created_at < now() - make_interval(secs => $1::float8 / 1000)`, [
    EVENT_MAX_AGE_MS,
  ]);
  return rowCount ?? 0;
}

export interface DeliveryState {
  eventId: string;
  type: string;
  target: string;
  attempts: number;
  deliveredAt: Date | null;
  lastError: string | null;
}

/** Every event with its delivery to each webhook that has seen it (tests, diagnosis). */
export async function deliveryStates(db: Queryable): Promise<DeliveryState[]> {
  const { rows } = await db.query<{ event_id: string; type: string; target: string; attempts: number; delivered_at: Date | null; last_error: string | null }>(
    `SELECT o.event_id::text, o.type, d.target, d.attempts, d.delivered_at, d.last_error
       FROM outbox o JOIN outbox_deliveries d ON d.outbox_id = o.id ORDER BY o.id, d.target`,
  );
  return rows.map((r) => ({ eventId: r.event_id, type: r.type, target: r.target, attempts: r.attempts, deliveredAt: r.delivered_at, lastError: r.last_error }));
}

/** The quota levels announced: below 20% and below 10% of what the key had at its period's peak (then 0: nothing left). */
export const QUOTA_LEVELS = [20, 10] as const;

function levelOf(remaining: number, peak: number): number {
  // Nothing left is level 0, as a 403 records it (quota-events.ts): announced as spent, never
  // read as a refill above 10% that re-arms the running out.
  if (remaining <= 0) return 0;
  const share = peak > 0 ? (remaining * 100) / peak : 0;
  let level = 100;
  for (const l of QUOTA_LEVELS) if (share < l) level = l;
  return level;
}

/**
 * Fingerprints of the keys a worker's quota sync recorded in the last week (for a process given no
 * key): workers sync every 10 minutes, so a key retired from their configuration drops off.
 */
export async function recentlySyncedKeys(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ fingerprint: string }>(
    `SELECT fingerprint FROM key_quota_levels WHERE updated_at > now() - interval '7 days' ORDER BY fingerprint`,
  );
  return rows.map((r) => r.fingerprint);
}

/**
 * Records what a usage sync learned of a key and, in the same transaction, a `quota.low` event
 * when the key fell below a level not yet announced this period. The 100% is the most the key had
 * left in its period as the worker saw it (the service's allotment field means different things
 * in different deployments); a new period (another valid_until) or a refill re-arms the levels.
 */
export async function recordKeyQuota(
  pool: Pool,
  q: { fingerprint: string; remaining: number; validUntil: Date | null },
): Promise<{ level: number; notified: boolean }> {
  // One transaction: the level is never marked announced without its event, and the upsert's row
  // lock makes a second worker syncing the same key at once wait and see the level announced.
  return withTransaction(pool, (client) => recordKeyQuotaIn(client, q));
}

async function recordKeyQuotaIn(
  db: Queryable,
  q: { fingerprint: string; remaining: number; validUntil: Date | null },
): Promise<{ level: number; notified: boolean }> {
  const { rows } = await db.query<{ peak: string; notified_level: number }>(
    `INSERT INTO key_quota_levels AS k (fingerprint, valid_until, peak_remaining, remaining)
     VALUES ($1, $2::timestamptz, $3::bigint, $3::bigint)
     ON CONFLICT (fingerprint) DO UPDATE SET
       peak_remaining = CASE WHEN k.valid_until IS DISTINCT FROM excluded.valid_until THEN excluded.remaining
                             ELSE greatest(k.peak_remaining, excluded.remaining) END,
       notified_level = CASE WHEN k.valid_until IS DISTINCT FROM excluded.valid_until THEN 100 ELSE k.notified_level END,
       valid_until = excluded.valid_until, remaining = excluded.remaining, updated_at = now()
     RETURNING peak_remaining::text AS peak, notified_level`,
    [q.fingerprint, q.validUntil?.toISOString() ?? null, q.remaining],
  );
  const row = rows[0]!;
  const peak = Number(row.peak);
  const level = levelOf(q.remaining, peak);
  if (level === row.notified_level) return { level, notified: false };
  // Back above a level (a refill): re-armed, so the next fall below it is announced again.
  await db.query('UPDATE key_quota_levels SET notified_level = $2 WHERE fingerprint = $1', [q.fingerprint, level]);
  if (level > row.notified_level) return { level, notified: false };
  await addEvent(db, {
    type: EventType.QUOTA_LOW,
    text: `harvest: key ${q.fingerprint} ${level === 0 ? 'has run out of quota' : `is below ${level}% of its quota`} (${q.remaining} of ${peak} requests left${q.validUntil ? `, renews ${q.validUntil.toISOString()}` : ''})`,
    data: { key: q.fingerprint, level, remaining: q.remaining, peak, validUntil: q.validUntil?.toISOString() ?? null },
  });
  return { level, notified: true };
}
