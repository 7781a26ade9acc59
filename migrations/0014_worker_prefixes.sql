-- 0014: one HARVEST_REDIS_PREFIX per database.
--
-- Postgres is the record and Redis the schedule: every worker's reconcile queues each runnable
-- slice of the database on its own prefix's queues, and each prefix's limiter grants a job its
-- whole remaining budget. Workers of two prefixes on one database therefore walked every slice
-- twice (taking it from each other every 30 s, a page or two wasted each time) and could spend a
-- --max-requests budget twice. A worker now records its prefix here at start and every minute,
-- and does not start while another prefix's workers were seen in the last 3 minutes
-- (src/store/worker-prefixes.ts).
CREATE TABLE worker_prefixes (
  redis_prefix text PRIMARY KEY,
  last_seen_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE worker_prefixes IS 'The HARVEST_REDIS_PREFIX of the workers on this database, and when one was last seen (one prefix at a time).';
COMMENT ON COLUMN worker_prefixes.redis_prefix IS 'A worker''s HARVEST_REDIS_PREFIX.';
COMMENT ON COLUMN worker_prefixes.last_seen_at IS 'When a worker of that prefix last started or said it runs (every minute).';
