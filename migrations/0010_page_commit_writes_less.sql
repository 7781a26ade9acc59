-- 0010: a page commit writes less per row: job provenance without per-row foreign-key checks, and
-- known accounts seen again unchanged left as they are.
--
-- job_tweets.job_id and job_users.job_id referenced jobs (0002). Every inserted provenance row ran
-- the foreign-key check: one query per row that locks the job's row FOR KEY SHARE (~320 rows of a
-- 16-page group commit in bench/store.ts, ~1.3 ms of its Postgres time by EXPLAIN ANALYZE). A page
-- commit always locks the page's slice and updates the job's row in the same transaction, and a
-- batch whose slice is gone rolls back (harvest_expect_advanced, 0009), so the check guarded
-- nothing there. What the keys did buy, ON DELETE CASCADE, is kept by one statement-level trigger:
-- deleting jobs deletes their provenance rows in the same statement, as before.
ALTER TABLE job_tweets DROP CONSTRAINT job_tweets_job_id_fkey;
ALTER TABLE job_users DROP CONSTRAINT job_users_job_id_fkey;

CREATE FUNCTION harvest_delete_job_provenance() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM job_tweets WHERE job_id IN (SELECT id FROM gone);
  DELETE FROM job_users WHERE job_id IN (SELECT id FROM gone);
  RETURN NULL;
END
$$;
COMMENT ON FUNCTION harvest_delete_job_provenance() IS
  'Deletes the job_tweets and job_users rows of deleted jobs (what ON DELETE CASCADE did before 0010 dropped those foreign keys).';

CREATE TRIGGER jobs_delete_provenance AFTER DELETE ON jobs
  REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION harvest_delete_job_provenance();

COMMENT ON TABLE job_tweets IS 'Provenance: which job found which tweet (page items; quoted/retweeted tweets are reachable through tweets.quoted_tweet_id / retweeted_tweet_id). Rows go with their job (trigger jobs_delete_provenance).';
COMMENT ON TABLE job_users IS 'Provenance: which job found which account, and in what role. Rows go with their job (trigger jobs_delete_provenance).';

-- A known account seen again with nothing new is no longer rewritten (src/store/upsert-users.ts):
-- its last_seen_at moves only when it is more than an hour older than the sighting.
COMMENT ON COLUMN users.last_seen_at IS 'When the harvester last saw this account in any response, to within an hour: a sighting that changes nothing else moves it only when it is more than an hour old.';
