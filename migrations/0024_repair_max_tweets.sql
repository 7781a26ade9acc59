-- 0024: an `audit --repair` of a job its --max-tweets stopped gets another --max-tweets.
--
-- The stop compared the job's whole tweet count with --max-tweets, and a repaired walk belongs
-- to the same job: its count was already there, so each repair stopped after one page (with
-- --resume one page of progress a repair, without it none, each page paid). A repair of such a
-- job now records the tweets the job holds, and the stop counts only the tweets above that.
ALTER TABLE jobs ADD COLUMN max_tweets_base bigint NOT NULL DEFAULT 0;
COMMENT ON COLUMN jobs.max_tweets_base IS
  'Tweets the job held when an audit --repair last reopened it after its --max-tweets stopped it: the stop counts the tweets above this; 0 when never.';
