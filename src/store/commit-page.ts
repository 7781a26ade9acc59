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
import { LIVE_JOB_STATUSES } from './states.ts';
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
  /**
   * Status the slice takes when not done (default 'running'). A slice whose job is no longer live
   * (a pause committed before this page set it to 'pending') keeps its status: a page never undoes a pause.
   */
  sliceStatus?: 'done' | 'running';
  /**
   * Why the walk ends (job_slices.end_reason), written with the page that ends it (sliceDone), under
   * the same cursor and lease guard: a walk that lost its slice cannot write over the new walk's reason.
   */
  endReason?: string;
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

/**
 * The slice and its job as a commit left them (read under the commit's row locks): the walk goes
 * on from here without reading the slice again (one round trip fewer per page). `params` carries a
 * split's new bound; `jobStatus` a pause or cancel committed before this page.
 */
export interface SliceAfterCommit {
  cursor: string | null;
  status: string;
  lease: string | null;
  params: unknown;
  pages: number;
  emptyPages: number;
  recentCursors: string[];
  jobStatus: string;
  jobTweets: number;
}

// Every page's guard in one statement; rows are locked in id order (LockRows runs above the sort).
const LOCK_SLICES_SQL = `SELECT s.id::text AS id FROM job_slices s
  JOIN unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[]) AS g(id, job_id, cursor, lease)
    ON s.id = g.id AND s.job_id = g.job_id AND s.cursor IS NOT DISTINCT FROM g.cursor AND s.status IN ('pending', 'running')
    AND (g.lease IS NULL OR s.lease IS NOT DISTINCT FROM g.lease)
  ORDER BY s.id
  FOR UPDATE OF s`;

const LOCK_JOBS_SQL = `SELECT 1 FROM jobs WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`;

// Every page's slice advance, the request log and the jobs' roll-ups in ONE statement per batch:
// the request log rides with it (one round trip fewer per page), and a batch of 16 pages costs
// one statement here instead of 16 (~0.5 ms each). The guard is repeated (the rows are locked).
const ADVANCE_SQL = `
WITH g AS (
  SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[],
    $8::boolean[], $9::text[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::text[], $22::text[])
  AS g(slice_id, job_id, expected, next_cursor, status, items, new_items, empty, recent_hash, newest, oldest, new_tweets, new_users, lease, end_reason)
),
req AS (
  INSERT INTO api_requests (at, endpoint, key_fingerprint, status, duration_ms, job_id, slice_id)
  SELECT at, e, k, st, d, j, s
  FROM unnest($15::timestamptz[], $16::text[], $17::text[], $18::int[], $19::int[], $20::bigint[], $21::bigint[]) AS r(at, e, k, st, d, j, s)
  ON CONFLICT DO NOTHING
  RETURNING slice_id
),
n AS (SELECT slice_id, count(*) AS requests FROM req GROUP BY slice_id),
gn AS (SELECT g.*, coalesce(n.requests, 0) AS requests FROM g LEFT JOIN n ON n.slice_id = g.slice_id),
s AS (
  UPDATE job_slices AS js SET
    cursor = gn.next_cursor,
    status = CASE WHEN gn.status = 'done' OR jb.status = ANY($23::text[]) THEN gn.status ELSE js.status END,
    end_reason = CASE WHEN gn.status = 'done' THEN coalesce(gn.end_reason, js.end_reason) ELSE js.end_reason END,
    pages = js.pages + 1,
    items = js.items + gn.items,
    new_items = js.new_items + gn.new_items,
    requests = js.requests + gn.requests,
    empty_pages = CASE WHEN gn.empty THEN js.empty_pages + 1 ELSE 0 END,
    -- A page that lowers the slice's oldest tweet is still moving into the past: a watch pass
    -- re-reading stored pages on its way to an open gap is not stuck. (A first page has nothing
    -- to lower: it counts as before.)
    stale_pages = CASE WHEN gn.new_items = 0
      AND NOT coalesce(gn.oldest < js.oldest_tweet_id, false)
      THEN js.stale_pages + 1 ELSE 0 END,
    recent_cursors = CASE WHEN gn.recent_hash IS NULL THEN js.recent_cursors
      ELSE (js.recent_cursors || gn.recent_hash)[greatest(1, cardinality(js.recent_cursors) - 48):] END,
    newest_tweet_id = greatest(js.newest_tweet_id, gn.newest),
    oldest_tweet_id = least(js.oldest_tweet_id, gn.oldest),
    updated_at = now(),
    finished_at = CASE WHEN gn.status = 'done' THEN coalesce(js.finished_at, now()) ELSE js.finished_at END
  FROM gn JOIN jobs jb ON jb.id = gn.job_id
  WHERE js.id = gn.slice_id AND js.job_id = gn.job_id AND js.cursor IS NOT DISTINCT FROM gn.expected AND js.status IN ('pending', 'running')
    AND (gn.lease IS NULL OR js.lease IS NOT DISTINCT FROM gn.lease)
  RETURNING js.id, js.job_id, js.stale_pages, js.cursor, js.status, js.lease, js.params, js.pages, js.empty_pages, js.recent_cursors
),
totals AS (
  SELECT gn.job_id, count(*) AS pages, sum(gn.new_tweets) AS tweets, sum(gn.new_users) AS users, sum(gn.requests) AS requests
  FROM gn JOIN s ON s.id = gn.slice_id GROUP BY gn.job_id
),
j AS (
  UPDATE jobs SET
    pages = jobs.pages + totals.pages,
    tweets = jobs.tweets + totals.tweets,
    users = jobs.users + totals.users,
    requests_spent = jobs.requests_spent + totals.requests,
    started_at = coalesce(jobs.started_at, now()),
    updated_at = now()
  FROM totals WHERE jobs.id = totals.job_id
  RETURNING jobs.id, jobs.status, jobs.tweets
)
SELECT s.id::text AS id, s.stale_pages::int AS stale_pages, s.cursor, s.status, s.lease, s.params, s.pages::text AS pages,
  s.empty_pages, s.recent_cursors, j.status AS job_status, j.tweets::text AS job_tweets
FROM s LEFT JOIN j ON j.id = s.job_id`;

/** Test seam: runs inside the transaction after the tweets are written (inject a failure there). */
export interface CommitHooks {
  afterTweets?: (client: PoolClient) => Promise<void>;
}

/** A committed page: its result and its slice as the commit left it. */
export interface CommittedPage {
  result: CommitResult;
  after: SliceAfterCommit;
}

/** What became of one page of a group commit. */
export type PageOutcome = ({ ok: true } & CommittedPage) | { ok: false; error: unknown };

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

interface Advance {
  page: PageCommit;
  collected: CollectedPage;
  newTweets: number;
  newUsers: number;
}

interface AdvanceRow {
  id: string;
  stale_pages: number;
  cursor: string | null;
  status: string;
  lease: string | null;
  params: unknown;
  pages: string;
  empty_pages: number;
  recent_cursors: string[];
  job_status: string;
  job_tweets: string;
}

/** Advances every page's slice; returns each slice's state after the commit by slice id. */
async function advanceAll(client: PoolClient, rows: readonly Advance[]): Promise<Map<string, AdvanceRow>> {
  const col = <T>(fn: (r: Advance) => T): T[] => rows.map(fn);
  const requests = rows.flatMap(({ page }) => (page.requests ?? []).map((r) => ({ ...r, jobId: page.jobId, sliceId: page.sliceId })));
  const ranges = rows.map((r) => idRange(r.collected.pageTweetIds));
  const advanced = await client.query<AdvanceRow>({
    name: 'harvest_advance_slices',
    text: ADVANCE_SQL,
    values: [
      col((r) => r.page.sliceId),
      col((r) => r.page.jobId),
      col((r) => r.page.expectedCursor),
      col((r) => r.page.nextCursor),
      col((r) => (r.page.sliceDone ? 'done' : (r.page.sliceStatus ?? 'running'))),
      col((r) => r.page.tweets.length + r.page.users.length),
      col((r) => r.newTweets + r.newUsers),
      col((r) => r.page.emptyPage),
      col((r) => r.page.recentCursorHash ?? null),
      ranges.map((r) => r.newest),
      ranges.map((r) => r.oldest),
      col((r) => r.newTweets),
      col((r) => r.newUsers),
      col((r) => r.page.lease ?? null),
      requests.map((r) => r.at.toISOString()),
      requests.map((r) => r.endpoint),
      requests.map((r) => r.keyFingerprint),
      requests.map((r) => r.status),
      requests.map((r) => Math.max(0, Math.round(r.durationMs))),
      requests.map((r) => r.jobId),
      requests.map((r) => r.sliceId),
      col((r) => (r.page.sliceDone ? (r.page.endReason ?? null) : null)),
      LIVE_JOB_STATUSES,
    ],
  });
  const stale = new Map(advanced.rows.map((r) => [r.id, r]));
  // The slice rows are locked by this transaction with the expected cursors: a miss here is a bug,
  // and throwing rolls the batch back (its pages are then retried one by one).
  const missed = rows.find((r) => !stale.has(r.page.sliceId));
  if (missed) throw new StaleSliceError(missed.page.sliceId, missed.page.expectedCursor);
  return stale;
}

// The pages and their cursors commit together (asynchronous commit, begun in one round trip): a
// commit lost to a Postgres crash loses both, so each slice resumes from the cursor before and its
// page is fetched again. Waiting for the WAL flush buys nothing but 1-3 ms per batch.
const inTransaction = <T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> =>
  withTransaction(pool, fn, { asyncCommit: true });

/** One transaction for pages of distinct slices. */
async function commitBatchOnce(pool: Pool, pages: readonly PageCommit[], hooks: CommitHooks): Promise<PageOutcome[]> {
  const prepared: Prepared[] = pages.map((page, index) => ({ index, page, collected: collectPage(page.tweets, page.users, page.userRole ?? 'user') }));
  return inTransaction(pool, async (client) => {
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
    // Jobs in id order, pages of a job in slice-id order. Job rows are updated by one statement at
    // the end, in no set order: with several jobs in the batch, lock them first, by id, so every
    // transaction takes job rows in one order (after the slice rows, as everywhere).
    const jobs = [...new Set(live.map((p) => p.page.jobId))].sort(compareIds);
    if (jobs.length > 1) await client.query({ name: 'harvest_lock_jobs', text: LOCK_JOBS_SQL, values: [jobs] });
    const advances: Array<Advance & { index: number }> = [];
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
        advances.push({ index, page, collected, newTweets, newUsers });
      }
    }
    if (advances.length > 0) {
      const stale = await advanceAll(client, advances);
      for (const { index, page, collected, newTweets, newUsers } of advances) {
        const r = stale.get(page.sliceId)!;
        const after: SliceAfterCommit = {
          cursor: r.cursor,
          status: r.status,
          lease: r.lease,
          params: r.params,
          pages: Number(r.pages),
          emptyPages: r.empty_pages,
          recentCursors: r.recent_cursors,
          jobStatus: r.job_status,
          jobTweets: Number(r.job_tweets),
        };
        outcomes[index] = {
          ok: true,
          result: { newTweets, newUsers, tweetsStored: collected.tweets.length, usersStored: collected.users.length, stalePages: r.stale_pages },
          after,
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

/** Commits one page in its own transaction, returning its slice as the commit left it; a stale page throws StaleSliceError. */
export async function commitPageAlone(pool: Pool, page: PageCommit, hooks: CommitHooks = {}): Promise<CommittedPage> {
  const [outcome] = await commitPages(pool, [page], hooks);
  if (!outcome!.ok) throw outcome!.error;
  return { result: outcome!.result, after: outcome!.after };
}

/** Commits one page in its own transaction; a stale page throws StaleSliceError. */
export async function commitPage(pool: Pool, page: PageCommit, hooks: CommitHooks = {}): Promise<CommitResult> {
  return (await commitPageAlone(pool, page, hooks)).result;
}
