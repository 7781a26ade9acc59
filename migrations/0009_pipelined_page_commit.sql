-- 0009: what a page commit sent as one pipelined batch needs from the server.
--
-- A group commit now sends BEGIN, the slice lock, the users and tweets upserts, the slice advance
-- and COMMIT in one socket write (src/store/commit-page.ts), so no statement can wait for the
-- lock's answer: the advance checks the guard itself. harvest_expect_advanced raises when fewer
-- slices advanced than pages were sent (a page whose slice moved on, was taken over or ended):
-- the whole transaction rolls back and the committer sends the pages the lock found fresh again.
-- SQLSTATE ZH001 ('Z' and 'H' are outside the classes Postgres and the SQL standard use) lets the
-- client tell it from every other failure by code, never by message text.
CREATE FUNCTION harvest_expect_advanced(expected int, advanced int) RETURNS boolean
  LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF advanced <> expected THEN
    RAISE EXCEPTION USING ERRCODE = 'ZH001', MESSAGE = format('%s of %s page slices advanced', advanced, expected);
  END IF;
  RETURN true;
END
$$;
COMMENT ON FUNCTION harvest_expect_advanced(int, int) IS
  'Raises SQLSTATE ZH001 unless every page of a pipelined group commit advanced its slice: the batch rolls back and is sent again without the stale pages.';
