/**
 * Request parameters are validated before anything is sent: the real service answers a malformed
 * POST body with an empty result rather than a 400 (service-notes), which would read as "no data"
 * and spend a request. A bad parameter throws InputError and costs nothing.
 */
import { z } from 'zod';
import { InputError } from '../errors.ts';
import { isCanonicalId } from './schemas/common.ts';

export const handleInput = z
  .string()
  .trim()
  .transform((h) => (h.startsWith('@') ? h.slice(1) : h))
  .pipe(z.string().regex(/^[A-Za-z0-9_]{1,15}$/, 'a handle is 1–15 letters, digits or underscores'));

export const userIdInput = z.string().trim().refine(isCanonicalId, 'a user id is a positive int64 decimal string');
export const numericIdInput = z.string().trim().refine(isCanonicalId, 'an id is a positive int64 decimal string');

/**
 * A tweet's link without its author's handle. Production documents bare ids only for tweet-info,
 * tweet-info-bulk and article; its other `tweet_link` fields (comments, quotes, retweeters, the
 * checks) say "tweet link", so jobs that know only the id send this form.
 */
export function tweetLinkOf(id: string): string {
  return `https://x.com/i/web/status/${id}`;
}

export const linkInput = z
  .string()
  .trim()
  .refine((v) => {
    try {
      const url = new URL(v);
      return url.protocol === 'https:' || url.protocol === 'http:';
    } catch {
      return false;
    }
  }, 'a link is an http(s) URL');

/** A tweet, list or community given by id or by its full URL. */
export const idOrLinkInput = z.union([numericIdInput, linkInput]);

/**
 * A cursor as the previous page gave it, sent back verbatim. The reference types three request
 * cursors as int64 (followers, follows, list-members); a safe integer is accepted for those and
 * sent as its decimal string, which is what a query string carries anyway.
 */
export const cursorInput = z
  .union([
    z.string().min(1, 'a cursor is a non-empty string'),
    z
      .number()
      .refine((n) => Number.isSafeInteger(n) && n >= 0, 'a numeric cursor is a safe non-negative integer')
      .transform((n) => String(n)),
  ])
  .optional();

export const queryInput = z
  .string()
  .trim()
  .min(1, 'the query is empty')
  .max(2000, 'the query is longer than 2000 characters');

export const orderInput = z.enum(['latest', 'popular']);

export const dateInput = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'a date is YYYY-MM-DD')
  .refine((v) => {
    // 2026-13-01 is an invalid Date, whose toISOString() throws: refuse it as not a date instead.
    const d = new Date(`${v}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(v);
  }, 'not a calendar date');

export const countInput = z.number().int().nonnegative();

/** A user named by exactly one of userId, username, userLink (v3 parameter names). */
export const userRefShape = {
  userId: userIdInput.optional(),
  username: handleInput.optional(),
  userLink: linkInput.optional(),
};

export function exactlyOneUser(v: { userId?: string; username?: string; userLink?: string }): boolean {
  return [v.userId, v.username, v.userLink].filter((x) => x !== undefined).length === 1;
}

export const userRefInput = z
  .object(userRefShape)
  .strict()
  .refine(exactlyOneUser, 'give exactly one of userId, username, userLink');

export const pagedUserInput = z
  .object({ ...userRefShape, cursor: cursorInput })
  .strict()
  .refine(exactlyOneUser, 'give exactly one of userId, username, userLink');

/** 1..100 tweet ids or links for the bulk lookups. */
export const bulkTweetsInput = z
  .array(idOrLinkInput)
  .min(1, 'give at least one tweet')
  .max(100, 'at most 100 tweets per request');

/** Parses request parameters or throws InputError naming the endpoint and what is wrong. */
export function validateInput<S extends z.ZodType>(schema: S, value: unknown, endpoint: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const what = parsed.error.issues
    .slice(0, 3)
    .map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message))
    .join('; ');
  throw new InputError(`invalid parameters for ${endpoint}: ${what}`, { cause: parsed.error });
}

/** Drops undefined fields so a JSON body or query carries only what was given. */
export function defined<T extends Record<string, unknown>>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}
