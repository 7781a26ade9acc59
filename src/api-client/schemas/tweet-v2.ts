/** v2 tweet and its embedded quoted/retweeted object (service-spec "Tweet (older version)"). */
import { z } from 'zod';
import { boolSchema, countSchema, plainArray, sharedTweetCounts, idSchema, optionalIdSchema, optionalTimestampSchema, textSchema, timestampSchema } from './common.ts';
import { userV2EmbeddedSchema } from './user-v2.ts';

/** created_at, favorite_count, full_text, id_str, quote_count, retweet_count, user. */
export const tweetV2EmbeddedSchema = z
  .object({
    id_str: idSchema,
    full_text: textSchema,
    created_at: optionalTimestampSchema,
    favorite_count: countSchema,
    quote_count: countSchema,
    retweet_count: countSchema,
    user: userV2EmbeddedSchema.nullish(),
  })
  .loose();

export type TweetV2Embedded = z.infer<typeof tweetV2EmbeddedSchema>;

export const tweetV2Schema = z
  .object({
    id_str: idSchema,
    full_text: z
      .string()
      .nullish()
      .transform((v) => v ?? ''),
    created_at: timestampSchema,
    conversation_id_str: optionalIdSchema,
    in_reply_to_status_id_str: optionalIdSchema,
    is_quote_status: boolSchema,
    favorite_count: countSchema,
    ...sharedTweetCounts,
    /** Checked as an array only; normalizeTweetV2 drops an element not shaped like an entity (see tweet-v3.ts). */
    entities: plainArray,
    quoted_status: tweetV2EmbeddedSchema.nullish(),
    retweeted_status: tweetV2EmbeddedSchema.nullish(),
    user: userV2EmbeddedSchema.nullish(),
  })
  .loose();

export type TweetV2 = z.infer<typeof tweetV2Schema>;
