-- 0001: the harvested entities: tweets, users, their engagement history, the edges between them
-- (list members/followers, community members, follows) and audio spaces.
--
-- Ids of tweets, users, lists and communities are bigint: exact for 19-digit ids, half the size of
-- text, and they sort by time. They cross into JavaScript only as text.
--
-- Hashtags, cashtags, mentions and urls are text[] columns with GIN indexes rather than side
-- tables: analysts write `'btc' = ANY(cashtags)` or `mentions @> '{jack}'` without a join, a page
-- of 20 tweets writes one row per tweet instead of ~5, and GIN answers containment queries. The
-- cost is that per-entity statistics need `unnest`, which the views below do once.

CREATE TABLE users (
  id bigint PRIMARY KEY,
  username text,
  display_name text,
  description text,
  location text,
  created_at timestamptz,
  protected boolean,
  verified boolean,
  can_dm boolean,
  possibly_sensitive boolean,
  followers_count bigint,
  followings_count bigint,
  tweets_count bigint,
  favourites_count bigint,
  media_count bigint,
  profile_image_url text,
  profile_background_image_url text,
  banner_url text,
  bio_urls text[] NOT NULL DEFAULT '{}',
  pinned_tweet_ids bigint[] NOT NULL DEFAULT '{}',
  source text NOT NULL,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX users_username_idx ON users (lower(username));

COMMENT ON TABLE users IS 'One row per account ever seen, with its latest known profile. Reduced records (community members, follower lists) fill gaps but never erase richer columns.';
COMMENT ON COLUMN users.id IS 'Account id (exact 64-bit).';
COMMENT ON COLUMN users.username IS 'Handle without @, as last seen (handles can change; lower(username) is indexed).';
COMMENT ON COLUMN users.display_name IS 'Display name as last seen.';
COMMENT ON COLUMN users.description IS 'Profile bio as last seen.';
COMMENT ON COLUMN users.location IS 'Free-text profile location as last seen.';
COMMENT ON COLUMN users.created_at IS 'When the account was registered (UTC).';
COMMENT ON COLUMN users.protected IS 'Whether the account is protected (its tweets are not public).';
COMMENT ON COLUMN users.verified IS 'Verified flag as the service reports it.';
COMMENT ON COLUMN users.can_dm IS 'Whether the account accepts direct messages.';
COMMENT ON COLUMN users.possibly_sensitive IS 'Whether the profile is flagged as possibly sensitive.';
COMMENT ON COLUMN users.followers_count IS 'Followers at the last observation; history in user_metrics.';
COMMENT ON COLUMN users.followings_count IS 'Accounts followed at the last observation.';
COMMENT ON COLUMN users.tweets_count IS 'Tweets posted at the last observation.';
COMMENT ON COLUMN users.favourites_count IS 'Likes given at the last observation.';
COMMENT ON COLUMN users.media_count IS 'Media posted at the last observation.';
COMMENT ON COLUMN users.profile_image_url IS 'Avatar URL.';
COMMENT ON COLUMN users.profile_background_image_url IS 'Profile background image URL.';
COMMENT ON COLUMN users.banner_url IS 'Profile banner URL.';
COMMENT ON COLUMN users.bio_urls IS 'Links in the profile bio.';
COMMENT ON COLUMN users.pinned_tweet_ids IS 'Ids of the pinned tweets.';
COMMENT ON COLUMN users.source IS 'Wire shape of the richest record stored in raw: v3, v2-embedded, v2-new-follower, v2-basic or v3-reduced.';
COMMENT ON COLUMN users.raw IS 'The richest record seen, exactly as the service sent it (unknown fields included).';
COMMENT ON COLUMN users.first_seen_at IS 'When the harvester first stored this account.';
COMMENT ON COLUMN users.last_seen_at IS 'When the harvester last saw this account in any response.';

-- Ranks wire shapes by richness so a reduced record never replaces a fuller raw document.
CREATE FUNCTION harvest_user_source_rank(source text) RETURNS int
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE source WHEN 'v3' THEN 3 WHEN 'v2-embedded' THEN 2 WHEN 'v2-new-follower' THEN 2 ELSE 1 END;
COMMENT ON FUNCTION harvest_user_source_rank(text) IS 'Richness of a user wire shape: v3 > v2-embedded/v2-new-follower > v2-basic/v3-reduced.';

CREATE TABLE tweets (
  id bigint PRIMARY KEY,
  author_id bigint,
  full_text text NOT NULL,
  created_at timestamptz NOT NULL,
  lang text,
  conversation_id bigint,
  in_reply_to_tweet_id bigint,
  in_reply_to_username text,
  quoted_tweet_id bigint,
  retweeted_tweet_id bigint,
  is_reply boolean NOT NULL DEFAULT false,
  is_quote_status boolean NOT NULL DEFAULT false,
  is_replies_limited boolean,
  like_count bigint,
  retweet_count bigint,
  reply_count bigint,
  quote_count bigint,
  bookmark_count bigint,
  view_count bigint,
  hashtags text[] NOT NULL DEFAULT '{}',
  cashtags text[] NOT NULL DEFAULT '{}',
  mentions text[] NOT NULL DEFAULT '{}',
  urls text[] NOT NULL DEFAULT '{}',
  media jsonb NOT NULL DEFAULT '[]',
  source text NOT NULL,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tweets_author_created_idx ON tweets (author_id, created_at DESC);
CREATE INDEX tweets_created_idx ON tweets (created_at);
CREATE INDEX tweets_conversation_idx ON tweets (conversation_id);
CREATE INDEX tweets_in_reply_to_idx ON tweets (in_reply_to_tweet_id) WHERE in_reply_to_tweet_id IS NOT NULL;
CREATE INDEX tweets_quoted_idx ON tweets (quoted_tweet_id) WHERE quoted_tweet_id IS NOT NULL;
CREATE INDEX tweets_retweeted_idx ON tweets (retweeted_tweet_id) WHERE retweeted_tweet_id IS NOT NULL;
CREATE INDEX tweets_hashtags_gin ON tweets USING gin (hashtags);
CREATE INDEX tweets_cashtags_gin ON tweets USING gin (cashtags);
CREATE INDEX tweets_mentions_gin ON tweets USING gin (mentions);
CREATE INDEX tweets_urls_gin ON tweets USING gin (urls);

COMMENT ON TABLE tweets IS 'One row per tweet ever seen (page items and the quoted/retweeted tweets embedded in them), with its latest counts.';
COMMENT ON COLUMN tweets.id IS 'Tweet id (exact 64-bit; encodes the creation time).';
COMMENT ON COLUMN tweets.author_id IS 'Author account id (users.id); null when the service did not say.';
COMMENT ON COLUMN tweets.full_text IS 'Full text of the tweet.';
COMMENT ON COLUMN tweets.created_at IS 'When the tweet was posted (UTC; parsed from ISO 8601 or the legacy form).';
COMMENT ON COLUMN tweets.lang IS 'Language code as the service reports it.';
COMMENT ON COLUMN tweets.conversation_id IS 'Id of the tweet that started the conversation.';
COMMENT ON COLUMN tweets.in_reply_to_tweet_id IS 'Id of the tweet this one replies to.';
COMMENT ON COLUMN tweets.in_reply_to_username IS 'Handle of the account this one replies to.';
COMMENT ON COLUMN tweets.quoted_tweet_id IS 'Id of the quoted tweet (stored in tweets when the response embedded it).';
COMMENT ON COLUMN tweets.retweeted_tweet_id IS 'Id of the retweeted tweet, for retweets.';
COMMENT ON COLUMN tweets.is_reply IS 'Whether the tweet is a reply.';
COMMENT ON COLUMN tweets.is_quote_status IS 'Whether the tweet quotes another.';
COMMENT ON COLUMN tweets.is_replies_limited IS 'Whether who can reply is restricted.';
COMMENT ON COLUMN tweets.like_count IS 'Likes at the last observation; history in tweet_metrics.';
COMMENT ON COLUMN tweets.retweet_count IS 'Retweets at the last observation.';
COMMENT ON COLUMN tweets.reply_count IS 'Replies at the last observation.';
COMMENT ON COLUMN tweets.quote_count IS 'Quotes at the last observation.';
COMMENT ON COLUMN tweets.bookmark_count IS 'Bookmarks at the last observation.';
COMMENT ON COLUMN tweets.view_count IS 'Views at the last observation.';
COMMENT ON COLUMN tweets.hashtags IS 'Hashtags in the text, without #, as written (GIN-indexed: use = ANY or @>).';
COMMENT ON COLUMN tweets.cashtags IS 'Cashtags in the text, without $, as written (GIN-indexed).';
COMMENT ON COLUMN tweets.mentions IS 'Handles mentioned in the text, lower-cased, without @ (GIN-indexed).';
COMMENT ON COLUMN tweets.urls IS 'Links in the text and non-media entities (GIN-indexed).';
COMMENT ON COLUMN tweets.media IS 'Media entities: array of {type, link, preview}.';
COMMENT ON COLUMN tweets.source IS 'Wire shape of the record in raw: v3, v2 or v2-embedded.';
COMMENT ON COLUMN tweets.raw IS 'The fullest record seen, exactly as the service sent it (unknown fields included).';
COMMENT ON COLUMN tweets.first_seen_at IS 'When the harvester first stored this tweet.';
COMMENT ON COLUMN tweets.last_seen_at IS 'When the harvester last saw this tweet in any response.';

CREATE TABLE tweet_metrics (
  tweet_id bigint NOT NULL REFERENCES tweets (id) ON DELETE CASCADE,
  observed_at timestamptz NOT NULL,
  like_count bigint,
  retweet_count bigint,
  reply_count bigint,
  quote_count bigint,
  bookmark_count bigint,
  view_count bigint,
  PRIMARY KEY (tweet_id, observed_at)
);
COMMENT ON TABLE tweet_metrics IS 'Engagement history: one row per observation of a tweet whose counts differed from the previous one (or the first).';
COMMENT ON COLUMN tweet_metrics.tweet_id IS 'The tweet observed (tweets.id).';
COMMENT ON COLUMN tweet_metrics.observed_at IS 'When the page carrying these counts was committed.';
COMMENT ON COLUMN tweet_metrics.like_count IS 'Likes at observed_at.';
COMMENT ON COLUMN tweet_metrics.retweet_count IS 'Retweets at observed_at.';
COMMENT ON COLUMN tweet_metrics.reply_count IS 'Replies at observed_at.';
COMMENT ON COLUMN tweet_metrics.quote_count IS 'Quotes at observed_at.';
COMMENT ON COLUMN tweet_metrics.bookmark_count IS 'Bookmarks at observed_at.';
COMMENT ON COLUMN tweet_metrics.view_count IS 'Views at observed_at.';

CREATE TABLE user_metrics (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  observed_at timestamptz NOT NULL,
  followers_count bigint,
  followings_count bigint,
  tweets_count bigint,
  favourites_count bigint,
  media_count bigint,
  PRIMARY KEY (user_id, observed_at)
);
COMMENT ON TABLE user_metrics IS 'Audience history: one row per observation of an account whose counts differed from the previous one (or the first).';
COMMENT ON COLUMN user_metrics.user_id IS 'The account observed (users.id).';
COMMENT ON COLUMN user_metrics.observed_at IS 'When the page carrying these counts was committed.';
COMMENT ON COLUMN user_metrics.followers_count IS 'Followers at observed_at.';
COMMENT ON COLUMN user_metrics.followings_count IS 'Accounts followed at observed_at.';
COMMENT ON COLUMN user_metrics.tweets_count IS 'Tweets posted at observed_at.';
COMMENT ON COLUMN user_metrics.favourites_count IS 'Likes given at observed_at.';
COMMENT ON COLUMN user_metrics.media_count IS 'Media posted at observed_at.';

CREATE TABLE list_members (
  list_id bigint NOT NULL,
  user_id bigint NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (list_id, user_id)
);
CREATE INDEX list_members_user_idx ON list_members (user_id);
COMMENT ON TABLE list_members IS 'Accounts seen as members of a list.';
COMMENT ON COLUMN list_members.list_id IS 'The list id.';
COMMENT ON COLUMN list_members.user_id IS 'The member account (users.id).';
COMMENT ON COLUMN list_members.first_seen_at IS 'When the membership was first seen.';
COMMENT ON COLUMN list_members.last_seen_at IS 'When the membership was last seen.';

CREATE TABLE list_followers (
  list_id bigint NOT NULL,
  user_id bigint NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (list_id, user_id)
);
CREATE INDEX list_followers_user_idx ON list_followers (user_id);
COMMENT ON TABLE list_followers IS 'Accounts seen following a list.';
COMMENT ON COLUMN list_followers.list_id IS 'The list id.';
COMMENT ON COLUMN list_followers.user_id IS 'The follower account (users.id).';
COMMENT ON COLUMN list_followers.first_seen_at IS 'When the follow was first seen.';
COMMENT ON COLUMN list_followers.last_seen_at IS 'When the follow was last seen.';

CREATE TABLE community_members (
  community_id bigint NOT NULL,
  user_id bigint NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (community_id, user_id)
);
CREATE INDEX community_members_user_idx ON community_members (user_id);
COMMENT ON TABLE community_members IS 'Accounts seen as members of a community.';
COMMENT ON COLUMN community_members.community_id IS 'The community id.';
COMMENT ON COLUMN community_members.user_id IS 'The member account (users.id).';
COMMENT ON COLUMN community_members.first_seen_at IS 'When the membership was first seen.';
COMMENT ON COLUMN community_members.last_seen_at IS 'When the membership was last seen.';

CREATE TABLE follows (
  follower_id bigint NOT NULL,
  followed_id bigint NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (follower_id, followed_id)
);
CREATE INDEX follows_followed_idx ON follows (followed_id);
COMMENT ON TABLE follows IS 'Follow edges seen in follower / following listings.';
COMMENT ON COLUMN follows.follower_id IS 'The account that follows (users.id).';
COMMENT ON COLUMN follows.followed_id IS 'The account followed (users.id).';
COMMENT ON COLUMN follows.first_seen_at IS 'When the edge was first seen.';
COMMENT ON COLUMN follows.last_seen_at IS 'When the edge was last seen.';

CREATE TABLE spaces (
  id text PRIMARY KEY,
  title text,
  state text,
  creator_id bigint,
  created_at timestamptz,
  started_at timestamptz,
  ended_at timestamptz,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE spaces IS 'Audio spaces as last seen. Space ids are not numeric, hence text.';
COMMENT ON COLUMN spaces.id IS 'Space id (alphanumeric).';
COMMENT ON COLUMN spaces.title IS 'Title of the space.';
COMMENT ON COLUMN spaces.state IS 'State string as the service reports it.';
COMMENT ON COLUMN spaces.creator_id IS 'Account that created the space (users.id).';
COMMENT ON COLUMN spaces.created_at IS 'When the space was created.';
COMMENT ON COLUMN spaces.started_at IS 'When the space started.';
COMMENT ON COLUMN spaces.ended_at IS 'When the space ended.';
COMMENT ON COLUMN spaces.raw IS 'The space object exactly as the service sent it.';
COMMENT ON COLUMN spaces.first_seen_at IS 'When the harvester first stored this space.';
COMMENT ON COLUMN spaces.last_seen_at IS 'When the harvester last saw this space.';
