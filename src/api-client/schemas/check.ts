/** Answers of the check endpoints: check-comment (v2 and v3), check-quoted, check-follow, check-retweet, check-community-member. */
import { z } from 'zod';
import { boolSchema, cursorSchema, optionalTimestampSchema, textSchema } from './common.ts';

/** The tweet is validated by the caller with its version's tweet schema. */
export const checkCommentSchema = z
  .object({
    commented: z.boolean(),
    tweet: z.unknown().optional(),
  })
  .loose();

export const checkQuotedSchema = z
  .object({
    date: optionalTimestampSchema,
    status: textSchema,
    text: textSchema,
    user_protected: boolSchema,
  })
  .loose();

export type CheckQuotedWire = z.infer<typeof checkQuotedSchema>;

/** check-follow: `follow` is the answer; `user_protected` says side 2's profile is private. */
export const checkFollowSchema = z.object({ follow: z.boolean(), user_protected: boolSchema }).loose();

/** check-retweet scans up to 100 retweets a call; `next_cursor` continues the scan. */
export const checkRetweetSchema = z.object({ retweet: z.boolean(), user_protected: boolSchema, next_cursor: cursorSchema }).loose();

export const checkCommunityMemberSchema = z.object({ is_member: z.boolean() }).loose();
