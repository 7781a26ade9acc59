/** Per-account figures: about, score, score-changes, followers-stats. */
import { z } from 'zod';
import { boolSchema, countSchema, optionalTimestampSchema, textSchema } from './common.ts';

export const aboutSchema = z
  .object({
    country: textSchema,
    username_change_count: countSchema,
    last_username_change_at: optionalTimestampSchema,
  })
  .loose();

export const scoreSchema = z.object({ score: z.number() }).loose();

export const scoreChangesSchema = z.object({ week_delta: z.number(), month_delta: z.number() }).loose();

export const followersStatsSchema = z
  .object({
    followers_count: countSchema,
    influencers_count: countSchema,
    projects_count: countSchema,
    venture_capitals_count: countSchema,
    user_protected: boolSchema,
  })
  .loose();
