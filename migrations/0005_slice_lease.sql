-- 0005: fences each walk of a slice and counts its pages that bring nothing new.
-- A walk writes a fresh lease token when it starts; every page commit is guarded on it as well as
-- on the cursor, so a worker that lost its slice (a stalled takeover) can no longer commit, and a
-- worker that still holds the lease but finds an older cursor (commits lost to a Postgres crash)
-- knows to continue from the committed one. stale_pages ends walks that page on without new ids.
ALTER TABLE job_slices ADD COLUMN lease text;
ALTER TABLE job_slices ADD COLUMN stale_pages int NOT NULL DEFAULT 0;
COMMENT ON COLUMN job_slices.lease IS 'Token of the walk that holds the slice (written when a walk starts); page commits are guarded on it. Null before the first walk.';
COMMENT ON COLUMN job_slices.stale_pages IS 'Current run of consecutive committed pages that brought no item new to the job (reset by a page that did).';
