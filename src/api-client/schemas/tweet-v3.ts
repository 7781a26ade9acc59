/**
 * v3 Tweet (service-production.md "Item schemas"; the real page adds `made_with_ai` and
 * `paid_partnership`). Unknown fields are dropped from the parsed object (zod's default): the
 * readers keep the item exactly as it came as `raw`, which is what is stored, and a closed object
 * parses markedly faster (bench/cpu.ts) on the hottest path.
 * quoted_status / retweeted_status are full v3 Tweets in production but a placeholder in the
 * spec, so they are not validated here: normalize.ts reads one as a full tweet when it is one
 * (down to MAX_EMBEDDED_DEPTH), keeps only its id when that is valid, and otherwise drops the
 * embedded part, never the tweet that carries it.
 */
import { z } from 'zod';
import {
  boolSchema,
  countSchema,
  entitiesSchema,
  idSchema,
  optionalIdSchema,
  sharedTweetCounts,
  textSchema,
  timestampSchema,
} from './common.ts';
import { userV3Schema } from './user-v3.ts';


export const tweetV3Schema = z
  .object({
    id: idSchema,
    full_text: z
      .string()
      .nullish()
      .transform((v) => v ?? ''),
    created_at: timestampSchema,
    lang: textSchema,
    conversation_id_str: optionalIdSchema,
    is_reply: boolSchema,
    in_reply_to_tweet_id: optionalIdSchema,
    in_reply_to_username: textSchema,
    is_quote_status: boolSchema,
    is_replies_limited: boolSchema,
    likes_count: countSchema,
    ...sharedTweetCounts,
    entities: entitiesSchema,
    quoted_status: z.unknown().optional(),
    retweeted_status: z.unknown().optional(),
    user: userV3Schema.nullish(),
  });

export type TweetV3 = z.infer<typeof tweetV3Schema>;
