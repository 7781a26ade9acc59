/**
 * Strict zod schemas of production's v3 answers, written from ../shared/service-production.md
 * (item schemas, plus "where the real answer overrides the reference"), one set per profile:
 * `production` has legacy created_at, explicit nulls for empty optional values and the two extra
 * tweet fields of the captured answer; `spec` has ISO timestamps and leaves empty values out.
 * Deliberately independent of src/api-client: a client bug must not be mirrored here.
 */
import { z } from 'zod';

export type Profile = 'production' | 'spec';
export const PROFILES: readonly Profile[] = ['production', 'spec'];

export const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
export const LEGACY_RE = /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{2} \d{2}:\d{2}:\d{2} \+0000 \d{4}$/;
export const PLAIN_TIME_RE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

const idStr = z.string().regex(/^\d+$/);
const int = z.number().int().nonnegative();
const iso = z.string().regex(ISO_RE);

export function referenceSchemas(profile: Profile) {
  const prod = profile === 'production';
  const createdAt = z.string().regex(prod ? LEGACY_RE : ISO_RE);
  /** An optional value: explicit null in production, absent in the spec profile. */
  const opt = <T extends z.ZodType>(schema: T) => (prod ? schema.nullable() : schema.optional());
  const cursor = opt(z.string().min(1));
  /**
   * Production sends the int64-typed cursors (followers, follows, list-members) as JSON numbers
   * (above 2^53: JSON.parse rounds them, so tests read the digits from the text).
   */
  const intCursor = prod ? z.number().positive().nullable() : z.string().regex(/^\d+$/).optional();

  const userFields = {
    id: idStr,
    username: z.string(),
    display_name: z.string(),
    description: z.string(),
    location: z.string(),
    created_at: createdAt,
    bio_urls: opt(z.array(z.string())),
    pinned_tweet_ids: opt(z.array(idStr)),
    can_dm: z.boolean(),
    possibly_sensitive: z.boolean(),
    protected: z.boolean(),
    verified: z.boolean(),
    favourites_count: int,
    followers_count: int,
    followings_count: int,
    media_count: int,
    tweets_count: int,
    profile_image_url: z.string(),
    profile_background_image_url: z.string(),
  };
  const user = z.strictObject(userFields);
  const { location: _location, ...withoutLocation } = userFields;
  const follower = z.strictObject({ ...withoutLocation, followerDate: iso });
  const communityUser = z.strictObject({
    id: idStr,
    username: z.string(),
    display_name: z.string(),
    profile_image_url: z.string(),
    protected: z.boolean(),
    verified: z.boolean(),
  });
  const topFollower = z.strictObject({
    id: idStr,
    username: z.string(),
    display_name: z.string(),
    description: z.string(),
    created_at: createdAt,
    profile_image_url: z.string(),
    profile_background_image_url: z.string(),
    followers_count: int,
    followings_count: int,
    tweets_count: int,
    can_dm: z.boolean(),
    protected: z.boolean(),
    verified: z.boolean(),
    score: z.number(),
  });
  const entity = z.strictObject({ type: z.string(), link: z.string(), preview: z.string() });
  const tweetFields = {
    id: idStr,
    full_text: z.string(),
    created_at: createdAt,
    lang: z.string(),
    conversation_id_str: idStr,
    is_reply: z.boolean(),
    in_reply_to_tweet_id: opt(idStr),
    in_reply_to_username: opt(z.string()),
    is_quote_status: z.boolean(),
    is_replies_limited: z.boolean(),
    likes_count: int,
    retweet_count: int,
    reply_count: int,
    quote_count: int,
    bookmark_count: int,
    view_count: int,
    entities: z.array(entity),
    user,
    ...(prod ? { made_with_ai: z.boolean(), paid_partnership: z.boolean() } : {}),
  };
  // a nested status's own nested statuses go one level further at most: checked loosely
  const deeper = opt(z.record(z.string(), z.unknown()));
  const nestedTweet = z.strictObject({ ...tweetFields, quoted_status: deeper, retweeted_status: deeper });
  const tweet = z.strictObject({ ...tweetFields, quoted_status: opt(nestedTweet), retweeted_status: opt(nestedTweet) });
  const participant = z.strictObject({
    id: z.string(),
    username: z.string(),
    name: z.string(),
    avatar: z.string(),
    periscope_user_id: z.string(),
    is_muted_by_admin: z.boolean(),
    is_muted_by_guest: z.boolean(),
    is_verified: z.boolean(),
    start: int,
  });
  const place = z.strictObject({
    id: z.string(),
    title: z.string(),
    state: z.string(),
    media_key: z.string(),
    is_subscribed: z.boolean(),
    created_at: int,
    updated_at: int,
    scheduled_start: int,
    creator: user,
    participants: z.strictObject({ admins: z.array(participant), speakers: z.array(participant), listeners: z.array(participant), total: int }),
    settings: z.strictObject({
      conversation_controls: int,
      max_admin_capacity: int,
      max_guest_sessions: int,
      narrow_cast_space_type: int,
      disallow_join: z.boolean(),
      is_employee_only: z.boolean(),
      is_locked: z.boolean(),
      is_muted: z.boolean(),
      is_space_available_for_clipping: z.boolean(),
      is_space_available_for_replay: z.boolean(),
      no_incognito: z.boolean(),
    }),
    stats: z.strictObject({ total_live_listeners: int, total_participants: int, total_replay_watched: int }),
  });
  const article = z.strictObject({
    full_text: z.string(),
    preview_text: z.string(),
    cover_image_url: z.string(),
    published_at: iso,
    likes_count: int,
    retweet_count: int,
    reply_count: int,
    quote_count: int,
    bookmark_count: int,
    views_count: int,
    author: user,
  });
  return {
    user,
    tweet,
    entity,
    tweetsPage: z.strictObject({ tweets: z.array(tweet), next_cursor: cursor }),
    usersPage: z.strictObject({ users: z.array(user), next_cursor: cursor }),
    usersIntPage: z.strictObject({ users: z.array(user), next_cursor: intCursor }),
    communityUsersPage: z.strictObject({ users: z.array(communityUser), next_cursor: cursor }),
    tweets: z.strictObject({ tweets: z.array(tweet) }),
    users: z.strictObject({ users: z.array(user) }),
    followers: z.strictObject({ users: z.array(follower) }),
    topFollowers: z.strictObject({ users: z.array(topFollower) }),
    place,
    article,
    trends: z.strictObject({ trends: z.array(z.strictObject({ name: z.string(), query: z.string(), url: z.string() })) }),
    about: z.strictObject({ country: opt(z.string()), username_change_count: int, last_username_change_at: opt(iso) }),
    keyUsage: z.strictObject({ key_requests: int, remaining_requests: int, total_requests: int, valid_until: iso }),
    checkComment: z.strictObject({ commented: z.boolean(), tweet: opt(tweet) }),
    checkFollow: z.strictObject({ follow: z.boolean(), user_protected: z.boolean() }),
    checkRetweet: z.strictObject({ retweet: z.boolean(), user_protected: z.boolean(), next_cursor: cursor }),
    checkQuoted: z.strictObject({
      status: z.enum(['quoted', 'retweet', 'not_found']),
      date: opt(z.string().regex(PLAIN_TIME_RE)),
      text: opt(z.string()),
      user_protected: z.boolean(),
    }),
    checkCommunityMember: z.strictObject({ is_member: z.boolean() }),
    id: z.strictObject({ id: idStr }),
    handle: z.strictObject({ handle: z.string() }),
    score: z.strictObject({ score: z.number() }),
    scoreChanges: z.strictObject({ week_delta: z.number(), month_delta: z.number() }),
    followersStats: z.strictObject({
      followers_count: int,
      influencers_count: int,
      projects_count: int,
      venture_capitals_count: int,
      user_protected: z.boolean(),
    }),
    message: z.strictObject({ message: z.string().min(1) }),
  };
}

export type ReferenceSchemas = ReturnType<typeof referenceSchemas>;
