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

/**
 * An optional timestamp in one transform (the union form below costs a union and two pipes per
 * value): '' is none like null/absent; what stays absent or null is the normaliser's to make null.
 */
export const plainOptionalTimestamp = z
  .string()
  .transform((text, ctx) => {
    if (text === '') return null;
    const date = parseTimestamp(text);
    if (date) return date;
    ctx.addIssue({ code: 'custom', message: `unrecognised timestamp ${JSON.stringify(text.slice(0, 60))}` });
    return z.NEVER;
  })
  .nullish();

export const optionalTimestampSchema = z
  .union([z.literal(''), timestampSchema])
  .nullish()
  .transform((v) => (v instanceof Date ? v : null));

/*
 * Plain field schemas for the hottest shapes (the v3 tweet and user: 20 of each per search page).
 * They validate exactly what the schemas above validate but transform nothing: `null`/absent stay
 * as they came and a count may still be its decimal string. Each `.transform` is a zod pipe plus a
 * transform step plus zod's cycle guard per field, ~40 fields an item: the v3 tweet schema parsed a
 * page in 0.12 ms with them and 0.05 ms without (bench/cpu.ts recordings). The readers'
 * normalisers turn these values into canonical ones in the same plain pass that builds the record
 * (`orNull`, `countOf`, `idOrNull` below).
 */

/** A string; null or absent is none. */
export const plainText = z.string().nullish();

export const plainBool = z.boolean().nullish();

const COUNT_STRING = /^\d{1,16}$/;

/** A count: a safe non-negative integer or its decimal string; null or absent is none. */
export const plainCount = z
  .union([
    z.int().min(0, 'a count is a safe non-negative integer'),
    z
      .string()
      .regex(COUNT_STRING, 'a count is a decimal string')
      .refine((s) => Number.isSafeInteger(Number(s)), 'a count is a safe non-negative integer'),
  ])
  .nullish();

/** An optional id: a canonical id, or '' / null / absent for none. */
export const plainOptionalId = z
  .string()
  .refine((v) => v === '' || isCanonicalId(v), ID_MESSAGE)
  .nullish();

/**
 * A secondary array (bio_urls, pinned_tweet_ids, a tweet's entities): an array, or null / absent
 * for none; anything else is refused. Its elements are checked where they are read, by the
 * normaliser's predicate (`validElements`), not here: one odd element (a `null` among the
 * bio_urls, an empty pinned id, an entity whose link is a number) then costs that element in the
 * derived columns, not the whole item (a listing's user and its edge, `/v3/info`'s profile, a
 * tweet). Nothing is lost: the item's stored `raw` keeps the array as it came. `z.custom` rather
 * than `z.array(z.unknown())`, which would run a schema and allocate a result per element: the
 * value is the wire's own array, never mutated (the normalisers copy only to drop an element).
 */
export const plainArray = z.custom<readonly unknown[]>(Array.isArray, 'expected an array').nullish();

export function orNull<T>(value: T | null | undefined): T | null {
  return value ?? null;
}

/** A `plainCount` value as a number (its string form was checked to be a safe integer). */
export function countOf(value: number | string | null | undefined): number | null {
  return value === null || value === undefined ? null : typeof value === 'number' ? value : Number(value);
}

/**
 * The elements of a `plainArray` value that pass `valid`, [] for null/absent. When all pass (the
 * usual case) it is the same array, nothing allocated; otherwise a copy without the others.
 */
export function validElements<T>(values: readonly unknown[] | null | undefined, valid: (value: unknown) => value is T): T[] {
  if (!values) return [];
  for (let i = 0; i < values.length; i++) if (!valid(values[i])) return values.filter(valid);
  return values as T[];
}

/** An element of a list of ids: a canonical id string (a JSON number may have lost digits). */
export function isIdString(value: unknown): value is string {
  return typeof value === 'string' && isCanonicalId(value);
}

export function isString(value: unknown): value is string {
  return typeof value === 'string';
}

/** A `plainOptionalId` value: '' means none, like null. */
export function idOrNull(value: string | null | undefined): string | null {
  return value ? value : null;
}

/** Error bodies are `{"message": "..."}`. */
export const errorBodySchema = z.object({ message: z.string() }).loose();
