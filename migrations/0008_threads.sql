-- 0008: the threads view: each stored tweet with the root of its reply chain, its depth below
-- that root and the path of ids from the root down to it (a recursive CTE over
-- tweets.in_reply_to_tweet_id, indexed by tweets_in_reply_to_idx).
--
-- A chain whose top tweet replies to a tweet we do not hold (deleted, protected, or not fetched
-- yet: `harvest conversations` fetches them) starts at its highest stored tweet; `root_complete`
-- says whether that root is a real conversation start (it replies to nothing). Ids only grow down
-- a chain (a reply is newer than its parent), so the walk cannot cycle; the path guard is for
-- hand-made rows.

CREATE VIEW threads AS
WITH RECURSIVE walk (tweet_id, root_id, depth, path, root_complete) AS (
  SELECT t.id, t.id, 0, ARRAY[t.id::text], t.in_reply_to_tweet_id IS NULL
  FROM tweets t
  WHERE t.in_reply_to_tweet_id IS NULL
     OR NOT EXISTS (SELECT 1 FROM tweets p WHERE p.id = t.in_reply_to_tweet_id)
  UNION ALL
  SELECT c.id, w.root_id, w.depth + 1, w.path || c.id::text, w.root_complete
  FROM walk w
  JOIN tweets c ON c.in_reply_to_tweet_id = w.tweet_id
  WHERE c.id::text <> ALL (w.path)
)
SELECT tweet_id, root_id, depth, path, root_complete FROM walk;

COMMENT ON VIEW threads IS 'Each stored tweet with the root of its reply chain, its depth and its path (ids as text, root first). Recursive over tweets.in_reply_to_tweet_id.';
COMMENT ON COLUMN threads.tweet_id IS 'The tweet.';
COMMENT ON COLUMN threads.root_id IS 'The highest stored tweet of its reply chain (the tweet itself for a root).';
COMMENT ON COLUMN threads.depth IS 'Replies between the root and the tweet: 0 for the root, 1 for a direct reply.';
COMMENT ON COLUMN threads.path IS 'Ids from the root down to the tweet, as text (exact 19-digit ids).';
COMMENT ON COLUMN threads.root_complete IS 'True when the root replies to nothing (the conversation''s start); false when its parent is missing.';
