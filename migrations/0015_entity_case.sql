-- 0015: say how hashtags and cashtags are stored (the comments said "as written").
--
-- The harvester has always stored hashtags lower-cased and cashtags upper-cased (text-entities.ts),
-- so `#Bitcoin` and `#bitcoin` are one tag and `$btc` is `BTC`; a query written from the old
-- comments ('Bitcoin' = ANY(hashtags), 'btc' = ANY(cashtags)) matched nothing.
COMMENT ON COLUMN tweets.hashtags IS 'Hashtags in the text, without #, lower-cased (#Bitcoin is bitcoin; GIN-indexed: use = ANY or @>).';
COMMENT ON COLUMN tweets.cashtags IS 'Cashtags in the text, without $, upper-cased ($btc is BTC; GIN-indexed).';
COMMENT ON COLUMN hashtags_daily.hashtag IS 'Hashtag without #, lower-cased.';
