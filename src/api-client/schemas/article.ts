/** Article (POST /v3/article): note `views_count`, plural unlike a tweet's `view_count`; no id field. */
import { z } from 'zod';
import { countSchema, optionalTimestampSchema, textSchema } from './common.ts';
import { userV3Schema } from './user-v3.ts';

export const articleSchema = z.object({
  full_text: textSchema,
  preview_text: textSchema,
  cover_image_url: textSchema,
  published_at: optionalTimestampSchema,
  likes_count: countSchema,
  retweet_count: countSchema,
  reply_count: countSchema,
  quote_count: countSchema,
  bookmark_count: countSchema,
  views_count: countSchema,
  author: userV3Schema.nullish(),
});

export type ArticleWire = z.infer<typeof articleSchema>;
