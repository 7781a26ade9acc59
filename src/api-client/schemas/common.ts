/**
 * Building blocks shared by the response schemas. Lenient where the service is sloppy (nulls,
 * numeric strings for counts, unknown fields), strict where correctness depends on it: an id must
 * be a canonical positive int64 decimal string (it becomes a `bigint` in SQL, and a JSON number may
 * already have lost precision above 2^53), a count a safe non-negative integer (a `bigint` column
 * refuses 1.5, and a value above 2^53 is already inexact), and a cursor is sent back verbatim.
 */
import { z } from 'zod';
import { parseTimestamp } from '../timestamps.ts';

const INT64_MAX = 9223372036854775807n;

/**
 * A canonical positive int64 in decimal: no sign, no leading zero, not 0, at most
 * 9223372036854775807. "01" and "1" would be two keys for one row in text but one in SQL.
 */
export function isCanonicalId(value: string): boolean {
  return /^[1-9]\d{0,18}$/.test(value) && (value.length < 19 || BigInt(value) <= INT64_MAX);
}

const ID_MESSAGE = 'id must be a canonical positive int64 decimal string';

export const idSchema = z.string().refine(isCanonicalId, ID_MESSAGE);

/** An optional id: null/absent mean none; an empty string is treated as none too. */
export const optionalIdSchema = z
  .union([z.literal(''), idSchema])
  .nullish()
  .transform((v) => (v ? v : null));

/**
 * Next-page cursor; null, absent and '' all mean "last page". Integer cursors above 2^53 never
 * reach this schema as numbers: the executor quotes every integer `next_cursor` in the body text
 * before JSON.parse (see `quoteIntegerCursors`), so their digits survive exactly.
 */
export const cursorSchema = z
  .union([
    z.string(),
    z
      .number()
      .refine((n) => Number.isSafeInteger(n), 'numeric cursor beyond 2^53 cannot be sent back exactly')
      .transform((n) => String(n)),
  ])
  .nullish()
  .transform((v) => (v === undefined || v === null || v === '' ? null : v));

const safeCount = z
  .number()
  .refine((n) => Number.isSafeInteger(n) && n >= 0, 'a count is a safe non-negative integer');

/** Counts: safe non-negative integers, as numbers or decimal strings; null/absent become null. */
export const countSchema = z
  .union([safeCount, z.string().regex(/^\d{1,16}$/, 'a count is a decimal string').transform(Number).pipe(safeCount)])
  .nullish()
  .transform((v) => v ?? null);

/** The counts v2 and v3 tweets share by name (likes differ: `favorite_count` / `likes_count`). */
export const sharedTweetCounts = {
  retweet_count: countSchema,
  quote_count: countSchema,
  reply_count: countSchema,
  bookmark_count: countSchema,
  view_count: countSchema,
};

/** A measure that is not a count (a score, a delta): any finite number; null/absent become null. */
export const numberSchema = z
  .number()
  .nullish()
  .transform((v) => v ?? null);

export const boolSchema = z
  .boolean()
  .nullish()
  .transform((v) => v ?? null);

export const textSchema = z
  .string()
  .nullish()
  .transform((v) => v ?? null);

/** A timestamp in any form the service uses, parsed to a UTC Date. */
export const timestampSchema = z.string().transform((text, ctx) => {
  const date = parseTimestamp(text);
  if (!date) {
    ctx.addIssue({ code: 'custom', message: `unrecognised timestamp ${JSON.stringify(text.slice(0, 60))}` });
    return z.NEVER;
  }
  return date;
});

export const optionalTimestampSchema = z
  .union([z.literal(''), timestampSchema])
  .nullish()
  .transform((v) => (v instanceof Date ? v : null));

/** Array that may come as null (bio_urls, pinned_tweet_ids). */
export function nullableArray<T extends z.ZodType>(item: T) {
  return z
    .array(item)
    .nullish()
    .transform((v) => v ?? []);
}

export const entitySchema = z
  .object({
    link: textSchema,
    preview: textSchema,
    type: textSchema,
  })
  .loose();

export const entitiesSchema = nullableArray(entitySchema);

/** Error bodies are `{"message": "..."}`. */
export const errorBodySchema = z.object({ message: z.string() }).loose();
