/**
 * Commits fetched pages with their cursors (ARCHITECTURE invariant 1): users, tweets (embedded
 * ones and their authors too), engagement history, edges, provenance, quarantine, the request
 * log, the slice's new cursor and counters, and the job's roll-up. Either all of a page lands, with
 * its cursor, or none of it.
 *
 * Group commit: `commitPages` writes several pages (of any slices and jobs) in ONE transaction,
 * so they share BEGIN/COMMIT, the WAL record of the commit and one tweets and one users statement
 * whatever their jobs (index work done once per distinct row). Each page keeps its own guard: the
 * page was fetched with `expectedCursor` by the walk holding `lease`; the transaction first locks every
 * page's slice row in one statement, matching cursor and lease. The whole transaction goes out in
 * one socket write (no statement waits for the lock's answer), so a page whose slice does not match
 * (another walk took it over, the slice was cancelled or split, or a Postgres crash lost the last
 * commits) makes the advance fail and the batch roll back; the pages the lock found fresh are then
 * sent again without it, and StaleSliceError tells its walk alone to re-read the slice. Any other
 * failure of a batch (a bad row) re-runs its pages one per transaction, so only the faulty page fails.
 *
 * Lock order (the same in every transaction that takes both: job-runtime, job-control): slice rows
 * first (all of the batch's, by id, in one statement), then job rows (by id). Between them a batch
 * takes tweets (by id), job_tweets (by job id, tweet id), users (by id), job_users (by job id,
 * user id, role), each in ONE statement for all of its jobs: two batches sharing rows (overlapping
 * searches, a list and a search) take them in one order.
 */
import type { CanonicalTweet, CanonicalUser } from '../api-client/canonical.ts';
import { isConflictAbort, plainArray, SqlState, sqlState, withPipelinedTransaction, type PipelinedTransaction, type Pool, type PoolClient, type QueryResult } from './db.ts';
import { upsertEdges, type EdgeBatch } from './edges.ts';
import { StaleSliceError } from './errors.ts';
import { SliceEndReason } from './slice-ends.ts';
import { LIVE_JOB_STATUSES } from './states.ts';
import { collectPage, compareIds, idRange, mergeBatch, type CollectedPage } from './page-rows.ts';
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
  /** When the rows were seen (default: when the batch is written); a batch takes its first page's (by job id, slice id). */
  observedAt?: Date;
  /** A page tweet left out of the slice's newest/oldest range (FetchedPage.outsideRange). */
  outsideRange?: string;
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

/**
 * A slice a page may still land on: a live one, or one its job ended because the --max-requests
 * budget was spent or --max-tweets was reached while other walks had pages in flight. Those pages
 * were paid for (sent before the refusal, inside the budget), so they are stored, under the same
 * cursor and lease guard; the slice stays done and the job completed (the advance changes a
 * slice's status only while its job is live). A cancelled or failed slice takes no page.
 */
const WRITABLE = (alias: string): string =>
  `(${alias}.status IN ('pending', 'running') OR (${alias}.status = 'done' AND ${alias}.end_reason IN ('${SliceEndReason.BUDGET}', '${SliceEndReason.MAX_TWEETS}')))`;

// Every page's guard in one statement; rows are locked in id order (LockRows runs above the sort).
const LOCK_SLICES_SQL = `SELECT s.id::text AS id FROM job_slices s
  JOIN unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[]) AS g(id, job_id, cursor, lease)
    ON s.id = g.id AND s.job_id = g.job_id AND s.cursor IS NOT DISTINCT FROM g.cursor AND ${WRITABLE('s')}
    AND (g.lease IS NULL OR s.lease IS NOT DISTINCT FROM g.lease)
  ORDER BY s.id
  FOR UPDATE OF s`;

// The lock the advance's UPDATE of jobs takes (NO KEY: rows other transactions insert that name a
// job, such as the request log, check their foreign key with KEY SHARE, which FOR UPDATE blocks).
const LOCK_JOBS_SQL = `SELECT 1 FROM jobs WHERE id = ANY($1::bigint[]) ORDER BY id FOR NO KEY UPDATE`;

// Every page's slice advance, the request log and the jobs' roll-ups in ONE statement per batch:
// the request log rides with it, and a batch of 16 pages costs one statement here instead of 16
// (~0.5 ms each). The guard is repeated (the lock's answer is not awaited: the batch is pipelined),
// and harvest_expect_advanced (migration 0009) fails the batch when a page's slice did not advance.
//
// What is new to the job is read here, not returned by the upserts (their answers are not awaited
// either): a job_tweets / job_users row whose xmin is this transaction was inserted by this batch
// (those upserts never update a row). A user is new when all of its rows for the job are this
// transaction's (a new role of a known user is not a new user); a page whose users took a new role
// is still fresh for the stale-page count (a list's members already stored as the authors of its
// tweets: each members page would count as stale, and the walk ended after 10). Each id is
// credited to the first page (in `ord` order) that carries it.
const ADVANCE_SQL = `
WITH g AS (
  SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::boolean[],
    $8::text[], $9::bigint[], $10::bigint[], $11::text[], $12::text[]) WITH ORDINALITY
  AS g(slice_id, job_id, expected, next_cursor, status, items, empty, recent_hash, newest, oldest, lease, end_reason, ord)
),
nt AS (
  SELECT ord, count(*) AS n FROM (
    SELECT DISTINCT ON (g.job_id, p.tweet_id) p.ord
    FROM unnest($21::int[], $22::bigint[]) AS p(ord, tweet_id)
    JOIN g ON g.ord = p.ord
    JOIN job_tweets jt ON jt.job_id = g.job_id AND jt.tweet_id = p.tweet_id
    WHERE jt.xmin = pg_current_xact_id()::xid
    ORDER BY g.job_id, p.tweet_id, p.ord
  ) AS first GROUP BY ord
),
nu AS (
  SELECT ord, count(*) FILTER (WHERE x.all_new) AS n, count(*) AS fresh FROM (
    SELECT DISTINCT ON (g.job_id, p.user_id) p.ord, g.job_id, p.user_id
    FROM unnest($23::int[], $24::bigint[]) AS p(ord, user_id)
    JOIN g ON g.ord = p.ord
    ORDER BY g.job_id, p.user_id, p.ord
  ) AS first
  CROSS JOIN LATERAL (
    SELECT bool_and(ju.xmin = pg_current_xact_id()::xid) AS all_new, bool_or(ju.xmin = pg_current_xact_id()::xid) AS any_new
      FROM job_users ju WHERE ju.job_id = first.job_id AND ju.user_id = first.user_id) AS x
  WHERE x.any_new
  GROUP BY ord
),
req AS (
  INSERT INTO api_requests (at, endpoint, key_fingerprint, status, duration_ms, job_id, slice_id)
  SELECT at, e, k, st, d, j, s
  FROM unnest($13::timestamptz[], $14::text[], $15::text[], $16::int[], $17::int[], $18::bigint[], $19::bigint[]) AS r(at, e, k, st, d, j, s)
  ON CONFLICT DO NOTHING
  RETURNING slice_id
),
n AS (SELECT slice_id, count(*) AS requests FROM req GROUP BY slice_id),
gn AS (
  SELECT g.*, coalesce(n.requests, 0) AS requests, coalesce(nt.n, 0) AS new_tweets, coalesce(nu.n, 0) AS new_users,
    coalesce(nu.fresh, 0) AS fresh_users
  FROM g LEFT JOIN n ON n.slice_id = g.slice_id LEFT JOIN nt ON nt.ord = g.ord LEFT JOIN nu ON nu.ord = g.ord
),
s AS (
  UPDATE job_slices AS js SET
    cursor = gn.next_cursor,
    -- A slice its job ended (budget, --max-tweets) stays done whatever the job does since.
    status = CASE WHEN js.status = 'done' THEN js.status WHEN gn.status = 'done' OR jb.status = ANY($20::text[]) THEN gn.status ELSE js.status END,
    end_reason = CASE WHEN gn.status = 'done' THEN coalesce(gn.end_reason, js.end_reason) ELSE js.end_reason END,
    pages = js.pages + 1,
    items = js.items + gn.items,
    new_items = js.new_items + gn.new_tweets + gn.new_users,
    requests = js.requests + gn.requests,
    empty_pages = CASE WHEN gn.empty THEN js.empty_pages + 1 ELSE 0 END,
    -- A page that lowers the slice's oldest tweet is still moving into the past: a watch pass
    -- re-reading stored pages on its way to an open gap is not stuck. (A first page has nothing
    -- to lower: it counts as before.)
    stale_pages = CASE WHEN gn.new_tweets + gn.fresh_users = 0
      AND NOT coalesce(gn.oldest < js.oldest_tweet_id, false)
      THEN js.stale_pages + 1 ELSE 0 END,
    recent_cursors = CASE WHEN gn.recent_hash IS NULL THEN js.recent_cursors
      ELSE (js.recent_cursors || gn.recent_hash)[greatest(1, cardinality(js.recent_cursors) - 48):] END,
    newest_tweet_id = greatest(js.newest_tweet_id, gn.newest),
    oldest_tweet_id = least(js.oldest_tweet_id, gn.oldest),
    updated_at = now(),
    finished_at = CASE WHEN gn.status = 'done' THEN coalesce(js.finished_at, now()) ELSE js.finished_at END
  FROM gn JOIN jobs jb ON jb.id = gn.job_id
  WHERE js.id = gn.slice_id AND js.job_id = gn.job_id AND js.cursor IS NOT DISTINCT FROM gn.expected AND ${WRITABLE('js')}
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
  s.empty_pages, s.recent_cursors, j.status AS job_status, j.tweets::text AS job_tweets,
  gn.new_tweets::int AS new_tweets, gn.new_users::int AS new_users
FROM s JOIN gn ON gn.slice_id = s.id LEFT JOIN j ON j.id = s.job_id
WHERE (SELECT harvest_expect_advanced(cardinality($1::bigint[]), count(*)::int) FROM s)`;

/**
 * Test seam: runs inside the transaction after the tweets are queued (inject a failure there). The
 * batch is written up to this point first, so the hook may await its own queries; the advance and
 * COMMIT go after it resolves (one write more than a batch without a hook).
 */
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

interface Advance {
  page: PageCommit;
  collected: CollectedPage;
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
  new_tweets: number;
  new_users: number;
}

/** The request log's columns ($13–$19), one row per request of every page. */
function requestColumns(rows: readonly Advance[]): unknown[][] {
  const at: string[] = [];
  const endpoint: string[] = [];
  const key: string[] = [];
  const status: number[] = [];
  const ms: number[] = [];
  const job: string[] = [];
  const slice: string[] = [];
  for (const { page } of rows) {
    for (const r of page.requests ?? []) {
      at.push(r.at.toISOString());
      endpoint.push(r.endpoint);
      key.push(r.keyFingerprint);
      status.push(r.status);
      ms.push(Math.max(0, Math.round(r.durationMs)));
      job.push(page.jobId);
      slice.push(page.sliceId);
    }
  }
  return [at, endpoint, key, status, ms, job, slice];
}

/** [position of the page in `rows` (1-based), id] of every page's tweets and users ($21–$24). */
function provenanceColumns(rows: readonly Advance[]): string[] {
  const tweetOrd: number[] = [];
  const tweetIds: string[] = [];
  const userOrd: number[] = [];
  const userIds: string[] = [];
  for (let i = 0; i < rows.length; i++) {
    const { collected } = rows[i]!;
    for (const id of collected.pageTweetIds) {
      tweetOrd.push(i + 1);
      tweetIds.push(id);
    }
    // provenance is sorted by user id: a user in two roles is one id.
    let last: string | undefined;
    for (const [id] of collected.provenance) {
      if (id === last) continue;
      last = id;
      userOrd.push(i + 1);
      userIds.push(id);
    }
  }
  return [plainArray(tweetOrd), plainArray(tweetIds), plainArray(userOrd), plainArray(userIds)];
}

/** Jobs in id order, pages of a job in slice-id order: the order rows are merged and ids credited in. */
function byJobThenSlice(a: { page: PageCommit }, b: { page: PageCommit }): number {
  return compareIds(a.page.jobId, b.page.jobId) || compareIds(a.page.sliceId, b.page.sliceId);
}

// Module scope, not a closure per page (docs/architecture.md, "Worker CPU"): `this` is the id left out.
function notId(this: string, id: string): boolean {
  return id !== this;
}

/** Queues the advance of every page's slice (in `rows` order: the order new ids are credited in). */
function queueAdvance(tx: PipelinedTransaction, rows: readonly Advance[]): Promise<QueryResult<AdvanceRow>> {
  // Loops into arrays sized up front, no closures made per call (docs/architecture.md, "Worker CPU").
  const n = rows.length;
  const sliceIds = new Array<string>(n);
  const jobIds = new Array<string>(n);
  const expected = new Array<string | null>(n);
  const next = new Array<string | null>(n);
  const statuses = new Array<string>(n);
  const items = new Array<number>(n);
  const empty = new Array<boolean>(n);
  const cursorHashes = new Array<string | null>(n);
  const newest = new Array<string | null>(n);
  const oldest = new Array<string | null>(n);
  const leases = new Array<string | null>(n);
  const endReasons = new Array<string | null>(n);
  for (let i = 0; i < n; i++) {
    const { page, collected } = rows[i]!;
    const range = idRange(page.outsideRange === undefined ? collected.pageTweetIds : collected.pageTweetIds.filter(notId, page.outsideRange));
    sliceIds[i] = page.sliceId;
    jobIds[i] = page.jobId;
    expected[i] = page.expectedCursor;
    next[i] = page.nextCursor;
    statuses[i] = page.sliceDone ? 'done' : (page.sliceStatus ?? 'running');
    items[i] = page.tweets.length + page.users.length;
    empty[i] = page.emptyPage;
    cursorHashes[i] = page.recentCursorHash ?? null;
    newest[i] = range.newest;
    oldest[i] = range.oldest;
    leases[i] = page.lease ?? null;
    endReasons[i] = page.sliceDone ? (page.endReason ?? null) : null;
  }
  return tx.query<AdvanceRow>({
    name: 'harvest_advance_slices',
    text: ADVANCE_SQL,
    values: [
      plainArray(sliceIds),
      plainArray(jobIds),
      expected,
      next,
      statuses,
      plainArray(items),
      plainArray(empty),
      cursorHashes,
      plainArray(newest),
      plainArray(oldest),
      leases,
      endReasons,
      ...requestColumns(rows),
      LIVE_JOB_STATUSES,
      ...provenanceColumns(rows),
    ],
  });
}

function toOutcome({ collected }: Advance, r: AdvanceRow): PageOutcome {
  return {
    ok: true,
    result: {
      newTweets: r.new_tweets,
      newUsers: r.new_users,
      tweetsStored: collected.tweets.length,
      usersStored: collected.users.length,
      stalePages: r.stale_pages,
    },
    after: {
      cursor: r.cursor,
      status: r.status,
      lease: r.lease,
      params: r.params,
      pages: Number(r.pages),
      emptyPages: r.empty_pages,
      recentCursors: r.recent_cursors,
      jobStatus: r.job_status,
      jobTweets: Number(r.job_tweets),
    },
  };
}

/**
 * One transaction for pages of distinct slices, sent as ONE socket write (withPipelinedTransaction):
 * BEGIN, the slice lock, the tweets and users upserts of all the pages, each page's edges and
 * quarantine, the job lock, the advance, COMMIT. Nothing waits for the lock's answer, so a stale
 * page fails the advance and with it the batch (SLICE_GUARD_MISSED); the lock's answer, already
 * in, names the fresh pages, which are sent again alone (stale pages are rare: a takeover, a
 * cancel, a split, a lost commit).
 */
async function commitBatchOnce(pool: Pool, pages: readonly PageCommit[], hooks: CommitHooks): Promise<PageOutcome[]> {
  // A page left without an outcome was stale; its error (and stack trace) is made only then.
  const outcomes: Array<PageOutcome | undefined> = new Array<PageOutcome | undefined>(pages.length);
  const settled = (): PageOutcome[] =>
    pages.map((p, i) => outcomes[i] ?? { ok: false, error: new StaleSliceError(p.sliceId, p.expectedCursor) });
  let live = pages.map((page, index) => ({ index, page, collected: collectPage(page.tweets, page.users, page.userRole ?? 'user') }));
  while (live.length > 0) {
    let locked: Promise<QueryResult<{ id: string }>> | undefined;
    const batch = live;
    try {
      const rows = await withPipelinedTransaction(pool, async (tx) => {
        // Lock the slices first: two workers holding the same slice serialise here instead of
        // racing through the upserts, and the answer says which pages were fresh.
        locked = tx.query<{ id: string }>({
          name: 'harvest_lock_slices',
          text: LOCK_SLICES_SQL,
          values: [plainArray(batch.map((p) => p.page.sliceId)), plainArray(batch.map((p) => p.page.jobId)), batch.map((p) => p.page.expectedCursor), batch.map((p) => p.page.lease ?? null)],
        });
        // Jobs in id order, pages of a job in slice-id order.
        const advances = batch.length === 1 ? batch : [...batch].sort(byJobThenSlice);
        const jobs: string[] = [];
        for (const p of advances) if (jobs[jobs.length - 1] !== p.page.jobId) jobs.push(p.page.jobId);
        // All jobs' rows in one statement per table, not one per job: two batches whose jobs share
        // tweets or authors (overlapping searches, a list and a search) took them in two orders
        // with a statement per job and deadlocked (12 in 30 rounds of two batches at once, each a
        // 1 s stall, deadlock_timeout, and the batch run again).
        const rows = mergeBatch(advances);
        // One time for the batch: a row its jobs share is written once.
        const observedAt = advances[0]!.page.observedAt ?? new Date();
        // Tweets before users: two batches in flight share authors (and job_users keys), and a
        // row the other batch inserted but has not committed makes this one wait for its COMMIT.
        // Waiting after the tweets upsert (~60% of a batch's Postgres time) lets the two batches
        // write their tweets at once; waiting before it serialised them (bench/store.ts: 13.4k ->
        // 17.9k tweets/s, A/B interleaved).
        tx.track(upsertTweets(tx, rows.tweets, rows.tweetJobIds, rows.pageTweetIds, observedAt));
        if (hooks.afterTweets) {
          const hook = tx.track(hooks.afterTweets(tx.client));
          tx.flush();
          await hook;
        }
        tx.track(upsertUsers(tx, rows.users, rows.userJobIds, rows.provenance, observedAt));
        for (const p of advances) {
          if (p.page.edges?.length) tx.track(upsertEdges(tx, p.page.edges, observedAt));
          if (p.page.quarantined?.length) tx.track(insertQuarantine(tx, p.page.jobId, p.page.sliceId, p.page.quarantined, observedAt));
        }
        // The job rows last, in id order, in a statement of their own: every batch takes slices,
        // then tweets and users, then jobs. A batch of several jobs that locked its job rows before
        // its upserts deadlocked with a one-job batch holding an author it wrote and waiting for
        // that job's row (23 deadlocks in 60 rounds, each a 1 s stall). And the advance's snapshot
        // is taken only once an earlier transaction of the same job has committed, so a user both
        // added in two roles (a list member, a tweet's author) is new to the job once, not twice.
        tx.query({ name: 'harvest_lock_jobs', text: LOCK_JOBS_SQL, values: [jobs] });
        const advanced = queueAdvance(tx, advances);
        tx.commit();
        const bySlice = new Map((await advanced).rows.map((r) => [r.id, r]));
        return advances.map((a) => ({ advance: a, row: bySlice.get(a.page.sliceId)! }));
      });
      for (const { advance, row } of rows) outcomes[advance.index] = toOutcome(advance, row);
      return settled();
    } catch (error) {
      if (sqlState(error) !== SqlState.SLICE_GUARD_MISSED || locked === undefined) throw error;
      // The lock was answered before the advance failed: send the fresh pages again; the others
      // keep their StaleSliceError. Each round drops at least one page.
      const fresh = new Set((await locked).rows.map((r) => r.id));
      live = batch.filter((p) => fresh.has(p.page.sliceId));
      // The lock and the advance check the same guard; if they ever disagreed, the same batch
      // would be sent forever.
      if (live.length === batch.length) throw error;
    }
  }
  return settled();
}

async function commitBatch(pool: Pool, pages: readonly PageCommit[], hooks: CommitHooks): Promise<PageOutcome[]> {
  // A deadlock between two workers writing overlapping rows rolls the whole transaction back, so
  // it is simply run again (at most 3 attempts).
  for (let attempt = 1; ; attempt++) {
    try {
      return await commitBatchOnce(pool, pages, hooks);
    } catch (error) {
      if (attempt < 3 && isConflictAbort(error)) continue;
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
