-- 0004: drops the foreign keys from tweet_metrics/user_metrics to tweets/users.
-- Every metrics row is written in the same statement as the row it observes (commitPage), and the
-- harvester never deletes tweets or users, so the keys guarded nothing in practice; each check
-- took a FOR KEY SHARE row lock on the tweet or user, which cost ~15% of a page commit in
-- bench/store.ts. Orphans, should anyone delete tweets by hand, are found with an anti-join.
ALTER TABLE tweet_metrics DROP CONSTRAINT tweet_metrics_tweet_id_fkey;
ALTER TABLE user_metrics DROP CONSTRAINT user_metrics_user_id_fkey;
