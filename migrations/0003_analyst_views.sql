-- 0003: views for analysts, so the common questions need no joins: tweets with their authors,
-- a job's tweets, daily volume per job, top authors per job, mentions of a handle per day,
-- hashtag use per day and the latest engagement of each tweet.

CREATE VIEW tweets_with_authors AS
SELECT t.id, t.created_at, t.full_text, t.lang,
       t.author_id, u.username AS author_username, u.display_name AS author_display_name,
       u.followers_count AS author_followers_count, u.verified AS author_verified,
       t.conversation_id, t.in_reply_to_tweet_id, t.quoted_tweet_id, t.retweeted_tweet_id,
       t.like_count, t.retweet_count, t.reply_count, t.quote_count, t.view_count,
       t.hashtags, t.cashtags, t.mentions, t.urls
FROM tweets t
LEFT JOIN users u ON u.id = t.author_id;
COMMENT ON VIEW tweets_with_authors IS 'Every tweet with its author''s handle, name and audience.';
COMMENT ON COLUMN tweets_with_authors.id IS 'Tweet id.';
COMMENT ON COLUMN tweets_with_authors.created_at IS 'When the tweet was posted (UTC).';
COMMENT ON COLUMN tweets_with_authors.full_text IS 'Full text.';
COMMENT ON COLUMN tweets_with_authors.lang IS 'Language code.';
COMMENT ON COLUMN tweets_with_authors.author_id IS 'Author account id.';
COMMENT ON COLUMN tweets_with_authors.author_username IS 'Author handle as last seen.';
COMMENT ON COLUMN tweets_with_authors.author_display_name IS 'Author display name as last seen.';
COMMENT ON COLUMN tweets_with_authors.author_followers_count IS 'Author followers as last seen.';
COMMENT ON COLUMN tweets_with_authors.author_verified IS 'Author verified flag.';
COMMENT ON COLUMN tweets_with_authors.conversation_id IS 'Conversation root tweet id.';
COMMENT ON COLUMN tweets_with_authors.in_reply_to_tweet_id IS 'Tweet replied to.';
COMMENT ON COLUMN tweets_with_authors.quoted_tweet_id IS 'Tweet quoted.';
COMMENT ON COLUMN tweets_with_authors.retweeted_tweet_id IS 'Tweet retweeted.';
COMMENT ON COLUMN tweets_with_authors.like_count IS 'Likes at the last observation.';
COMMENT ON COLUMN tweets_with_authors.retweet_count IS 'Retweets at the last observation.';
COMMENT ON COLUMN tweets_with_authors.reply_count IS 'Replies at the last observation.';
COMMENT ON COLUMN tweets_with_authors.quote_count IS 'Quotes at the last observation.';
COMMENT ON COLUMN tweets_with_authors.view_count IS 'Views at the last observation.';
COMMENT ON COLUMN tweets_with_authors.hashtags IS 'Hashtags without #.';
COMMENT ON COLUMN tweets_with_authors.cashtags IS 'Cashtags without $.';
COMMENT ON COLUMN tweets_with_authors.mentions IS 'Mentioned handles, lower-cased.';
COMMENT ON COLUMN tweets_with_authors.urls IS 'Links.';

CREATE VIEW job_tweets_with_authors AS
SELECT jt.job_id, jt.first_seen_at AS found_at, twa.*
FROM job_tweets jt
JOIN tweets_with_authors twa ON twa.id = jt.tweet_id;
COMMENT ON VIEW job_tweets_with_authors IS 'The tweets each job found, with their authors: filter on job_id.';
COMMENT ON COLUMN job_tweets_with_authors.job_id IS 'The job that found the tweet.';
COMMENT ON COLUMN job_tweets_with_authors.found_at IS 'When the job first found it.';
COMMENT ON COLUMN job_tweets_with_authors.id IS 'Tweet id.';
COMMENT ON COLUMN job_tweets_with_authors.created_at IS 'When the tweet was posted (UTC).';
COMMENT ON COLUMN job_tweets_with_authors.full_text IS 'Full text.';
COMMENT ON COLUMN job_tweets_with_authors.lang IS 'Language code.';
COMMENT ON COLUMN job_tweets_with_authors.author_id IS 'Author account id.';
COMMENT ON COLUMN job_tweets_with_authors.author_username IS 'Author handle as last seen.';
COMMENT ON COLUMN job_tweets_with_authors.author_display_name IS 'Author display name as last seen.';
COMMENT ON COLUMN job_tweets_with_authors.author_followers_count IS 'Author followers as last seen.';
COMMENT ON COLUMN job_tweets_with_authors.author_verified IS 'Author verified flag.';
COMMENT ON COLUMN job_tweets_with_authors.conversation_id IS 'Conversation root tweet id.';
COMMENT ON COLUMN job_tweets_with_authors.in_reply_to_tweet_id IS 'Tweet replied to.';
COMMENT ON COLUMN job_tweets_with_authors.quoted_tweet_id IS 'Tweet quoted.';
COMMENT ON COLUMN job_tweets_with_authors.retweeted_tweet_id IS 'Tweet retweeted.';
COMMENT ON COLUMN job_tweets_with_authors.like_count IS 'Likes at the last observation.';
COMMENT ON COLUMN job_tweets_with_authors.retweet_count IS 'Retweets at the last observation.';
COMMENT ON COLUMN job_tweets_with_authors.reply_count IS 'Replies at the last observation.';
COMMENT ON COLUMN job_tweets_with_authors.quote_count IS 'Quotes at the last observation.';
COMMENT ON COLUMN job_tweets_with_authors.view_count IS 'Views at the last observation.';
COMMENT ON COLUMN job_tweets_with_authors.hashtags IS 'Hashtags without #.';
COMMENT ON COLUMN job_tweets_with_authors.cashtags IS 'Cashtags without $.';
COMMENT ON COLUMN job_tweets_with_authors.mentions IS 'Mentioned handles, lower-cased.';
COMMENT ON COLUMN job_tweets_with_authors.urls IS 'Links.';

CREATE VIEW job_daily_volume AS
SELECT jt.job_id, date_trunc('day', t.created_at, 'UTC') AS day,
       count(*) AS tweets, count(DISTINCT t.author_id) AS authors,
       coalesce(sum(t.like_count), 0) AS likes, coalesce(sum(t.retweet_count), 0) AS retweets
FROM job_tweets jt
JOIN tweets t ON t.id = jt.tweet_id
GROUP BY jt.job_id, date_trunc('day', t.created_at, 'UTC');
COMMENT ON VIEW job_daily_volume IS 'Tweets a job found, per UTC day of posting.';
COMMENT ON COLUMN job_daily_volume.job_id IS 'The job.';
COMMENT ON COLUMN job_daily_volume.day IS 'UTC day the tweets were posted.';
COMMENT ON COLUMN job_daily_volume.tweets IS 'Tweets posted that day.';
COMMENT ON COLUMN job_daily_volume.authors IS 'Distinct authors of those tweets.';
COMMENT ON COLUMN job_daily_volume.likes IS 'Sum of their likes (last observation).';
COMMENT ON COLUMN job_daily_volume.retweets IS 'Sum of their retweets (last observation).';

CREATE VIEW job_top_authors AS
SELECT jt.job_id, t.author_id, u.username, u.display_name, u.followers_count,
       count(*) AS tweets, coalesce(sum(t.like_count), 0) AS likes,
       min(t.created_at) AS first_tweet_at, max(t.created_at) AS last_tweet_at
FROM job_tweets jt
JOIN tweets t ON t.id = jt.tweet_id
LEFT JOIN users u ON u.id = t.author_id
GROUP BY jt.job_id, t.author_id, u.username, u.display_name, u.followers_count;
COMMENT ON VIEW job_top_authors IS 'Authors of the tweets a job found, with their tweet counts: order by tweets or likes.';
COMMENT ON COLUMN job_top_authors.job_id IS 'The job.';
COMMENT ON COLUMN job_top_authors.author_id IS 'Author account id.';
COMMENT ON COLUMN job_top_authors.username IS 'Author handle as last seen.';
COMMENT ON COLUMN job_top_authors.display_name IS 'Author display name as last seen.';
COMMENT ON COLUMN job_top_authors.followers_count IS 'Author followers as last seen.';
COMMENT ON COLUMN job_top_authors.tweets IS 'Tweets of this author the job found.';
COMMENT ON COLUMN job_top_authors.likes IS 'Sum of their likes.';
COMMENT ON COLUMN job_top_authors.first_tweet_at IS 'Earliest of those tweets.';
COMMENT ON COLUMN job_top_authors.last_tweet_at IS 'Latest of those tweets.';

CREATE VIEW handle_mentions_daily AS
SELECT m.handle, date_trunc('day', t.created_at, 'UTC') AS day,
       count(*) AS tweets, count(DISTINCT t.author_id) AS authors,
       coalesce(sum(t.like_count), 0) AS likes
FROM tweets t
CROSS JOIN LATERAL unnest(t.mentions) AS m(handle)
GROUP BY m.handle, date_trunc('day', t.created_at, 'UTC');
COMMENT ON VIEW handle_mentions_daily IS 'Mentions of each handle per UTC day, over every stored tweet: filter on handle (lower-case, no @).';
COMMENT ON COLUMN handle_mentions_daily.handle IS 'Mentioned handle, lower-cased, without @.';
COMMENT ON COLUMN handle_mentions_daily.day IS 'UTC day the mentioning tweets were posted.';
COMMENT ON COLUMN handle_mentions_daily.tweets IS 'Tweets mentioning the handle that day.';
COMMENT ON COLUMN handle_mentions_daily.authors IS 'Distinct accounts mentioning it that day.';
COMMENT ON COLUMN handle_mentions_daily.likes IS 'Sum of the likes of those tweets.';

CREATE VIEW hashtags_daily AS
SELECT h.hashtag, date_trunc('day', t.created_at, 'UTC') AS day,
       count(*) AS tweets, count(DISTINCT t.author_id) AS authors
FROM tweets t
CROSS JOIN LATERAL unnest(t.hashtags) AS h(hashtag)
GROUP BY h.hashtag, date_trunc('day', t.created_at, 'UTC');
COMMENT ON VIEW hashtags_daily IS 'Use of each hashtag per UTC day, over every stored tweet.';
COMMENT ON COLUMN hashtags_daily.hashtag IS 'Hashtag without #, as written.';
COMMENT ON COLUMN hashtags_daily.day IS 'UTC day of posting.';
COMMENT ON COLUMN hashtags_daily.tweets IS 'Tweets carrying it that day.';
COMMENT ON COLUMN hashtags_daily.authors IS 'Distinct authors using it that day.';

CREATE VIEW job_summary AS
SELECT j.id AS job_id, j.kind, j.status, j.pages, j.tweets, j.users, j.requests_spent, j.max_requests,
       count(s.id) AS slices,
       count(s.id) FILTER (WHERE s.status IN ('done', 'split')) AS slices_done,
       count(s.id) FILTER (WHERE s.status = 'failed') AS slices_failed,
       j.created_at, j.finished_at
FROM jobs j
LEFT JOIN job_slices s ON s.job_id = j.id
GROUP BY j.id;
COMMENT ON VIEW job_summary IS 'Each job with its counters and the progress of its slices.';
COMMENT ON COLUMN job_summary.job_id IS 'The job.';
COMMENT ON COLUMN job_summary.kind IS 'Job kind.';
COMMENT ON COLUMN job_summary.status IS 'Job status.';
COMMENT ON COLUMN job_summary.pages IS 'Pages committed.';
COMMENT ON COLUMN job_summary.tweets IS 'Distinct tweets found.';
COMMENT ON COLUMN job_summary.users IS 'Distinct users found.';
COMMENT ON COLUMN job_summary.requests_spent IS 'Requests spent.';
COMMENT ON COLUMN job_summary.max_requests IS 'Request budget, if any.';
COMMENT ON COLUMN job_summary.slices IS 'Slices in all.';
COMMENT ON COLUMN job_summary.slices_done IS 'Slices done or split.';
COMMENT ON COLUMN job_summary.slices_failed IS 'Slices failed.';
COMMENT ON COLUMN job_summary.created_at IS 'When the job was created.';
COMMENT ON COLUMN job_summary.finished_at IS 'When the job finished.';
