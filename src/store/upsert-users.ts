/**
 * Upserts a page's users, their audience history and the jobs' provenance in ONE statement (one
 * page, or every page of a group commit, whatever its jobs).
 * A reduced record (community member, follower list) fills gaps but never erases richer
 * columns (MERGE below); a known account seen again unchanged is not rewritten (CHANGED).
 */
import type { CanonicalUser } from '../api-client/canonical.ts';
import { plainColumns, type Cell, type PipelinedTransaction } from './db.ts';
import { arrayLiteral, cleanText, isoOrNull, jsonText, plainArrayOfRuns } from './page-rows.ts';

// The value each column takes when a sighting meets a stored row (`n` = the new record, `u` = the
// stored row). A reduced record (community member, follower list) fills gaps but never erases
// richer columns: every profile column is COALESCEd, and raw/source move only to an equal or
// richer wire shape (harvest_user_source_rank).
const RICHER = (n: string): string => `harvest_user_source_rank(${n}.source) >= harvest_user_source_rank(u.source)`;
const MERGE: ReadonlyArray<readonly [string, (n: string) => string]> = [
  ...['username', 'display_name', 'description', 'location', 'created_at', 'protected', 'verified', 'can_dm',
    'possibly_sensitive', 'followers_count', 'followings_count', 'tweets_count', 'favourites_count', 'media_count',
    'profile_image_url', 'profile_background_image_url', 'banner_url']
    .map((c) => [c, (n: string) => `coalesce(${n}.${c}, u.${c})`] as const),
  ...['bio_urls', 'pinned_tweet_ids'].map(
    (c) => [c, (n: string) => `CASE WHEN cardinality(${n}.${c}) > 0 OR ${RICHER(n)} THEN ${n}.${c} ELSE u.${c} END`] as const,
  ),
  ...['source', 'raw'].map((c) => [c, (n: string) => `CASE WHEN ${RICHER(n)} THEN ${n}.${c} ELSE u.${c} END`] as const),
];

// A known account seen again with nothing new is not written at all: in bench/store.ts ~60% of a
// page's authors are known and unchanged, and each UPDATE wrote a new row version and WAL
// (94 of 160 rows of an 8-page batch: ~1.3 ms of the users statement, plus the row lock a
// WHERE on DO UPDATE would still take). Such a row's last_seen_at then moves only when it is
// more than an hour old (migration 0010 documents the column's meaning): the row is rewritten at
// most once an hour per account for a sighting alone.
const SEEN_STEP = `interval '1 hour'`;
const COUNTS = ['followers_count', 'followings_count', 'tweets_count', 'favourites_count', 'media_count'];
const STORED = COUNTS.map((c) => `u.${c}`).join(', ');
const MERGED = COUNTS.map((c) => `coalesce(excluded.${c}, u.${c})`).join(', ');
const CHANGED = `(${MERGE.map(([, e]) => e('i')).join(', ')}) IS DISTINCT FROM (${MERGE.map(([c]) => `u.${c}`).join(', ')})
    OR u.last_seen_at < $23::timestamptz - ${SEEN_STEP} OR u.first_seen_at > $23::timestamptz`;

const SQL = `
WITH input AS (
  -- raw documents ride as one jsonb array ($22), picked by position (jsonb's array offsets make
  -- \`->\` a lookup, no join); the materialized \`seen\` below keeps only their position, and
  -- \`up\` picks them again for the rows it writes. bio_urls and pinned_tweet_ids arrive as one
  -- array literal per row
  SELECT i.id, i.username, i.display_name, i.description, i.location, i.created_at, i.protected, i.verified, i.can_dm,
    i.possibly_sensitive, i.followers_count, i.followings_count, i.tweets_count, i.favourites_count, i.media_count,
    i.profile_image_url, i.profile_background_image_url, i.banner_url, i.bio_urls::text[] AS bio_urls,
    i.pinned_tweet_ids::bigint[] AS pinned_tweet_ids, i.source, i.ord, $22::jsonb -> (i.ord::int - 1) AS raw
  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[],
    $7::boolean[], $8::boolean[], $9::boolean[], $10::boolean[], $11::bigint[], $12::bigint[], $13::bigint[],
    $14::bigint[], $15::bigint[], $16::text[], $17::text[], $18::text[], $19::text[], $20::text[], $21::text[])
    WITH ORDINALITY
  AS i(id, username, display_name, description, location, created_at, protected, verified, can_dm, possibly_sensitive,
    followers_count, followings_count, tweets_count, favourites_count, media_count, profile_image_url,
    profile_background_image_url, banner_url, bio_urls, pinned_tweet_ids, source, ord)
),
-- Each input row beside the stored row it meets (null: a new account): the new or changed go on.
seen AS MATERIALIZED (
  SELECT i.id, i.username, i.display_name, i.description, i.location, i.created_at, i.protected, i.verified, i.can_dm,
    i.possibly_sensitive, i.followers_count, i.followings_count, i.tweets_count, i.favourites_count, i.media_count,
    i.profile_image_url, i.profile_background_image_url, i.banner_url, i.bio_urls, i.pinned_tweet_ids, i.source, i.ord,
    CASE WHEN u.id IS NULL THEN true ELSE ${CHANGED} END AS changed
  FROM input i LEFT JOIN users u ON u.id = i.id
),
-- Only new or changed rows reach the INSERT; DO UPDATE still merges a row another transaction
-- inserted since this statement's snapshot.
up AS (
  INSERT INTO users AS u (id, username, display_name, description, location, created_at, protected, verified, can_dm,
    possibly_sensitive, followers_count, followings_count, tweets_count, favourites_count, media_count, profile_image_url,
    profile_background_image_url, banner_url, bio_urls, pinned_tweet_ids, source, raw, counts_changed_at, first_seen_at, last_seen_at)
  SELECT id, username, display_name, description, location, created_at, protected, verified, can_dm, possibly_sensitive,
    followers_count, followings_count, tweets_count, favourites_count, media_count, profile_image_url,
    profile_background_image_url, banner_url, bio_urls, pinned_tweet_ids, source, $22::jsonb -> (ord::int - 1), $23, $23, $23
  FROM seen WHERE changed ORDER BY id
  ON CONFLICT (id) DO UPDATE SET
    ${MERGE.map(([c, e]) => `${c} = ${e('excluded')}`).join(',\n    ')},
    -- u is the row as locked: a writer that committed the same counts first leaves nothing changed.
    counts_changed_at = CASE WHEN (${MERGED}) IS DISTINCT FROM (${STORED}) THEN excluded.counts_changed_at ELSE u.counts_changed_at END,
    first_seen_at = least(u.first_seen_at, excluded.first_seen_at),
    last_seen_at = greatest(u.last_seen_at, excluded.last_seen_at)
  RETURNING u.id, u.counts_changed_at, ${STORED}
),
-- The audience history row, from what the upsert wrote: only where it stamped a change (or inserted).
metrics AS (
  INSERT INTO user_metrics (user_id, observed_at, ${COUNTS.join(', ')})
  SELECT id, $23, ${COUNTS.join(', ')} FROM up
  WHERE counts_changed_at = $23 AND num_nonnulls(${COUNTS.join(', ')}) > 0
  ON CONFLICT DO NOTHING
),
-- Which users are new to the job is read by the slice advance (commit-page.ts) from the rows'
-- xmin, one index probe per user: the anti-join over all of the job's job_users rows this
-- statement used to run grew with the job (3k rows, 1.7 ms of a 16-page batch in bench/store.ts).
-- That count holds only while this stays DO NOTHING: an update would set xmin on rows the job
-- already had, and they would count as new. Rows go in the arrays' order, (job id, user id, role)
-- (mergeBatch): two batches inserting the same keys wait on each other in one order.
prov AS (
  INSERT INTO job_users (job_id, user_id, role, first_seen_at)
  SELECT p.job_id, p.user_id, p.role, $23 FROM unnest($24::bigint[], $25::bigint[], $26::text[]) AS p(job_id, user_id, role)
  ON CONFLICT DO NOTHING
)
SELECT 1`;

// $1–$21, in order. At module scope, as plainColumns asks.
const COLUMNS: ReadonlyArray<(u: CanonicalUser) => Cell> = [
  (u) => u.id,
  (u) => cleanText(u.username),
  (u) => cleanText(u.displayName),
  (u) => cleanText(u.description),
  (u) => cleanText(u.location),
  (u) => isoOrNull(u.createdAt),
  (u) => u.protected,
  (u) => u.verified,
  (u) => u.canDm,
  (u) => u.possiblySensitive,
  (u) => u.followersCount,
  (u) => u.followingsCount,
  (u) => u.tweetsCount,
  (u) => u.favouritesCount,
  (u) => u.mediaCount,
  (u) => cleanText(u.profileImageUrl),
  (u) => cleanText(u.profileBackgroundImageUrl),
  (u) => cleanText(u.bannerUrl),
  (u) => arrayLiteral(u.bioUrls),
  (u) => arrayLiteral(u.pinnedTweetIds),
  (u) => u.source,
];
const rawOf = (u: CanonicalUser): unknown => u.raw;
// $25–$26: user id, role.
const PROVENANCE_COLUMNS: ReadonlyArray<(p: readonly [string, string]) => Cell> = [(p) => p[0], (p) => p[1]];

/**
 * Queues the statement on a pipelined transaction (it is answered with the batch). `users` are
 * sorted by id; job_users gets one row per (`jobIds[i]`, ...`provenance[i]`), sorted by job id,
 * user id, role (mergeBatch makes all three).
 */
export function upsertUsers(
  tx: Pick<PipelinedTransaction, 'query'>,
  users: readonly CanonicalUser[],
  jobIds: readonly string[],
  provenance: ReadonlyArray<readonly [string, string]>,
  observedAt: Date,
): Promise<unknown> {
  if (users.length === 0 && provenance.length === 0) return Promise.resolve();
  const values: unknown[] = [
    ...plainColumns(users, COLUMNS),
    jsonText(users.map(rawOf)),
    observedAt.toISOString(),
    plainArrayOfRuns(jobIds),
    ...plainColumns(provenance, PROVENANCE_COLUMNS),
  ];
  return tx.query({ name: 'harvest_upsert_users', text: SQL, values });
}
