/** v3 user profile and the reduced user of community members (service-spec "User (newer version)"). */
import { z } from 'zod';
import { boolSchema, countSchema, idSchema, nullableArray, optionalTimestampSchema, textSchema } from './common.ts';

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
