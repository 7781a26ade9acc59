/**
 * Building blocks shared by the response schemas. Lenient where the service is sloppy (nulls,
 * numeric strings for counts, unknown fields), strict where correctness depends on it: an id must
 * be a non-empty decimal string (a JSON number may already have lost precision above 2^53), and a
 * cursor is sent back verbatim, so a number is accepted only when its decimal form is exact.
 */
import { z } from 'zod';
import { parseTimestamp } from '../timestamps.ts';

export const idSchema = z.string().regex(/^\d{1,30}$/, 'id must be a non-empty decimal string');

/** An optional id: null/absent mean none; an empty string is treated as none too. */
export const optionalIdSchema = z
  .union([z.literal(''), idSchema])
  .nullish()
  .transform((v) => (v ? v : null));

/** Next-page cursor; null, absent and '' all mean "last page". */
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

/** Counts: numbers, numeric strings accepted; null/absent become null. */
export const countSchema = z
  .union([z.number().finite(), z.string().regex(/^-?\d+(\.\d+)?$/).transform(Number)])
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
