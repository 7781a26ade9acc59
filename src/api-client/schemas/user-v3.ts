/**
 * v3 user shapes (service-production.md "Item schemas"): the full User, the CommunityUser of
 * community-members, the Follower of new-followers-7d / new-following-7d (User without `location`,
 * plus camelCase `followerDate`) and the TopFollower of top-followers / top-following.
 */
import { z } from 'zod';
import { boolSchema, countSchema, idSchema, nullableArray, numberSchema, optionalTimestampSchema, textSchema } from './common.ts';

export const userV3Schema = z
  .object({
    id: idSchema,
    username: textSchema,
    display_name: textSchema,
    description: textSchema,
    location: textSchema,
    created_at: optionalTimestampSchema,
    bio_urls: nullableArray(z.string()),
    can_dm: boolSchema,
    possibly_sensitive: boolSchema,
    protected: boolSchema,
    verified: boolSchema,
    favourites_count: countSchema,
    followers_count: countSchema,
    followings_count: countSchema,
    media_count: countSchema,
    tweets_count: countSchema,
    pinned_tweet_ids: nullableArray(idSchema),
    profile_image_url: textSchema,
    profile_background_image_url: textSchema,
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
