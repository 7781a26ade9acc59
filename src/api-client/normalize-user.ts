/** Every user shape → CanonicalUser. A field the shape does not carry is null, never a guess. */
import type { CanonicalUser, UserSource } from './canonical.ts';
import type { FollowerV3, ReducedUser, TopFollower, UserV3 } from './schemas/user-v3.ts';
import type { BasicAccount, NewFollower, UserV2Embedded } from './schemas/user-v2.ts';
import { countOf, isIdString, isString, orNull, validElements } from './schemas/common.ts';

/**
 * Every normaliser builds on this literal or on normalizeUserV3's (the same keys in the same
 * order) and only assigns fields that exist (withFields), never spreads: all users then share one
 * hidden class, which the upserts' column pickers are optimized for (page-rows.ts, mergeUser).
 */
function emptyUser(id: string, source: UserSource, raw: unknown): CanonicalUser {
  return {
    id,
    username: null,
    displayName: null,
    description: null,
    location: null,
    createdAt: null,
    protected: null,
    verified: null,
    canDm: null,
    possiblySensitive: null,
    followersCount: null,
    followingsCount: null,
    tweetsCount: null,
    favouritesCount: null,
    mediaCount: null,
    profileImageUrl: null,
    profileBackgroundImageUrl: null,
    bannerUrl: null,
    bioUrls: [],
    pinnedTweetIds: [],
    source,
    raw,
  };
}

/** `user` with `fields` written into it (each field typed as CanonicalUser types it). */
function withFields<K extends keyof CanonicalUser>(user: CanonicalUser, fields: Pick<CanonicalUser, K>): CanonicalUser {
  return Object.assign(user, fields);
}

/**
 * Production's v3 `profile_background_image_url` holds the profile banner
 * (`https://pbs.twimg.com/profile_banners/<user id>/<version>`, fixtures/search-tweets.v3.real.json),
 * the image v2 calls `banner`: such an address fills `banner_url` too, so the column means the
 * same whichever endpoint saw the user last. Any other address is left to its own column.
 */
export function bannerOf(backgroundUrl: string | null | undefined): string | null {
  return backgroundUrl && backgroundUrl.includes('/profile_banners/') ? backgroundUrl : null;
}

/**
 * One literal, no spread of an empty record: this runs for every tweet's author. Of bio_urls and
 * pinned_tweet_ids only the strings and the canonical ids are kept (userV3Schema checks neither
 * element by element); `raw` keeps both lists as they came.
 */
export function normalizeUserV3(user: UserV3, raw: unknown): CanonicalUser {
  return {
    id: user.id,
    username: orNull(user.username),
    displayName: orNull(user.display_name),
    description: orNull(user.description),
    location: orNull(user.location),
    createdAt: orNull(user.created_at),
    protected: orNull(user.protected),
    verified: orNull(user.verified),
    canDm: orNull(user.can_dm),
    possiblySensitive: orNull(user.possibly_sensitive),
    followersCount: countOf(user.followers_count),
    followingsCount: countOf(user.followings_count),
    tweetsCount: countOf(user.tweets_count),
    favouritesCount: countOf(user.favourites_count),
    mediaCount: countOf(user.media_count),
    profileImageUrl: orNull(user.profile_image_url),
    profileBackgroundImageUrl: orNull(user.profile_background_image_url),
    bannerUrl: bannerOf(user.profile_background_image_url),
    bioUrls: validElements(user.bio_urls, isString),
    pinnedTweetIds: validElements(user.pinned_tweet_ids, isIdString),
    source: 'v3',
    raw,
  };
}

/** new-followers-7d / new-following-7d: a v3 user without `location` (the follow date is the caller's). */
export function normalizeFollowerV3(user: FollowerV3, raw: unknown): CanonicalUser {
  const follower = normalizeUserV3({ ...user, location: null }, raw);
  follower.source = 'v3-follower';
  return follower;
}

/** top-followers / top-following: a reduced profile (the score is the caller's). */
export function normalizeTopFollower(user: TopFollower, raw: unknown): CanonicalUser {
  return withFields(emptyUser(user.id, 'v3-top-follower', raw), {
    username: user.username,
    displayName: user.display_name,
    description: user.description,
    createdAt: user.created_at,
    protected: user.protected,
    verified: user.verified,
    canDm: user.can_dm,
    followersCount: user.followers_count,
    followingsCount: user.followings_count,
    tweetsCount: user.tweets_count,
    profileImageUrl: user.profile_image_url,
    profileBackgroundImageUrl: user.profile_background_image_url,
    bannerUrl: bannerOf(user.profile_background_image_url),
  });
}

export function normalizeReducedUser(user: ReducedUser, raw: unknown): CanonicalUser {
  return withFields(emptyUser(user.id, 'v3-reduced', raw), {
    username: user.username,
    displayName: user.display_name,
    protected: user.protected,
    verified: user.verified,
    profileImageUrl: user.profile_image_url,
  });
}

export function normalizeUserV2Embedded(user: UserV2Embedded, raw: unknown): CanonicalUser {
  return withFields(emptyUser(user.id_str, 'v2-embedded', raw), {
    username: user.screen_name,
    displayName: user.name,
    description: user.description,
    createdAt: user.created_at,
    canDm: user.can_dm,
    followersCount: user.followers_count,
    followingsCount: user.friends_count,
    tweetsCount: user.statuses_count,
    profileImageUrl: user.avatar,
  });
}

export function normalizeBasicAccount(user: BasicAccount, raw: unknown): CanonicalUser {
  return withFields(emptyUser(user.id, 'v2-basic', raw), {
    username: user.screen_name,
    displayName: user.name,
    description: user.description,
    createdAt: user.register_date,
    canDm: user.can_dm,
    verified: user.verified,
    followersCount: user.followers_count,
    followingsCount: user.friends_count,
    tweetsCount: user.tweets_count,
    profileImageUrl: user.avatar,
    bannerUrl: user.banner,
  });
}

export function normalizeNewFollower(user: NewFollower, raw: unknown): CanonicalUser {
  return withFields(emptyUser(user.id, 'v2-new-follower', raw), {
    username: user.screeName,
    displayName: user.name,
    description: user.description,
    createdAt: user.registerDate,
    canDm: user.canDM,
    protected: user.protected,
    verified: user.verified,
    followersCount: user.followersCount,
    followingsCount: user.friendsCount,
    tweetsCount: user.statuses_count,
    profileImageUrl: user.avatar,
    bannerUrl: user.banner,
  });
}
