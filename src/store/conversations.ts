/**
 * Conversations: what `harvest conversations <job>` still has to fetch to complete the threads of
 * a job's tweets, read from Postgres. The parents walk asks `missingParents` before each page, so
 * the level it fetches next is planned from what the previous pages committed.
 */
import type { Queryable } from './db.ts';

/**
 * Parents missing up the reply chains of the job's tweets: walking up through the parents we hold,
 * the first `in_reply_to_tweet_id` of each chain that no row of `tweets` has in full, minus
 * `exclude` (ids already asked for and not returned: deleted or protected). A parent held only as
 * a v2 embedded copy (quoted or retweeted inside another tweet) counts as missing: the copy does
 * not say what it replies to, so the chain would end there as if it were the conversation's start.
 * Ascending, at most `limit`.
 */
export async function missingParents(db: Queryable, sourceJobId: string, exclude: readonly string[], limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `WITH RECURSIVE up (id, parent) AS (
       SELECT t.id, t.in_reply_to_tweet_id
         FROM job_tweets jt JOIN tweets t ON t.id = jt.tweet_id
        WHERE jt.job_id = $1::bigint
       UNION
       SELECT p.id, p.in_reply_to_tweet_id FROM up JOIN tweets p ON p.id = up.parent
     )
     SELECT DISTINCT up.parent::text AS id, up.parent
       FROM up
      WHERE up.parent IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM tweets t WHERE t.id = up.parent AND t.source <> 'v2-embedded')
        AND up.parent <> ALL ($2::bigint[])
      ORDER BY up.parent
      LIMIT $3::int`,
    [sourceJobId, exclude, limit],
  );
  return rows.map((r) => r.id);
}

/** The stored reply_count of each of `ids` that is stored (counts from the tweets' last observation). */
export async function rootReplyCounts(db: Queryable, ids: readonly string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; n: string }>(
    'SELECT id::text, coalesce(reply_count, 0)::text AS n FROM tweets WHERE id = ANY($1::bigint[])',
    [ids],
  );
  return new Map(rows.map((r) => [r.id, Number(r.n)]));
}

/**
 * The roots whose replies complete the job's threads: the conversation of every tweet of the job
 * that is a reply or has replies (a lone tweet with none has no thread to complete). Ascending.
 */
export async function conversationRoots(db: Queryable, sourceJobId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT DISTINCT t.conversation_id::text AS id, t.conversation_id
       FROM job_tweets jt JOIN tweets t ON t.id = jt.tweet_id
      WHERE jt.job_id = $1::bigint
        AND t.conversation_id IS NOT NULL
        AND (t.in_reply_to_tweet_id IS NOT NULL OR t.conversation_id <> t.id OR coalesce(t.reply_count, 0) > 0)
      ORDER BY t.conversation_id`,
    [sourceJobId],
  );
  return rows.map((r) => r.id);
}
