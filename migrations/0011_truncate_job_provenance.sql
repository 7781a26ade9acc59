-- 0011: truncating jobs truncates their provenance too.
--
-- 0010 dropped the foreign keys job_tweets.job_id and job_users.job_id → jobs and kept their
-- ON DELETE CASCADE as a statement-level AFTER DELETE trigger. TRUNCATE fires no DELETE trigger,
-- and `TRUNCATE jobs CASCADE` follows foreign keys only, so it no longer reached those two tables:
-- every provenance row stayed behind as an orphan. After `TRUNCATE jobs RESTART IDENTITY CASCADE`
-- a new job takes an old id and inherits its rows: what it finds is not counted as new to it
-- (commit-page.ts counts only rows its own transaction inserted). An AFTER TRUNCATE statement
-- trigger on jobs truncates both in the same transaction: once jobs is truncated no job is left,
-- so every provenance row is an orphan, and TRUNCATE is the whole answer and the cheap one. It
-- also fires when jobs is truncated as the CASCADE of another table's TRUNCATE.
CREATE FUNCTION harvest_truncate_job_provenance() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE job_tweets, job_users;
  RETURN NULL;
END
$$;
COMMENT ON FUNCTION harvest_truncate_job_provenance() IS
  'Truncates job_tweets and job_users when jobs is truncated (what TRUNCATE jobs CASCADE did through the foreign keys 0010 dropped).';

CREATE TRIGGER jobs_truncate_provenance AFTER TRUNCATE ON jobs
  FOR EACH STATEMENT EXECUTE FUNCTION harvest_truncate_job_provenance();

COMMENT ON TABLE job_tweets IS 'Provenance: which job found which tweet (page items; quoted/retweeted tweets are reachable through tweets.quoted_tweet_id / retweeted_tweet_id). Rows go with their job (triggers jobs_delete_provenance and jobs_truncate_provenance).';
COMMENT ON TABLE job_users IS 'Provenance: which job found which account, and in what role. Rows go with their job (triggers jobs_delete_provenance and jobs_truncate_provenance).';
