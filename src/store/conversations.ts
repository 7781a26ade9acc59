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

/**
 * The roots whose replies the job walked to the end itself: a `comments` walk of the root and a
 * `conversation_id:` search of it (as a `replies` or `conversations` job plans them, unbounded),
 * each ended by the service (end_reason `end`). One pass over the job's slices, not one per root.
 * A walk resumed by `audit --repair --resume` that ended `end` counts: the stopped walk it went on
 * from read the pages before its cursor, in the same job.
 */
export async function rootsWalkedToEnd(db: Queryable, jobId: string): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT w.root AS id
       FROM (SELECT s.kind,
                    CASE WHEN s.kind = 'comments' AND s.params = jsonb_build_object('tweetId', s.params->>'tweetId')
                           THEN s.params->>'tweetId'
                         WHEN s.kind = 'search' AND s.params->>'query' ~ '^conversation_id:[0-9]+$'
                              AND s.params = jsonb_build_object('query', s.params->>'query', 'order', 'latest')
                           THEN substr(s.params->>'query', length('conversation_id:') + 1)
                    END AS root
               FROM job_slices s
              WHERE s.job_id = $1::bigint AND s.kind IN ('comments', 'search') AND s.status = 'done' AND s.end_reason = 'end') w
      WHERE w.root IS NOT NULL
      GROUP BY w.root
     HAVING count(DISTINCT w.kind) = 2`,
    [jobId],
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * The cursors of the other walks of `sliceId`'s kind in its job that stopped with one (a budget, a
 * cancel, a failure): a repair that starts such a walk again from its first page reads what they
 * already learnt from them (the conversation-parents walk: the ids not returned).
 */
export async function siblingWalkCursors(db: Queryable, sliceId: string): Promise<string[]> {
  const { rows } = await db.query<{ cursor: string }>(
    `SELECT o.cursor FROM job_slices s JOIN job_slices o ON o.job_id = s.job_id AND o.kind = s.kind AND o.id <> s.id
      WHERE s.id = $1::bigint AND o.cursor IS NOT NULL
      ORDER BY o.id`,
    [sliceId],
  );
  return rows.map((r) => r.cursor);
}
