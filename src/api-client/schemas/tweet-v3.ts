/**
 * v3 Tweet (service-production.md "Item schemas"; the real page adds `made_with_ai` and
 * `paid_partnership`). Unknown fields are dropped from the parsed object (zod's default): the
 * readers keep the item exactly as it came as `raw`, which is what is stored, and a closed object
 * parses markedly faster (bench/cpu.ts) on the hottest path. For the same reason the fields are
 * the transform-free `plain…` schemas (common.ts): null and absent stay as they came and
 * normalizeTweetV3 makes them canonical. The timestamp is the one transform: it is parsed once,
 * here, and a page's tweet without a readable time is refused by the schema.
 * quoted_status / retweeted_status are full v3 Tweets in production but a placeholder in the
 * spec, so they are not validated here: normalize.ts reads one as a full tweet when it is one
 * (down to MAX_EMBEDDED_DEPTH), keeps only its id when that is valid, and otherwise drops the
 * embedded part, never the tweet that carries it. The author (`user`) is read the same way, on its
 * own with userV3Schema: a profile field it refuses (an unreadable `created_at`, a negative
 * count) costs the profile, not the tweet, which keeps the author's id when that is valid.
 * `entities` is checked as an array only: normalizeTweetV3 keeps the elements shaped
 * `{link, preview, type}` (each a string, null or absent) and drops any other (a `null`, a numeric
 * link) from entities, media and urls, so one odd entity costs that entity, not the tweet; the
 * stored `raw` keeps the array as it came.
 */
import { z } from 'zod';
import {
  idSchema,
  plainArray,
  plainBool,
  plainCount,
  plainOptionalId,
  plainText,
  timestampSchema,
} from './common.ts';

export const tweetV3Schema = z.object({
  id: idSchema,
  full_text: plainText,
  created_at: timestampSchema,
  lang: plainText,
  conversation_id_str: plainOptionalId,
  is_reply: plainBool,
  in_reply_to_tweet_id: plainOptionalId,
  in_reply_to_username: plainText,
  is_quote_status: plainBool,
  is_replies_limited: plainBool,
  likes_count: plainCount,
  retweet_count: plainCount,
  quote_count: plainCount,
  reply_count: plainCount,
  bookmark_count: plainCount,
  view_count: plainCount,
  entities: plainArray,
  quoted_status: z.unknown().optional(),
  retweeted_status: z.unknown().optional(),
  user: z.unknown().optional(),
});

export type TweetV3 = z.infer<typeof tweetV3Schema>;
