/**
 * Commits one fetched page in ONE transaction (ARCHITECTURE invariant 1): users, tweets (embedded
 * ones and their authors too), engagement history, edges, provenance, quarantine, the request
 * log, the slice's new cursor and counters, and the job's roll-up. Either all of it lands or none.
 *
 * The slice row is the optimistic guard: the page was fetched with `expectedCursor` by the walk
 * holding `lease`; if the slice no longer has that cursor or that lease (another walk took it over,
 * the slice was cancelled or split, or a Postgres crash lost the last commits), the transaction
 * rolls back and StaleSliceError tells the walk to re-read the slice.
 *
 * Lock order (the same in every transaction that takes both: job-runtime, job-control): the slice
 * row first, then the job row.
 */
import type { CanonicalTweet, CanonicalUser } from '../api-client/canonical.ts';
import { SqlState, sqlState, withTransaction, type Pool, type PoolClient } from './db.ts';
import { upsertEdges, type EdgeBatch } from './edges.ts';
import { StaleSliceError } from './errors.ts';
import { collectPage, idRange } from './page-rows.ts';
import { insertQuarantine, type QuarantineRecord } from './requests.ts';
import { upsertTweets } from './upsert-tweets.ts';
import { upsertUsers } from './upsert-users.ts';

export interface PageCommit {
  jobId: string;
  sliceId: string;
  /** The slice's cursor this page was fetched with (optimistic guard); null for the first page. */
  expectedCursor: string | null;
  /** The lease of the walk that fetched the page (job_slices.lease); omitted: not checked. */
  lease?: string;
  nextCursor: string | null;
  sliceDone: boolean;
  /** Status the slice takes when not done (default 'running'). */
  sliceStatus?: 'done' | 'running';
  /** The page's tweets; their authors, embedded quoted/retweeted tweets and THEIR authors are stored too. */
  tweets: CanonicalTweet[];
  /** Standalone users (members, followers…). */
  users: CanonicalUser[];
  edges?: EdgeBatch[];
  /** Provenance role of the standalone users in job_users (default 'user'); tweet authors get 'author'. */
  userRole?: string;
  quarantined?: QuarantineRecord[];
  requests?: Array<{ endpoint: string; keyFingerprint: string; status: number; durationMs: number; at: Date }>;
  /** Appended to the slice's recent_cursors (the last 50 are kept). */
  recentCursorHash?: string;
  /** True increments the slice's run of empty pages; false resets it. */
  emptyPage: boolean;
  observedAt?: Date;
}

export interface CommitResult {
  /** Page tweets new to the job (job_tweets rows inserted). */
  newTweets: number;
  /** Users new to the job (distinct user ids first recorded in job_users). */
  newUsers: number;
  /** Distinct tweets written, embedded ones included. */
  tweetsStored: number;
  /** Distinct users written, authors and embedded authors included. */
  usersStored: number;
  /** The slice's run of consecutive pages that brought nothing new to the job, this one included. */
  stalePages: number;
}

const LOCK_SLICE_SQL = `SELECT 1 FROM job_slices
  WHERE id = $1::bigint AND job_id = $2::bigint AND cursor IS NOT DISTINCT FROM $3::text AND status IN ('pending', 'running')
    AND ($4::text IS NULL OR lease IS NOT DISTINCT FROM $4::text)
  FOR UPDATE`;

// The request log rides in the same statement as the slice advance: one round trip fewer per page.
const ADVANCE_SQL = `
WITH req AS (
  INSERT INTO api_requests (at, endpoint, key_fingerprint, status, duration_ms, job_id, slice_id)
  SELECT at, e, k, st, d, $2::bigint, $1::bigint
  FROM unnest($14::timestamptz[], $15::text[], $16::text[], $17::int[], $18::int[]) AS r(at, e, k, st, d)
  ON CONFLICT DO NOTHING
  RETURNING 1
),
n AS (SELECT count(*) AS requests FROM req),
s AS (
  UPDATE job_slices SET
    cursor = $4::text,
    status = $5::text,
    pages = pages + 1,
    items = items + $6::bigint,
    new_items = new_items + $7::bigint,
    requests = requests + (SELECT requests FROM n),
    empty_pages = CASE WHEN $8::boolean THEN empty_pages + 1 ELSE 0 END,
    stale_pages = CASE WHEN $7::bigint = 0 THEN stale_pages + 1 ELSE 0 END,
    recent_cursors = CASE WHEN $9::text IS NULL THEN recent_cursors
      ELSE (recent_cursors || $9::text)[greatest(1, cardinality(recent_cursors) - 48):] END,
    newest_tweet_id = greatest(newest_tweet_id, $10::bigint),
    oldest_tweet_id = least(oldest_tweet_id, $11::bigint),
    updated_at = now(),
    finished_at = CASE WHEN $5::text = 'done' THEN coalesce(finished_at, now()) ELSE finished_at END
  WHERE id = $1::bigint AND job_id = $2::bigint AND cursor IS NOT DISTINCT FROM $3::text AND status IN ('pending', 'running')
    AND ($19::text IS NULL OR lease IS NOT DISTINCT FROM $19::text)
  RETURNING job_id, stale_pages
),
j AS (
  UPDATE jobs SET
    pages = pages + 1,
    tweets = tweets + $12::bigint,
    users = users + $13::bigint,
    requests_spent = requests_spent + (SELECT requests FROM n),
    started_at = coalesce(started_at, now()),
    updated_at = now()
  WHERE id = (SELECT job_id FROM s)
  RETURNING 1
)
SELECT (SELECT count(*) FROM s)::int AS slices, (SELECT count(*) FROM j)::int AS jobs,
       coalesce((SELECT stale_pages FROM s), 0)::int AS stale_pages`;

/** Test seam: runs inside the transaction after the tweets are written (inject a failure there). */
export interface CommitHooks {
  afterTweets?: (client: PoolClient) => Promise<void>;
}

async function commitOnce(pool: Pool, page: PageCommit, hooks: CommitHooks): Promise<CommitResult> {
  const observedAt = page.observedAt ?? new Date();
  const collected = collectPage(page.tweets, page.users, page.userRole ?? 'user');
  return withTransaction(pool, async (client) => {
    // The page and its cursor commit together, so a commit lost to a Postgres crash loses both:
    // the slice resumes from the cursor before it and the page is fetched again. Waiting for the
    // WAL flush buys nothing here but 1-3 ms per page.
    await client.query('SET LOCAL synchronous_commit = off');
    // Lock the slice first: a stale page fails before doing any work, and two workers holding the
    // same slice serialise here instead of racing through the upserts.
    const locked = await client.query({ name: 'harvest_lock_slice', text: LOCK_SLICE_SQL, values: [page.sliceId, page.jobId, page.expectedCursor, page.lease ?? null] });
    if ((locked.rowCount ?? 0) === 0) throw new StaleSliceError(page.sliceId, page.expectedCursor);

    const users = await upsertUsers(client, collected.users, collected.provenance, page.jobId, observedAt);
    const tweets = await upsertTweets(client, collected.tweets, collected.pageTweetIds, page.jobId, observedAt);
    if (hooks.afterTweets) await hooks.afterTweets(client);
    if (page.edges?.length) await upsertEdges(client, page.edges, observedAt);
    if (page.quarantined?.length) await insertQuarantine(client, page.jobId, page.sliceId, page.quarantined, observedAt);
    const requests = page.requests ?? [];

    const { newest, oldest } = idRange(collected.pageTweetIds);
    const status = page.sliceDone ? 'done' : (page.sliceStatus ?? 'running');
    const advanced = await client.query<{ slices: number; stale_pages: number }>({
      name: 'harvest_advance_slice',
      text: ADVANCE_SQL,
      values: [
        page.sliceId,
        page.jobId,
        page.expectedCursor,
        page.nextCursor,
        status,
        page.tweets.length + page.users.length,
        tweets.newTweets + users.newUsers,
        page.emptyPage,
        page.recentCursorHash ?? null,
        newest,
        oldest,
        tweets.newTweets,
        users.newUsers,
        requests.map((r) => r.at.toISOString()),
        requests.map((r) => r.endpoint),
        requests.map((r) => r.keyFingerprint),
        requests.map((r) => r.status),
        requests.map((r) => Math.max(0, Math.round(r.durationMs))),
        page.lease ?? null,
      ],
    });
    if ((advanced.rows[0]?.slices ?? 0) === 0) throw new StaleSliceError(page.sliceId, page.expectedCursor);
    return {
      newTweets: tweets.newTweets,
      newUsers: users.newUsers,
      tweetsStored: tweets.stored,
      usersStored: users.stored,
      stalePages: advanced.rows[0]?.stale_pages ?? 0,
    };
  });
}

const RETRYABLE = new Set<string>([SqlState.DEADLOCK_DETECTED, SqlState.SERIALIZATION_FAILURE]);

/**
 * Commits a page. A deadlock between two workers writing overlapping rows rolls the whole
 * transaction back, so it is simply run again (at most 3 attempts).
 */
export async function commitPage(pool: Pool, page: PageCommit, hooks: CommitHooks = {}): Promise<CommitResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await commitOnce(pool, page, hooks);
    } catch (error) {
      if (attempt >= 3 || !RETRYABLE.has(sqlState(error) ?? '')) throw error;
    }
  }
}
