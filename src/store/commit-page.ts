/**
 * Commits fetched pages with their cursors (ARCHITECTURE invariant 1): users, tweets (embedded
 * ones and their authors too), engagement history, edges, provenance, quarantine, the request
 * log, the slice's new cursor and counters, and the job's roll-up. Either all of a page lands, with
 * its cursor, or none of it.
 *
 * Group commit: `commitPages` writes several pages (of any slices and jobs) in ONE transaction,
 * so they share BEGIN/COMMIT, the WAL record of the commit and, per job, one users and one tweets
 * statement (index work done once per distinct row). Each page keeps its own guard: the page was
 * fetched with `expectedCursor` by the walk holding `lease`; the transaction first locks every
 * page's slice row in one statement, matching cursor and lease, and a page whose slice does not
 * match (another walk took it over, the slice was cancelled or split, or a Postgres crash lost the
 * last commits) is left out of the batch before anything is written, alone: StaleSliceError tells
 * its walk to re-read the slice. Any other failure of a batch (a bad row) re-runs its pages one per
 * transaction, so only the faulty page fails.
 *
 * Lock order (the same in every transaction that takes both: job-runtime, job-control): slice rows
 * first (all of the batch's, by id, in one statement), then job rows (by id).
 */
import type { CanonicalTweet, CanonicalUser } from '../api-client/canonical.ts';
import { SqlState, sqlState, withTransaction, type Pool, type PoolClient } from './db.ts';
import { upsertEdges, type EdgeBatch } from './edges.ts';
import { StaleSliceError } from './errors.ts';
import { collectPage, compareIds, idRange, mergeCollected, type CollectedPage } from './page-rows.ts';
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

// Every page's guard in one statement; rows are locked in id order (LockRows runs above the sort).
const LOCK_SLICES_SQL = `SELECT s.id::text AS id FROM job_slices s
  JOIN unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[]) AS g(id, job_id, cursor, lease)
    ON s.id = g.id AND s.job_id = g.job_id AND s.cursor IS NOT DISTINCT FROM g.cursor AND s.status IN ('pending', 'running')
    AND (g.lease IS NULL OR s.lease IS NOT DISTINCT FROM g.lease)
  ORDER BY s.id
  FOR UPDATE OF s`;

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

/** What became of one page of a group commit. */
export type PageOutcome = { ok: true; result: CommitResult } | { ok: false; error: unknown };

interface Prepared {
  index: number;
  page: PageCommit;
  collected: CollectedPage;
}

/** Credits each id of `fresh` to the first page (in batch order) that carries it; removes it from `fresh`. */
function claim(ids: Iterable<string>, fresh: Set<string>): number {
  let n = 0;
  for (const id of ids) if (fresh.delete(id)) n++;
  return n;
}

async function advance(client: PoolClient, page: PageCommit, collected: CollectedPage, newTweets: number, newUsers: number): Promise<number> {
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
      newTweets + newUsers,
      page.emptyPage,
      page.recentCursorHash ?? null,
      newest,
      oldest,
      newTweets,
      newUsers,
      requests.map((r) => r.at.toISOString()),
      requests.map((r) => r.endpoint),
      requests.map((r) => r.keyFingerprint),
      requests.map((r) => r.status),
      requests.map((r) => Math.max(0, Math.round(r.durationMs))),
      page.lease ?? null,
    ],
  });
  // The slice row is locked by this transaction with the expected cursor: a miss here is a bug,
  // and throwing rolls the batch back (its pages are then retried one by one).
  if ((advanced.rows[0]?.slices ?? 0) === 0) throw new StaleSliceError(page.sliceId, page.expectedCursor);
  return advanced.rows[0]?.stale_pages ?? 0;
}

/** One transaction for pages of distinct slices. */
async function commitBatchOnce(pool: Pool, pages: readonly PageCommit[], hooks: CommitHooks): Promise<PageOutcome[]> {
  const prepared: Prepared[] = pages.map((page, index) => ({ index, page, collected: collectPage(page.tweets, page.users, page.userRole ?? 'user') }));
  return withTransaction(pool, async (client) => {
    // The pages and their cursors commit together, so a commit lost to a Postgres crash loses
    // both: each slice resumes from the cursor before and its page is fetched again. Waiting for
    // the WAL flush buys nothing here but 1-3 ms per commit.
    await client.query('SET LOCAL synchronous_commit = off');
    // Lock the slices first: a stale page drops out before any work, alone; two workers holding
    // the same slice serialise here instead of racing through the upserts.
    const locked = await client.query<{ id: string }>({
      name: 'harvest_lock_slices',
      text: LOCK_SLICES_SQL,
      values: [pages.map((p) => p.sliceId), pages.map((p) => p.jobId), pages.map((p) => p.expectedCursor), pages.map((p) => p.lease ?? null)],
    });
    const fresh = new Set(locked.rows.map((r) => r.id));
    const outcomes: PageOutcome[] = pages.map((p) => ({ ok: false, error: new StaleSliceError(p.sliceId, p.expectedCursor) }));
    const live = prepared.filter((p) => fresh.has(p.page.sliceId));
    // Jobs in id order, pages of a job in slice-id order: every batch takes job rows in one order.
    const jobs = [...new Set(live.map((p) => p.page.jobId))].sort(compareIds);
    for (const jobId of jobs) {
      const group = live.filter((p) => p.page.jobId === jobId).sort((a, b) => compareIds(a.page.sliceId, b.page.sliceId));
      const rows = mergeCollected(group.map((p) => p.collected));
      const observedAt = group[0]!.page.observedAt ?? new Date();
      const users = await upsertUsers(client, rows.users, rows.provenance, jobId, observedAt);
      const tweets = await upsertTweets(client, rows.tweets, rows.pageTweetIds, jobId, observedAt);
      if (hooks.afterTweets) await hooks.afterTweets(client);
      const newTweetIds = new Set(tweets.newIds);
      const newUserIds = new Set(users.newIds);
      for (const { index, page, collected } of group) {
        if (page.edges?.length) await upsertEdges(client, page.edges, observedAt);
        if (page.quarantined?.length) await insertQuarantine(client, page.jobId, page.sliceId, page.quarantined, observedAt);
        const newTweets = claim(collected.pageTweetIds, newTweetIds);
        const newUsers = claim(
          collected.provenance.map((p) => p[0]),
          newUserIds,
        );
        const stalePages = await advance(client, page, collected, newTweets, newUsers);
        outcomes[index] = {
          ok: true,
          result: { newTweets, newUsers, tweetsStored: collected.tweets.length, usersStored: collected.users.length, stalePages },
        };
      }
    }
    return outcomes;
  });
}

const RETRYABLE = new Set<string>([SqlState.DEADLOCK_DETECTED, SqlState.SERIALIZATION_FAILURE]);

async function commitBatch(pool: Pool, pages: readonly PageCommit[], hooks: CommitHooks): Promise<PageOutcome[]> {
  // A deadlock between two workers writing overlapping rows rolls the whole transaction back, so
  // it is simply run again (at most 3 attempts).
  for (let attempt = 1; ; attempt++) {
    try {
      return await commitBatchOnce(pool, pages, hooks);
    } catch (error) {
      if (attempt < 3 && RETRYABLE.has(sqlState(error) ?? '')) continue;
      if (pages.length === 1) return [{ ok: false, error }];
      // One page's rows broke the batch: each page alone, so only that page fails.
      const outcomes: PageOutcome[] = [];
      for (const page of pages) outcomes.push(...(await commitBatch(pool, [page], hooks)));
      return outcomes;
    }
  }
}

/**
 * Group commit: the pages in one transaction, each guarded on its own slice, cursor and lease.
 * Outcomes come back in the pages' order; a stale page's outcome is a StaleSliceError. Two pages
 * of the same slice (a stale walk beside the one that took over) go in separate transactions.
 */
export async function commitPages(pool: Pool, pages: readonly PageCommit[], hooks: CommitHooks = {}): Promise<PageOutcome[]> {
  const seen = new Set<string>();
  const first: number[] = [];
  const later: number[] = [];
  pages.forEach((p, i) => {
    if (seen.has(p.sliceId)) later.push(i);
    else {
      seen.add(p.sliceId);
      first.push(i);
    }
  });
  const outcomes: PageOutcome[] = new Array<PageOutcome>(pages.length);
  const firstOutcomes = await commitBatch(pool, first.map((i) => pages[i]!), hooks);
  first.forEach((i, k) => (outcomes[i] = firstOutcomes[k]!));
  if (later.length > 0) {
    const laterOutcomes = await commitPages(pool, later.map((i) => pages[i]!), hooks);
    later.forEach((i, k) => (outcomes[i] = laterOutcomes[k]!));
  }
  return outcomes;
}

/** Commits one page in its own transaction; a stale page throws StaleSliceError. */
export async function commitPage(pool: Pool, page: PageCommit, hooks: CommitHooks = {}): Promise<CommitResult> {
  const [outcome] = await commitPages(pool, [page], hooks);
  if (!outcome!.ok) throw outcome!.error;
  return outcome!.result;
}
