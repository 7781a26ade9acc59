-- 0018: a watch's job holds every tweet of its identity from its start on, whichever job read it.
--
-- Passes of one identity share a watermark: a one-shot `mentions @a` run while `mentions @a
-- --every 10m` is scheduled reads the new mentions, moves the watermark, and the schedule's next
-- pass starts above them. Those mentions were in the one-shot job's job_tweets only, so `harvest
-- export` of the schedule had a hole where the one-shot ran. Each complete pass now links into its
-- own job the identity's tweets between how far its job was linked and where the pass began
-- (src/store/watches.ts, linkIdentityTweets), with their authors, counted in jobs.tweets and users.
ALTER TABLE watches ADD COLUMN linked_to_id bigint;
COMMENT ON COLUMN watches.linked_to_id IS 'The job holds (in job_tweets) every tweet of its identity up to this id from its start on, its own or linked from the identity''s other jobs; null: from the first-pass floor.';
-- Existing watches start linking from their watermark: what the identity read below it is not
-- linked after the fact. (One whose identity has no watermark yet starts from its floor, as a new
-- watch does: its own first pass covers that range.)
UPDATE watches SET linked_to_id = high_watermark_id;
