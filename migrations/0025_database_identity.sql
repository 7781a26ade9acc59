-- 0025: an identity for this database, so one HARVEST_REDIS_PREFIX serves one database.
--
-- Redis names hold job and slice ids (a job's budget `<prefix>:limiter:{ns}:budget:<jobId>`, the
-- queue entries `s-<sliceId>`, the schedulers `watch-<jobId>`), and ids start at 1 in every
-- database. Two databases on one prefix (both left at the default `harvest`) therefore spent one
-- budget between their two job 1s and ran each other's queue entries, silently. A process that
-- works the queue now writes this id to `<prefix>:database` (SET NX) and refuses a prefix that
-- holds another database's id (src/jobs/prefix-owner.ts): the mirror of worker_prefixes (0014).
--
-- The row is added by the first process that reads it (src/store/database-identity.ts), not here:
-- a database copied from a template (CREATE DATABASE … TEMPLATE, as the tests do) before any
-- process read it then gets its own id instead of sharing the template's.
CREATE TABLE database_identity (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  id uuid NOT NULL DEFAULT gen_random_uuid()
);
COMMENT ON TABLE database_identity IS 'This database''s one random id (one row): the value of `<prefix>:database` in Redis, which binds a HARVEST_REDIS_PREFIX to one database.';
COMMENT ON COLUMN database_identity.singleton IS 'Always true: at most one row.';
COMMENT ON COLUMN database_identity.id IS 'A random id, made when a process first read it.';
