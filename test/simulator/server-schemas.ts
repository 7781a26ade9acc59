/** Strict zod schemas of the wire shapes, so a renamed or retyped field fails a test. */
import { z } from 'zod';

const idStr = z.string().regex(/^\d+$/);
export const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
export const LEGACY_RE = /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{2} \d{2}:\d{2}:\d{2} \+0000 \d{4}$/;
const int = z.number().int();

export const userV3 = z.strictObject({
  id: idStr,
  username: z.string(),
  display_name: z.string(),
  description: z.string(),
  location: z.string(),
  created_at: z.string(),
  bio_urls: z.array(z.string()).nullable(),
  can_dm: z.boolean(),
  possibly_sensitive: z.boolean(),
  protected: z.boolean(),
  verified: z.boolean(),
  favourites_count: int,
  followers_count: int,
  followings_count: int,
  media_count: int,
  tweets_count: int,
  pinned_tweet_ids: z.array(idStr).nullable(),
  profile_image_url: z.string(),
  profile_background_image_url: z.string(),
});

export const reducedUser = z.strictObject({
  display_name: z.string(),
  id: idStr,
  profile_image_url: z.string(),
  protected: z.boolean(),
  username: z.string(),
  verified: z.boolean(),
});

const entity = z.strictObject({ link: z.string(), preview: z.string(), type: z.string() });

const tweetV3Base = z.strictObject({
  id: idStr,
  full_text: z.string(),
  created_at: z.string(),
  lang: z.string(),
  conversation_id_str: idStr,
  is_reply: z.boolean(),
  in_reply_to_tweet_id: idStr.nullable(),
  in_reply_to_username: z.string().nullable(),
  is_quote_status: z.boolean(),
  is_replies_limited: z.boolean(),
  likes_count: int,
  retweet_count: int,
  quote_count: int,
  reply_count: int,
  bookmark_count: int,
  view_count: int,
  entities: z.array(entity),
  quoted_status: z.unknown(),
  retweeted_status: z.unknown(),
  user: userV3,
});
export const tweetV3 = tweetV3Base.extend({ quoted_status: tweetV3Base.nullable(), retweeted_status: tweetV3Base.nullable() });

export const tweetsPage = z.strictObject({ tweets: z.array(tweetV3), next_cursor: z.string().nullable() });
export const usersPage = z.strictObject({ users: z.array(userV3), next_cursor: z.string().nullable() });

export const userV2 = z.strictObject({
  avatar: z.string(),
  can_dm: z.boolean(),
  created_at: z.string().regex(LEGACY_RE),
  description: z.string(),
  followers_count: int,
  friends_count: int,
  id_str: idStr,
  name: z.string(),
  screen_name: z.string(),
  statuses_count: int,
});

const embeddedV2 = z.strictObject({
  created_at: z.string().regex(LEGACY_RE),
  favorite_count: int,
  full_text: z.string(),
  id_str: idStr,
  quote_count: int,
  retweet_count: int,
  user: userV2,
});

export const tweetV2 = z.strictObject({
  id_str: idStr,
  full_text: z.string(),
  created_at: z.string().regex(LEGACY_RE),
  conversation_id_str: idStr,
  in_reply_to_status_id_str: idStr.nullable(),
  is_quote_status: z.boolean(),
  favorite_count: int,
  retweet_count: int,
  quote_count: int,
  reply_count: int,
  bookmark_count: int,
  view_count: int,
  entities: z.array(entity),
  quoted_status: embeddedV2.nullable(),
  retweeted_status: embeddedV2.nullable(),
  user: userV2,
});

export const basicAccount = z.strictObject({
  avatar: z.string(),
  banner: z.string(),
  can_dm: z.boolean(),
  description: z.string(),
  followers_count: int,
  friends_count: int,
  id: idStr,
  name: z.string(),
  register_date: z.string().regex(LEGACY_RE),
  screen_name: z.string(),
  tweets_count: int,
  verified: z.boolean(),
});

export const newFollower = z.strictObject({
  avatar: z.string(),
  banner: z.string(),
  description: z.string(),
  followerDate: z.string().regex(LEGACY_RE),
  id: idStr,
  name: z.string(),
  registerDate: z.string().regex(LEGACY_RE),
  screeName: z.string(),
  canDM: z.boolean(),
  protected: z.boolean(),
  verified: z.boolean(),
  followersCount: int,
  friendsCount: int,
  statuses_count: int,
  score: z.number(),
});

const participant = z.strictObject({
  avatar: z.string(),
  id: idStr,
  name: z.string(),
  periscope_user_id: z.string(),
  username: z.string(),
  is_muted_by_admin: z.boolean(),
  is_muted_by_guest: z.boolean(),
  is_verified: z.boolean(),
  start: int,
});

export const space = z.strictObject({
  id: z.string(),
  title: z.string(),
  state: z.string(),
  media_key: z.string(),
  is_subscribed: z.boolean(),
  created_at: int,
  updated_at: int,
  scheduled_start: int,
  creator: userV3,
  participants: z.strictObject({ admins: z.array(participant), listeners: z.array(participant), speakers: z.array(participant), total: int }),
  settings: z.strictObject({
    conversation_controls: int,
    disallow_join: z.boolean(),
    is_employee_only: z.boolean(),
    is_locked: z.boolean(),
    is_muted: z.boolean(),
    is_space_available_for_clipping: z.boolean(),
    is_space_available_for_replay: z.boolean(),
    no_incognito: z.boolean(),
    max_admin_capacity: int,
    max_guest_sessions: int,
    narrow_cast_space_type: int,
  }),
  stats: z.strictObject({ total_live_listeners: int, total_participants: int, total_replay_watched: int }),
});

export const usage = z.strictObject({
  key_requests: int,
  remaining_requests: int,
  total_requests: int,
  valid_until: z.string().refine((v) => !Number.isNaN(Date.parse(v))),
});

export const message = z.strictObject({ message: z.string().min(1) });
