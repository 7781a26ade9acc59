/**
 * v3 user shapes (service-production.md "Item schemas"): the full User, the CommunityUser of
 * community-members, the Follower of new-followers-7d / new-following-7d (User without `location`,
 * plus camelCase `followerDate`) and the TopFollower of top-followers / top-following.
 * The full User rides in every v3 tweet (20 a search page), so its fields are the transform-free
 * `plain…` schemas (common.ts) and normalizeUserV3 makes them canonical; the rarer shapes keep the
 * transforming ones. `bio_urls` and `pinned_tweet_ids` are checked as arrays only: normalizeUserV3
 * keeps their strings and canonical ids and drops any other element (a `null`, an empty or
 * numeric id), so one odd element costs that element, not the profile; the stored `raw` keeps
 * both arrays exactly as they came.
 */
import { z } from 'zod';
import {
  boolSchema,
  countSchema,
  idSchema,
  numberSchema,
  optionalTimestampSchema,
  plainArray,
  plainBool,
  plainCount,
  plainOptionalTimestamp,
  plainText,
  textSchema,
} from './common.ts';

export const userV3Schema = z.object({
  id: idSchema,
  username: plainText,
  display_name: plainText,
  description: plainText,
  location: plainText,
  created_at: plainOptionalTimestamp,
  bio_urls: plainArray,
  can_dm: plainBool,
  possibly_sensitive: plainBool,
  protected: plainBool,
  verified: plainBool,
  favourites_count: plainCount,
  followers_count: plainCount,
  followings_count: plainCount,
  media_count: plainCount,
  tweets_count: plainCount,
  pinned_tweet_ids: plainArray,
  profile_image_url: plainText,
  profile_background_image_url: plainText,
});

export type UserV3 = z.infer<typeof userV3Schema>;

export const reducedUserSchema = z
  .object({
    id: idSchema,
    username: textSchema,
    display_name: textSchema,
    profile_image_url: textSchema,
    protected: boolSchema,
    verified: boolSchema,
  });

export type ReducedUser = z.infer<typeof reducedUserSchema>;

export const followerV3Schema = userV3Schema.omit({ location: true }).extend({ followerDate: optionalTimestampSchema });

export type FollowerV3 = z.infer<typeof followerV3Schema>;

export const topFollowerSchema = z.object({
  id: idSchema,
  username: textSchema,
  display_name: textSchema,
  description: textSchema,
  created_at: optionalTimestampSchema,
  profile_image_url: textSchema,
  profile_background_image_url: textSchema,
  followers_count: countSchema,
  followings_count: countSchema,
  tweets_count: countSchema,
  can_dm: boolSchema,
  protected: boolSchema,
  verified: boolSchema,
  score: numberSchema,
});

export type TopFollower = z.infer<typeof topFollowerSchema>;
