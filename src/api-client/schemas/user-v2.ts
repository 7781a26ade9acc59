/**
 * The three older user shapes (service-spec "User (older version)", "Basic account record",
 * "New-follower record"). `screeName` is the wire's own spelling.
 */
import { z } from 'zod';
import { boolSchema, countSchema, idSchema, numberSchema, optionalTimestampSchema, textSchema } from './common.ts';

/** Embedded in /v2 tweets. */
export const userV2EmbeddedSchema = z
  .object({
    id_str: idSchema,
    screen_name: textSchema,
    name: textSchema,
    description: textSchema,
    avatar: textSchema,
    can_dm: boolSchema,
    created_at: optionalTimestampSchema,
    followers_count: countSchema,
    friends_count: countSchema,
    statuses_count: countSchema,
  })
  .loose();

export type UserV2Embedded = z.infer<typeof userV2EmbeddedSchema>;

/** /v2/info/{handle} and /v2/follows. */
export const basicAccountSchema = z
  .object({
    id: idSchema,
    screen_name: textSchema,
    name: textSchema,
    description: textSchema,
    avatar: textSchema,
    banner: textSchema,
    can_dm: boolSchema,
    register_date: optionalTimestampSchema,
    followers_count: countSchema,
    friends_count: countSchema,
    tweets_count: countSchema,
    verified: boolSchema,
  })
  .loose();

export type BasicAccount = z.infer<typeof basicAccountSchema>;

/** /v2/new-following-7d. */
export const newFollowerSchema = z
  .object({
    id: idSchema,
    screeName: textSchema,
    name: textSchema,
    description: textSchema,
    avatar: textSchema,
    banner: textSchema,
    followerDate: optionalTimestampSchema,
    registerDate: optionalTimestampSchema,
    canDM: boolSchema,
    protected: boolSchema,
    verified: boolSchema,
    followersCount: countSchema,
    friendsCount: countSchema,
    statuses_count: countSchema,
    score: numberSchema,
  })
  .loose();

export type NewFollower = z.infer<typeof newFollowerSchema>;
