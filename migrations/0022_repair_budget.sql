-- 0022: the request budget each run of a job gets, kept apart from max_requests.
--
-- `audit --repair` gives a budgeted job "its own budget again" and sets max_requests to what the
-- job spent plus that budget. It read the budget back from max_requests, so each repair without
-- --max-requests gave twice the one before (12, 24, 48, 96 for a job asked with 12). The budget
-- the job was asked with is now kept in run_budget; a repair's --max-requests does not change it.
-- Jobs recorded before this migration take their max_requests as it is now: for a job repaired
-- before, that is already the doubled figure, which nothing can tell apart.
ALTER TABLE jobs ADD COLUMN run_budget bigint CHECK (run_budget IS NULL OR run_budget > 0);
UPDATE jobs SET run_budget = max_requests WHERE max_requests IS NOT NULL;
COMMENT ON COLUMN jobs.run_budget IS
  'Request budget the job was asked with (--max-requests at submit): what each audit --repair gives it again by default; null for none.';
