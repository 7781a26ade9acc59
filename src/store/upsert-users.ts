/**
 * Upserts a page's users, their audience history and the job's provenance in ONE statement.
 * A reduced record (community member, follower list) fills gaps but never erases richer
 * columns: every profile column is COALESCEd, and raw/source move only to an equal or richer
 * wire shape (harvest_user_source_rank).
 */
import type { CanonicalUser } from '../api-client/canonical.ts';
import type { PipelinedTransaction } from './db.ts';
import { arrayLiteral, cleanText, isoOrNull, jsonText } from './page-rows.ts';

const SQL = `
WITH input AS (
  -- raw documents ride as one jsonb array ($22), matched to the rows by position
  SELECT i.*, r.raw FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[],
    $7::boolean[], $8::boolean[], $9::boolean[], $10::boolean[], $11::bigint[], $12::bigint[], $13::bigint[],
    $14::bigint[], $15::bigint[], $16::text[], $17::text[], $18::text[], $19::text[], $20::text[], $21::text[])
    WITH ORDINALITY
  AS i(id, username, display_name, description, location, created_at, protected, verified, can_dm, possibly_sensitive,
    followers_count, followings_count, tweets_count, favourites_count, media_count, profile_image_url,
    profile_background_image_url, banner_url, bio_urls, pinned_tweet_ids, source, ord)
  JOIN jsonb_array_elements($22::jsonb) WITH ORDINALITY AS r(raw, ord) ON r.ord = i.ord
),
metrics AS (
  INSERT INTO user_metrics (user_id, observed_at, followers_count, followings_count, tweets_count, favourites_count, media_count)
  SELECT i.id, $23, coalesce(i.followers_count, u.followers_count), coalesce(i.followings_count, u.followings_count),
    coalesce(i.tweets_count, u.tweets_count), coalesce(i.favourites_count, u.favourites_count), coalesce(i.media_count, u.media_count)
  FROM input i LEFT JOIN users u ON u.id = i.id
  WHERE num_nonnulls(i.followers_count, i.followings_count, i.tweets_count, i.favourites_count, i.media_count) > 0
    AND (u.id IS NULL OR (coalesce(i.followers_count, u.followers_count), coalesce(i.followings_count, u.followings_count),
      coalesce(i.tweets_count, u.tweets_count), coalesce(i.favourites_count, u.favourites_count), coalesce(i.media_count, u.media_count))
      IS DISTINCT FROM (u.followers_count, u.followings_count, u.tweets_count, u.favourites_count, u.media_count))
  ON CONFLICT DO NOTHING
),
up AS (
  INSERT INTO users AS u (id, username, display_name, description, location, created_at, protected, verified, can_dm,
    possibly_sensitive, followers_count, followings_count, tweets_count, favourites_count, media_count, profile_image_url,
    profile_background_image_url, banner_url, bio_urls, pinned_tweet_ids, source, raw, first_seen_at, last_seen_at)
  SELECT id, username, display_name, description, location, created_at, protected, verified, can_dm, possibly_sensitive,
    followers_count, followings_count, tweets_count, favourites_count, media_count, profile_image_url,
    profile_background_image_url, banner_url, bio_urls::text[], pinned_tweet_ids::bigint[], source, raw, $23, $23
  FROM input ORDER BY id
  ON CONFLICT (id) DO UPDATE SET
    username = coalesce(excluded.username, u.username),
    display_name = coalesce(excluded.display_name, u.display_name),
    description = coalesce(excluded.description, u.description),
    location = coalesce(excluded.location, u.location),
    created_at = coalesce(excluded.created_at, u.created_at),
    protected = coalesce(excluded.protected, u.protected),
    verified = coalesce(excluded.verified, u.verified),
    can_dm = coalesce(excluded.can_dm, u.can_dm),
    possibly_sensitive = coalesce(excluded.possibly_sensitive, u.possibly_sensitive),
    followers_count = coalesce(excluded.followers_count, u.followers_count),
    followings_count = coalesce(excluded.followings_count, u.followings_count),
    tweets_count = coalesce(excluded.tweets_count, u.tweets_count),
    favourites_count = coalesce(excluded.favourites_count, u.favourites_count),
    media_count = coalesce(excluded.media_count, u.media_count),
    profile_image_url = coalesce(excluded.profile_image_url, u.profile_image_url),
    profile_background_image_url = coalesce(excluded.profile_background_image_url, u.profile_background_image_url),
    banner_url = coalesce(excluded.banner_url, u.banner_url),
    bio_urls = CASE WHEN cardinality(excluded.bio_urls) > 0 OR harvest_user_source_rank(excluded.source) >= harvest_user_source_rank(u.source)
      THEN excluded.bio_urls ELSE u.bio_urls END,
    pinned_tweet_ids = CASE WHEN cardinality(excluded.pinned_tweet_ids) > 0 OR harvest_user_source_rank(excluded.source) >= harvest_user_source_rank(u.source)
      THEN excluded.pinned_tweet_ids ELSE u.pinned_tweet_ids END,
    source = CASE WHEN harvest_user_source_rank(excluded.source) >= harvest_user_source_rank(u.source) THEN excluded.source ELSE u.source END,
    raw = CASE WHEN harvest_user_source_rank(excluded.source) >= harvest_user_source_rank(u.source) THEN excluded.raw ELSE u.raw END,
    first_seen_at = least(u.first_seen_at, excluded.first_seen_at),
    last_seen_at = greatest(u.last_seen_at, excluded.last_seen_at)
),
-- Which users are new to the job is read by the slice advance (commit-page.ts) from the rows'
-- xmin, one index probe per user: the anti-join over all of the job's job_users rows this
-- statement used to run grew with the job (3k rows, 1.7 ms of a 16-page batch in bench/store.ts).
prov AS (
  INSERT INTO job_users (job_id, user_id, role, first_seen_at)
  SELECT $24::bigint, p.user_id, p.role, $23 FROM unnest($25::bigint[], $26::text[]) AS p(user_id, role)
  ON CONFLICT DO NOTHING
)
SELECT 1`;

/** Queues the statement on a pipelined transaction (it is answered with the batch). */
export function upsertUsers(
  tx: Pick<PipelinedTransaction, 'query'>,
  users: readonly CanonicalUser[],
  provenance: ReadonlyArray<readonly [string, string]>,
  jobId: string,
  observedAt: Date,
): Promise<unknown> {
  if (users.length === 0 && provenance.length === 0) return Promise.resolve();
  const values: unknown[] = [
    users.map((u) => u.id),
    users.map((u) => cleanText(u.username)),
    users.map((u) => cleanText(u.displayName)),
    users.map((u) => cleanText(u.description)),
    users.map((u) => cleanText(u.location)),
    users.map((u) => isoOrNull(u.createdAt)),
    users.map((u) => u.protected),
    users.map((u) => u.verified),
    users.map((u) => u.canDm),
    users.map((u) => u.possiblySensitive),
    users.map((u) => u.followersCount),
    users.map((u) => u.followingsCount),
    users.map((u) => u.tweetsCount),
    users.map((u) => u.favouritesCount),
    users.map((u) => u.mediaCount),
    users.map((u) => cleanText(u.profileImageUrl)),
    users.map((u) => cleanText(u.profileBackgroundImageUrl)),
    users.map((u) => cleanText(u.bannerUrl)),
    users.map((u) => arrayLiteral(u.bioUrls)),
    users.map((u) => arrayLiteral(u.pinnedTweetIds)),
    users.map((u) => u.source),
    jsonText(users.map((u) => u.raw)),
    observedAt.toISOString(),
    jobId,
    provenance.map((p) => p[0]),
    provenance.map((p) => p[1]),
  ];
  return tx.query({ name: 'harvest_upsert_users', text: SQL, values });
}
