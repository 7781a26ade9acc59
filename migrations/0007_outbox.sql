-- 0007: the notification outbox. Events (a watch pass that found tweets, a job completed, failed
-- or paused for quota, a key's quota crossing 20% and 10%, a job stalled) are written here in the
-- same transaction as the change that caused them, and a delivery loop in the worker POSTs them
-- to every HARVEST_NOTIFY_URL at least once, retrying with exponential backoff. Receivers
-- de-duplicate by event_id.
CREATE TABLE outbox (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
  type text NOT NULL,
  job_id bigint,
  dedupe_key text UNIQUE,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_created_idx ON outbox (created_at);
COMMENT ON TABLE outbox IS 'Notification events, written in the transaction that caused them; delivered to HARVEST_NOTIFY_URL by the worker (see outbox_deliveries). Kept 7 days.';
COMMENT ON COLUMN outbox.id IS 'Row id: delivery order.';
COMMENT ON COLUMN outbox.event_id IS 'The id receivers see (JSON "id"): the same on every retry, so a receiver can de-duplicate.';
COMMENT ON COLUMN outbox.type IS 'watch.new_tweets, job.completed, job.failed, job.paused_quota, job.stalled, quota.low, test.';
COMMENT ON COLUMN outbox.job_id IS 'The job the event is about (no foreign key: events outlive deleted jobs); null for key events.';
COMMENT ON COLUMN outbox.dedupe_key IS 'Makes an event once-only where its cause can be recorded twice (a roll-up re-run, a watch pass recorded again, one stall episode); null: no such guard.';
COMMENT ON COLUMN outbox.payload IS '{"text": Slack-compatible one-line summary, "data": the event''s fields}.';
COMMENT ON COLUMN outbox.created_at IS 'When the cause committed.';

CREATE TABLE outbox_deliveries (
  outbox_id bigint NOT NULL REFERENCES outbox (id) ON DELETE CASCADE,
  target text NOT NULL,
  attempts int NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz,
  last_error text,
  PRIMARY KEY (outbox_id, target)
);
COMMENT ON TABLE outbox_deliveries IS 'Delivery of one event to one webhook; a row appears when the worker first claims the event for that target.';
COMMENT ON COLUMN outbox_deliveries.outbox_id IS 'The event (outbox.id).';
COMMENT ON COLUMN outbox_deliveries.target IS 'The webhook by fingerprint (n_ + 12 hex of SHA-256 of its URL): webhook URLs carry secrets.';
COMMENT ON COLUMN outbox_deliveries.attempts IS 'POSTs tried so far.';
COMMENT ON COLUMN outbox_deliveries.next_attempt_at IS 'Not claimed again before this: the backoff after a failure, or the claim lease while a POST is in flight.';
COMMENT ON COLUMN outbox_deliveries.delivered_at IS 'When the webhook answered 2xx; null while pending.';
COMMENT ON COLUMN outbox_deliveries.last_error IS 'Why the last attempt failed (HTTP status or transport code), never the URL.';

CREATE TABLE key_quota_levels (
  fingerprint text PRIMARY KEY,
  valid_until timestamptz,
  peak_remaining bigint NOT NULL,
  remaining bigint NOT NULL,
  notified_level int NOT NULL DEFAULT 100,
  updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE key_quota_levels IS 'What the worker last learned of each key''s quota (a usage sync), so quota.low is sent once per crossing of 20% and 10%.';
COMMENT ON COLUMN key_quota_levels.fingerprint IS 'The key by fingerprint (k_ + 12 hex), never the key.';
COMMENT ON COLUMN key_quota_levels.valid_until IS 'End of the quota period the numbers belong to (the service''s valid_until); a new value starts a new period.';
COMMENT ON COLUMN key_quota_levels.peak_remaining IS 'The most the key had left in this period as seen by a sync: the 100% the levels are shares of.';
COMMENT ON COLUMN key_quota_levels.remaining IS 'Units left at the last sync.';
COMMENT ON COLUMN key_quota_levels.notified_level IS 'Lowest level already announced this period: 100 (none), 20 or 10; a refill re-arms it.';
COMMENT ON COLUMN key_quota_levels.updated_at IS 'When the last sync was recorded.';
