-- 0019: a tweet held only as a v2 embedded copy (a quoted or retweeted tweet inside another) is
-- not a complete thread root. That copy carries no in_reply_to_tweet_id (v2 embeds only text,
-- counts and author), so it read as a conversation start with root_complete true even when it is a
-- reply. `harvest conversations` now fetches such a parent in full (src/store/conversations.ts).
CREATE OR REPLACE VIEW threads AS
WITH RECURSIVE walk (tweet_id, root_id, depth, path, root_complete) AS (
  SELECT t.id, t.id, 0, ARRAY[t.id::text], t.in_reply_to_tweet_id IS NULL AND t.source <> 'v2-embedded'
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

COMMENT ON COLUMN threads.root_complete IS 'True when the root replies to nothing (the conversation''s start); false when its parent is missing, or when the root is held only as a v2 embedded copy (which does not say what it replies to).';
