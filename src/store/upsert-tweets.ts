/**
 * Upserts a page's tweets (embedded quoted/retweeted ones included), their engagement history and
 * the jobs' provenance in ONE statement (one page, or every page of a group commit, whatever its
 * jobs). Counts are COALESCEd so an embedded copy without counts never erases them;
 * raw/source/media move only to an equal or richer wire shape (v3 > v2 > v2-embedded).
 */
import type { CanonicalTweet } from '../api-client/canonical.ts';
import { plainArray, plainColumns, type Cell, type PipelinedTransaction } from './db.ts';
import { arrayLiteral, cleanText, isoOrNull, jsonText, plainArrayOfRuns } from './page-rows.ts';

const RANK = (col: string): string => `(CASE ${col} WHEN 'v3' THEN 3 WHEN 'v2' THEN 2 ELSE 1 END)`;
const RICHER = `${RANK('excluded.source')} >= ${RANK('t.source')}`;
const COUNTS = ['like_count', 'retweet_count', 'reply_count', 'quote_count', 'bookmark_count', 'view_count'];
const STORED = COUNTS.map((c) => `t.${c}`).join(', ');
const MERGED = COUNTS.map((c) => `coalesce(excluded.${c}, t.${c})`).join(', ');

const SQL = `
WITH input AS (
  -- media ($24) and raw ($26) ride as one jsonb array each, picked by position (jsonb's array
  -- offsets make \`->\` a lookup): one JSON.stringify per page instead of escaping every document
  -- into a text[] element, and no join that would hash or materialize the documents. This CTE is
  -- read once (by \`up\`), so it is inlined, not stored: \`metrics\` reads what \`up\` returns.
  SELECT i.*, $24::jsonb -> (i.ord::int - 1) AS media, $26::jsonb -> (i.ord::int - 1) AS raw
  FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::timestamptz[], $5::text[], $6::bigint[], $7::bigint[],
    $8::text[], $9::bigint[], $10::bigint[], $11::boolean[], $12::boolean[], $13::boolean[], $14::bigint[], $15::bigint[],
    $16::bigint[], $17::bigint[], $18::bigint[], $19::bigint[], $20::text[], $21::text[], $22::text[], $23::text[],
    $25::text[]) WITH ORDINALITY
  AS i(id, author_id, full_text, created_at, lang, conversation_id, in_reply_to_tweet_id, in_reply_to_username,
    quoted_tweet_id, retweeted_tweet_id, is_reply, is_quote_status, is_replies_limited, like_count, retweet_count,
    reply_count, quote_count, bookmark_count, view_count, hashtags, cashtags, mentions, urls, source, ord)
),
up AS (
  INSERT INTO tweets AS t (id, author_id, full_text, created_at, lang, conversation_id, in_reply_to_tweet_id,
    in_reply_to_username, quoted_tweet_id, retweeted_tweet_id, is_reply, is_quote_status, is_replies_limited,
    ${COUNTS.join(', ')}, hashtags, cashtags, mentions, urls, media, source, raw, counts_changed_at, first_seen_at, last_seen_at)
  SELECT id, author_id, full_text, created_at, lang, conversation_id, in_reply_to_tweet_id, in_reply_to_username,
    quoted_tweet_id, retweeted_tweet_id, is_reply, is_quote_status, is_replies_limited, ${COUNTS.join(', ')},
    hashtags::text[], cashtags::text[], mentions::text[], urls::text[], media, source, raw, $27, $27, $27
  FROM input ORDER BY id
  ON CONFLICT (id) DO UPDATE SET
    author_id = coalesce(excluded.author_id, t.author_id),
    full_text = CASE WHEN ${RICHER} THEN excluded.full_text ELSE t.full_text END,
    created_at = excluded.created_at,
    lang = coalesce(excluded.lang, t.lang),
    conversation_id = coalesce(excluded.conversation_id, t.conversation_id),
    in_reply_to_tweet_id = coalesce(excluded.in_reply_to_tweet_id, t.in_reply_to_tweet_id),
    in_reply_to_username = coalesce(excluded.in_reply_to_username, t.in_reply_to_username),
    quoted_tweet_id = coalesce(excluded.quoted_tweet_id, t.quoted_tweet_id),
    retweeted_tweet_id = coalesce(excluded.retweeted_tweet_id, t.retweeted_tweet_id),
    is_reply = excluded.is_reply OR t.is_reply,
    is_quote_status = excluded.is_quote_status OR t.is_quote_status,
    is_replies_limited = coalesce(excluded.is_replies_limited, t.is_replies_limited),
    ${COUNTS.map((c) => `${c} = coalesce(excluded.${c}, t.${c})`).join(',\n    ')},
    -- t is the row as locked: a writer that committed the same counts first leaves nothing changed.
    counts_changed_at = CASE WHEN (${MERGED}) IS DISTINCT FROM (${STORED}) THEN excluded.counts_changed_at ELSE t.counts_changed_at END,
    hashtags = CASE WHEN ${RICHER} THEN excluded.hashtags ELSE t.hashtags END,
    cashtags = CASE WHEN ${RICHER} THEN excluded.cashtags ELSE t.cashtags END,
    mentions = CASE WHEN ${RICHER} THEN excluded.mentions ELSE t.mentions END,
    urls = CASE WHEN ${RICHER} THEN excluded.urls ELSE t.urls END,
    media = CASE WHEN ${RICHER} THEN excluded.media ELSE t.media END,
    source = CASE WHEN ${RICHER} THEN excluded.source ELSE t.source END,
    raw = CASE WHEN ${RICHER} THEN excluded.raw ELSE t.raw END,
    first_seen_at = least(t.first_seen_at, excluded.first_seen_at),
    last_seen_at = greatest(t.last_seen_at, excluded.last_seen_at)
  RETURNING t.id, t.counts_changed_at, ${STORED}
),
-- The history row, from what the upsert wrote: only where it stamped a change (or inserted).
metrics AS (
  INSERT INTO tweet_metrics (tweet_id, observed_at, ${COUNTS.join(', ')})
  SELECT id, $27, ${COUNTS.join(', ')} FROM up
  WHERE counts_changed_at = $27 AND num_nonnulls(${COUNTS.join(', ')}) > 0
  ON CONFLICT DO NOTHING
),
-- Which of these rows are new to the job is read by the slice advance (commit-page.ts) from the
-- rows' xmin, in the same pipelined batch: nothing is returned here for the client to wait on.
-- That count holds only while this stays DO NOTHING: an update would set xmin on rows the job
-- already had, and they would count as new. Rows go in the arrays' order, (job id, tweet id)
-- (mergeBatch): two batches inserting the same keys wait on each other in one order.
prov AS (
  INSERT INTO job_tweets (job_id, tweet_id, first_seen_at)
  SELECT p.job_id, p.tweet_id, $27 FROM unnest($28::bigint[], $29::bigint[]) AS p(job_id, tweet_id)
  ON CONFLICT DO NOTHING
)
SELECT 1`;

// $1–$23, in order. At module scope, as plainColumns asks.
const COLUMNS: ReadonlyArray<(t: CanonicalTweet) => Cell> = [
  (t) => t.id,
  (t) => t.authorId,
  (t) => cleanText(t.fullText) ?? '',
  (t) => isoOrNull(t.createdAt),
  (t) => cleanText(t.lang),
  (t) => t.conversationId,
  (t) => t.inReplyToTweetId,
  (t) => cleanText(t.inReplyToUsername),
  (t) => t.quotedTweetId ?? t.quoted?.id ?? null,
  (t) => t.retweetedTweetId ?? t.retweeted?.id ?? null,
  (t) => t.isReply,
  (t) => t.isQuoteStatus,
  (t) => t.isRepliesLimited,
  (t) => t.likeCount,
  (t) => t.retweetCount,
  (t) => t.replyCount,
  (t) => t.quoteCount,
  (t) => t.bookmarkCount,
  (t) => t.viewCount,
  (t) => arrayLiteral(t.hashtags),
  (t) => arrayLiteral(t.cashtags),
  (t) => arrayLiteral(t.mentions),
  (t) => arrayLiteral(t.urls),
];
const mediaOf = (t: CanonicalTweet): unknown => t.media;
const sourceOf = (t: CanonicalTweet): string => t.source;
const rawOf = (t: CanonicalTweet): unknown => t.raw;

/**
 * Queues the statement on a pipelined transaction (it is answered with the batch). `tweets` are
 * sorted by id; job_tweets gets one row per (`jobIds[i]`, `pageTweetIds[i]`), sorted by job id,
 * then tweet id (mergeBatch makes all three).
 */
export function upsertTweets(
  tx: Pick<PipelinedTransaction, 'query'>,
  tweets: readonly CanonicalTweet[],
  jobIds: readonly string[],
  pageTweetIds: readonly string[],
  observedAt: Date,
): Promise<unknown> {
  if (tweets.length === 0) return Promise.resolve();
  const values: unknown[] = [
    ...plainColumns(tweets, COLUMNS),
    jsonText(tweets.map(mediaOf)),
    plainArray(tweets.map(sourceOf)),
    jsonText(tweets.map(rawOf)),
    observedAt.toISOString(),
    plainArrayOfRuns(jobIds),
    plainArray(pageTweetIds),
  ];
  return tx.query({ name: 'harvest_upsert_tweets', text: SQL, values });
}
