-- 0002: the record of work: jobs, their slices (resumable walks with a cursor), scheduled
-- watches, provenance (which job found which tweet/user), the request log and quarantined items.
-- Postgres is the record, Redis only the schedule: everything needed to resume lives here.

CREATE TABLE jobs (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind text NOT NULL,
  status text NOT NULL DEFAULT 'queued'
    CHECK (status IN ('queued', 'running', 'paused', 'paused_quota', 'scheduled', 'completed', 'failed', 'cancelled')),
  params jsonb NOT NULL DEFAULT '{}',
  priority text NOT NULL DEFAULT 'backfill' CHECK (priority IN ('watch', 'backfill')),
  max_requests bigint CHECK (max_requests IS NULL OR max_requests > 0),
  requests_spent bigint NOT NULL DEFAULT 0,
  pages bigint NOT NULL DEFAULT 0,
  tweets bigint NOT NULL DEFAULT 0,
  users bigint NOT NULL DEFAULT 0,
  note text,
  error_code text,
  error_message text,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_status_idx ON jobs (status);
COMMENT ON TABLE jobs IS 'One row per harvest command (search, mentions, user, list, community, replies, hydrate), with its state and roll-up counters.';
COMMENT ON COLUMN jobs.id IS 'Job id, printed by the command that created it.';
COMMENT ON COLUMN jobs.kind IS 'Job kind: search, mentions, user, list, community, replies, hydrate.';
COMMENT ON COLUMN jobs.status IS 'queued, running, paused, paused_quota, scheduled (a watch between passes), completed, failed or cancelled.';
COMMENT ON COLUMN jobs.params IS 'Validated job parameters (never an API key).';
COMMENT ON COLUMN jobs.priority IS 'watch (served first, may use the reserve) or backfill.';
COMMENT ON COLUMN jobs.max_requests IS 'Request budget (--max-requests); null for none.';
COMMENT ON COLUMN jobs.requests_spent IS 'Requests sent for this job so far (sum over its slices and other calls).';
COMMENT ON COLUMN jobs.pages IS 'Pages committed so far.';
COMMENT ON COLUMN jobs.tweets IS 'Distinct tweets this job found (rows in job_tweets).';
COMMENT ON COLUMN jobs.users IS 'Distinct users this job found (distinct user_id in job_users).';
COMMENT ON COLUMN jobs.note IS 'Human-readable remark on the last state change (why it paused, what it skipped).';
COMMENT ON COLUMN jobs.error_code IS 'AppError code of the failure, when failed.';
COMMENT ON COLUMN jobs.error_message IS 'One-line reason of the failure, when failed.';
COMMENT ON COLUMN jobs.created_at IS 'When the job was created.';
COMMENT ON COLUMN jobs.started_at IS 'When a worker first ran it.';
COMMENT ON COLUMN jobs.finished_at IS 'When it reached completed, failed or cancelled.';
COMMENT ON COLUMN jobs.updated_at IS 'Last change to the row.';

CREATE TABLE job_slices (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  parent_id bigint REFERENCES job_slices (id) ON DELETE CASCADE,
  kind text NOT NULL,
  params jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'running', 'done', 'failed', 'split', 'cancelled')),
  cursor text,
  recent_cursors text[] NOT NULL DEFAULT '{}',
  pages bigint NOT NULL DEFAULT 0,
  items bigint NOT NULL DEFAULT 0,
  new_items bigint NOT NULL DEFAULT 0,
  requests bigint NOT NULL DEFAULT 0,
  empty_pages int NOT NULL DEFAULT 0,
  newest_tweet_id bigint,
  oldest_tweet_id bigint,
  error_code text,
  error_message text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX job_slices_job_status_idx ON job_slices (job_id, status);
CREATE INDEX job_slices_parent_idx ON job_slices (parent_id) WHERE parent_id IS NOT NULL;
COMMENT ON TABLE job_slices IS 'A job''s units of work: one paged walk each (a search window, a list''s members...), resumable from its cursor.';
COMMENT ON COLUMN job_slices.id IS 'Slice id.';
COMMENT ON COLUMN job_slices.job_id IS 'The job this slice belongs to.';
COMMENT ON COLUMN job_slices.parent_id IS 'The slice this one was split from, if any.';
COMMENT ON COLUMN job_slices.kind IS 'What the slice walks (job-kind specific, e.g. search-window, list-members).';
COMMENT ON COLUMN job_slices.params IS 'Slice parameters (e.g. the since/until window).';
COMMENT ON COLUMN job_slices.status IS 'pending, running, done, failed, split (replaced by children) or cancelled.';
COMMENT ON COLUMN job_slices.cursor IS 'Cursor of the next page to fetch; null before the first page. Commits are guarded on it.';
COMMENT ON COLUMN job_slices.recent_cursors IS 'Hashes of the last 50 cursors of the walk, to detect a repeating cursor.';
COMMENT ON COLUMN job_slices.pages IS 'Pages committed.';
COMMENT ON COLUMN job_slices.items IS 'Items (tweets and users) received on its pages.';
COMMENT ON COLUMN job_slices.new_items IS 'Items new to the job (provenance rows inserted).';
COMMENT ON COLUMN job_slices.requests IS 'Requests committed with its pages.';
COMMENT ON COLUMN job_slices.empty_pages IS 'Current run of consecutive empty pages (reset by a non-empty one).';
COMMENT ON COLUMN job_slices.newest_tweet_id IS 'Highest tweet id seen on its pages.';
COMMENT ON COLUMN job_slices.oldest_tweet_id IS 'Lowest tweet id seen on its pages.';
COMMENT ON COLUMN job_slices.error_code IS 'AppError code, when failed.';
COMMENT ON COLUMN job_slices.error_message IS 'One-line reason, when failed.';
COMMENT ON COLUMN job_slices.created_at IS 'When the slice was created.';
COMMENT ON COLUMN job_slices.updated_at IS 'Last change to the row.';
COMMENT ON COLUMN job_slices.finished_at IS 'When the slice reached done, failed, split or cancelled.';

CREATE TABLE watches (
  job_id bigint PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
  handle text NOT NULL,
  params jsonb NOT NULL DEFAULT '{}',
  every_seconds int CHECK (every_seconds IS NULL OR every_seconds > 0),
  high_watermark_id bigint,
  passes int NOT NULL DEFAULT 0,
  next_due_at timestamptz,
  last_pass_started_at timestamptz,
  last_pass_finished_at timestamptz,
  last_pass_new int,
  enabled boolean NOT NULL DEFAULT true
);
CREATE INDEX watches_due_idx ON watches (next_due_at) WHERE enabled;
COMMENT ON TABLE watches IS 'Mention watches: a job that re-reads a handle''s mentions every so often, fetching only what is newer than its watermark.';
COMMENT ON COLUMN watches.job_id IS 'The watch''s job.';
COMMENT ON COLUMN watches.handle IS 'Handle watched, without @.';
COMMENT ON COLUMN watches.params IS 'Filters (min likes/retweets/replies).';
COMMENT ON COLUMN watches.every_seconds IS 'Interval between passes; null for a single pass.';
COMMENT ON COLUMN watches.high_watermark_id IS 'Highest tweet id seen by a finished pass; the next pass stops there.';
COMMENT ON COLUMN watches.passes IS 'Passes finished.';
COMMENT ON COLUMN watches.next_due_at IS 'When the next pass is due.';
COMMENT ON COLUMN watches.last_pass_started_at IS 'When the last pass started.';
COMMENT ON COLUMN watches.last_pass_finished_at IS 'When the last pass finished.';
COMMENT ON COLUMN watches.last_pass_new IS 'Tweets new to the watch in the last pass.';
COMMENT ON COLUMN watches.enabled IS 'False when paused or cancelled.';

CREATE TABLE job_tweets (
  job_id bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  tweet_id bigint NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, tweet_id)
);
CREATE INDEX job_tweets_tweet_idx ON job_tweets (tweet_id);
COMMENT ON TABLE job_tweets IS 'Provenance: which job found which tweet (page items; quoted/retweeted tweets are reachable through tweets.quoted_tweet_id / retweeted_tweet_id).';
COMMENT ON COLUMN job_tweets.job_id IS 'The job.';
COMMENT ON COLUMN job_tweets.tweet_id IS 'The tweet (tweets.id).';
COMMENT ON COLUMN job_tweets.first_seen_at IS 'When this job first found it.';

CREATE TABLE job_users (
  job_id bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  user_id bigint NOT NULL,
  role text NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, user_id, role)
);
CREATE INDEX job_users_user_idx ON job_users (user_id);
COMMENT ON TABLE job_users IS 'Provenance: which job found which account, and in what role.';
COMMENT ON COLUMN job_users.job_id IS 'The job.';
COMMENT ON COLUMN job_users.user_id IS 'The account (users.id).';
COMMENT ON COLUMN job_users.role IS 'How the job met it: author (of a page tweet), member, follower, profile...';
COMMENT ON COLUMN job_users.first_seen_at IS 'When this job first found it in this role.';

CREATE TABLE api_requests (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL,
  endpoint text NOT NULL,
  key_fingerprint text NOT NULL,
  status int NOT NULL,
  duration_ms int NOT NULL,
  job_id bigint REFERENCES jobs (id) ON DELETE SET NULL,
  slice_id bigint REFERENCES job_slices (id) ON DELETE SET NULL
);
-- A page replayed with the very same request log must not count its requests twice.
CREATE UNIQUE INDEX api_requests_dedupe_idx ON api_requests (at, key_fingerprint, endpoint, slice_id) NULLS NOT DISTINCT;
CREATE INDEX api_requests_job_idx ON api_requests (job_id, at);
COMMENT ON TABLE api_requests IS 'Every request sent to the service (each costs one quota unit), by key fingerprint, never by key.';
COMMENT ON COLUMN api_requests.id IS 'Row id.';
COMMENT ON COLUMN api_requests.at IS 'When the request was sent.';
COMMENT ON COLUMN api_requests.endpoint IS 'Path called, e.g. /v3/search-tweets.';
COMMENT ON COLUMN api_requests.key_fingerprint IS 'Fingerprint of the key used (the key itself is never stored).';
COMMENT ON COLUMN api_requests.status IS 'HTTP status; 0 when no response arrived.';
COMMENT ON COLUMN api_requests.duration_ms IS 'Time to the full response, in milliseconds.';
COMMENT ON COLUMN api_requests.job_id IS 'Job the request was made for, if any.';
COMMENT ON COLUMN api_requests.slice_id IS 'Slice the request was made for, if any.';

CREATE TABLE quarantine (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  job_id bigint REFERENCES jobs (id) ON DELETE CASCADE,
  slice_id bigint REFERENCES job_slices (id) ON DELETE CASCADE,
  endpoint text NOT NULL,
  reason text NOT NULL,
  payload jsonb,
  payload_hash text GENERATED ALWAYS AS (md5(coalesce(payload::text, ''))) STORED
);
-- Replaying a page must not quarantine the same item twice.
CREATE UNIQUE INDEX quarantine_dedupe_idx ON quarantine (slice_id, endpoint, payload_hash) NULLS NOT DISTINCT;
CREATE INDEX quarantine_job_idx ON quarantine (job_id);
COMMENT ON TABLE quarantine IS 'Items the client could not normalise (kept for inspection instead of failing the page).';
COMMENT ON COLUMN quarantine.id IS 'Row id.';
COMMENT ON COLUMN quarantine.at IS 'When it was quarantined.';
COMMENT ON COLUMN quarantine.job_id IS 'Job whose page carried it.';
COMMENT ON COLUMN quarantine.slice_id IS 'Slice whose page carried it.';
COMMENT ON COLUMN quarantine.endpoint IS 'Endpoint that answered it.';
COMMENT ON COLUMN quarantine.reason IS 'Why it was rejected (validation issue).';
COMMENT ON COLUMN quarantine.payload IS 'The item exactly as received.';
COMMENT ON COLUMN quarantine.payload_hash IS 'md5 of the payload, to keep a replayed page from quarantining an item twice.';
