/**
 * Every value a person types on the command line, validated before anything is enqueued.
 * Each parser returns a typed value or throws an InputError whose message is ONE line naming the
 * option and what was expected, e.g. `--since: expected a date YYYY-MM-DD, got "2026-02-30"`.
 * Ids stay decimal strings end to end: 19-digit ids do not survive a JavaScript number.
 */
import { z } from 'zod';
import { InputError } from '../errors.ts';
import { tweetLinkOf } from '../api-client/input.ts';
import { isCanonicalId } from '../api-client/schemas/common.ts';
import { jobIdSchema as storeJobIdSchema } from '../store/job-id.ts';

const HANDLE = /^[A-Za-z0-9_]{1,15}$/;
const HOSTS = new Set(['x.com', 'www.x.com', 'mobile.x.com', 'twitter.com', 'www.twitter.com', 'mobile.twitter.com']);
/** First path segments of x.com that are pages, not profiles (all of them are valid handles). */
const RESERVED = new Set([
  'i', 'home', 'search', 'explore', 'notifications', 'messages', 'settings', 'compose', 'login',
  'logout', 'signup', 'tos', 'privacy', 'hashtag', 'intent', 'share', 'account', 'jobs', 'about',
]);
const PROFILE_TABS = new Set(['with_replies', 'media', 'likes', 'highlights', 'followers', 'following', 'verified_followers']);

const quote = (raw: string): string => JSON.stringify(raw.length > 80 ? `${raw.slice(0, 77)}...` : raw);

/** Runs a schema; on failure throws `<option>: <first issue>, got "<raw>"` (one line). */
function parseWith<T extends z.ZodType>(schema: T, raw: string, option: string): z.output<T> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  throw new InputError(`${option}: ${firstIssue(result.error)}, got ${quote(raw)}`, { cause: result.error });
}

function firstIssue(error: z.ZodError): string {
  return (error.issues[0]?.message ?? z.prettifyError(error)).replace(/\s*\n\s*/g, '; ');
}

/** Splits an x.com / twitter.com address into path segments; null when it is not one. */
function xPath(raw: string): { segments: string[] } | null {
  if (!/^https?:\/\//i.test(raw)) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (!HOSTS.has(url.hostname.toLowerCase()) || url.port || url.username || url.password) return null;
  return { segments: url.pathname.split('/').filter((p) => p.length > 0) };
}

type Ctx = z.core.$RefinementCtx<string>;
const issue = (ctx: Ctx, message: string): never => {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER as never;
};

export const handleSchema = z
  .string()
  .trim()
  .regex(/^@?[A-Za-z0-9_]{1,15}$/, 'expected a handle of 1 to 15 letters, digits or _ (an optional leading @)')
  .transform((s) => s.replace(/^@/, ''));

const USER_EXPECTED = 'expected a handle (@jack), a numeric user id or a profile URL like https://x.com/jack';
export const userRefSchema = z
  .string()
  .trim()
  .transform((s, ctx): { kind: 'handle' | 'id' | 'url'; value: string; handle?: string; url?: string } => {
    // A bare number is an id; a numeric handle is written with its @.
    if (/^[0-9]+$/.test(s)) {
      return isCanonicalId(s) ? { kind: 'id', value: s } : issue(ctx, 'expected a user id of at most 19 digits without leading zeros (a positive int64)');
    }
    const handle = s.replace(/^@/, '');
    if (HANDLE.test(handle)) return { kind: 'handle', value: handle, handle };
    const path = xPath(s);
    if (!path) return issue(ctx, USER_EXPECTED);
    const [first, tab, ...rest] = path.segments;
    if (first === undefined) return issue(ctx, 'expected a profile URL with a handle, like https://x.com/jack');
    if (RESERVED.has(first.toLowerCase())) return issue(ctx, `expected a profile URL, and /${first} is not a profile`);
    if (!HANDLE.test(first) || rest.length > 0 || (tab !== undefined && !PROFILE_TABS.has(tab))) {
      return issue(ctx, USER_EXPECTED);
    }
    return { kind: 'url', value: first, handle: first, url: `https://x.com/${first}` };
  });
export type UserRef = z.output<typeof userRefSchema>;

const TWEET_EXPECTED = 'expected a tweet id or a link like https://x.com/jack/status/20';
export const tweetRefSchema = z
  .string()
  .trim()
  .transform((s, ctx): { id: string; url?: string } => {
    if (/^[0-9]+$/.test(s)) {
      return isCanonicalId(s) ? { id: s } : issue(ctx, 'expected a tweet id of at most 19 digits without leading zeros (a positive int64)');
    }
    const path = xPath(s);
    if (!path) return issue(ctx, TWEET_EXPECTED);
    const seg = path.segments;
    // /<handle>/status/<id>[/photo/1…] and the handle-less /i/web/status/<id>
    const at = seg[0] === 'i' && seg[1] === 'web' ? 1 : 0;
    const who = seg[at];
    const id = seg[at + 2];
    if (who === undefined || !HANDLE.test(who) || !/^status(es)?$/.test(seg[at + 1] ?? '') || id === undefined) {
      return issue(ctx, TWEET_EXPECTED);
    }
    if (!isCanonicalId(id)) return issue(ctx, 'expected a tweet link whose id has at most 19 digits without leading zeros (a positive int64)');
    return { id, url: at === 1 ? tweetLinkOf(id) : `https://x.com/${who}/status/${id}` };
  });
export type TweetRef = z.output<typeof tweetRefSchema>;

/** `<id>` or `https://x.com/i/<section>/<id>[/members…]` for lists and communities. */
function sectionRefSchema(section: 'lists' | 'communities', noun: string) {
  const expected = `expected a ${noun} id or a link like https://x.com/i/${section}/1234567890`;
  return z
    .string()
    .trim()
    .transform((s, ctx): { id: string; url?: string } => {
      if (isCanonicalId(s)) return { id: s };
      const seg = xPath(s)?.segments;
      const id = seg?.[2];
      if (!seg || seg[0] !== 'i' || seg[1] !== section || id === undefined || seg.length > 4 || !isCanonicalId(id)) {
        return issue(ctx, expected);
      }
      return { id, url: `https://x.com/i/${section}/${id}` };
    });
}
export const listRefSchema = sectionRefSchema('lists', 'list');
export const communityRefSchema = sectionRefSchema('communities', 'community');
export type ListRef = z.output<typeof listRefSchema>;
export type CommunityRef = z.output<typeof communityRefSchema>;

export const dateSchema = z
  .string()
  .trim()
  .transform((s, ctx): { value: string; date: Date } => {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
    if (!m) return issue(ctx, 'expected a date YYYY-MM-DD');
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    const date = new Date(Date.UTC(y, mo - 1, d));
    // Date.UTC rolls 2026-02-30 over to March; a real calendar date survives the round trip.
    if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) {
      return issue(ctx, 'expected a date YYYY-MM-DD that exists in the calendar');
    }
    return { value: s, date };
  });
export type ParsedDate = z.output<typeof dateSchema>;

function intSchema(min: 0 | 1, max: number) {
  const expected = `expected ${min === 1 ? 'a positive' : 'a non-negative'} integer${
    max < Number.MAX_SAFE_INTEGER ? ` of at most ${max}` : ''
  }`;
  return z
    .string()
    .trim()
    .regex(/^[0-9]+$/, `${expected} (digits only)`)
    .transform((s, ctx) => {
      const n = Number(s);
      return n < min || n > max ? issue(ctx, expected) : n;
    });
}

export const orderSchema = z.string().trim().toLowerCase().pipe(z.enum(['latest', 'popular'], 'expected latest or popular'));
export const formatSchema = z.string().trim().toLowerCase().pipe(z.enum(['csv', 'jsonl'], 'expected csv or jsonl'));
export type SearchOrder = z.output<typeof orderSchema>;
export type ExportFormat = z.output<typeof formatSchema>;

/**
 * `30s`, `5m`, `24h`, `7d`, `1h30m`: a span in whole seconds within [minS, maxS]; each message
 * names what was expected (a malformed span, one too short, one too long).
 */
export function durationSchema(bounds: { minS: number; maxS: number; malformed: string; tooShort: string; tooLong: string }) {
  return z
    .string()
    .trim()
    .toLowerCase()
    .transform((s, ctx) => {
      const m = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(s);
      if (!m || s === '') return issue(ctx, bounds.malformed);
      const seconds = Number(m[1] ?? 0) * 86_400 + Number(m[2] ?? 0) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
      if (seconds < bounds.minS) return issue(ctx, bounds.tooShort);
      if (seconds > bounds.maxS) return issue(ctx, bounds.tooLong);
      return seconds;
    });
}

export const everySchema = durationSchema({
  minS: 60,
  maxS: 30 * 86_400,
  malformed: 'expected a duration like 5m, 90s, 1h, 2d or 1h30m',
  tooShort: 'expected at least 1m (each pass costs at least one request, so polling more often than once a minute wastes quota)',
  tooLong: 'expected at most 30d',
});

const MAX_QUERY_CHARS = 512;
/** The service documents "about 22 to 23 operators at most per query". */
const MAX_QUERY_TERMS = 23;

/**
 * Terms of a search query outside quoted phrases: a phrase (with any operator glued to it) counts
 * once, parentheses group, and `OR` only joins. Returns an error reason for broken nesting.
 */
export function splitQueryTerms(query: string): { terms: string[]; error?: string } {
  const terms: string[] = [];
  let depth = 0;
  let start = -1;
  let inQuote = false;
  const end = (i: number) => {
    if (start >= 0 && query.slice(start, i) !== 'OR') terms.push(query.slice(start, i));
    start = -1;
  };
  for (let i = 0; i < query.length; i++) {
    const ch = query.charAt(i);
    if (inQuote) {
      if (ch === '"') inQuote = false;
      continue;
    }
    if (ch === '(' || ch === ')' || /\s/.test(ch)) {
      end(i);
      if (ch === '(') depth++;
      if (ch === ')' && --depth < 0) return { terms, error: `expected balanced parentheses, but ")" at ${i + 1} closes nothing` };
      continue;
    }
    if (ch === '"') inQuote = true;
    if (start < 0) start = i;
  }
  end(query.length);
  if (inQuote) return { terms, error: 'expected balanced double quotes, but a phrase is never closed' };
  if (depth > 0) return { terms, error: `expected balanced parentheses, but ${depth} "(" left unclosed` };
  return { terms };
}

export const searchQuerySchema = z
  .string()
  .trim()
  .min(1, 'expected a non-empty search query')
  .max(MAX_QUERY_CHARS, `expected a search query of at most ${MAX_QUERY_CHARS} characters`)
  .superRefine((q, ctx) => {
    const { terms, error } = splitQueryTerms(q);
    if (error) ctx.addIssue({ code: 'custom', message: error });
    else if (terms.length === 0) ctx.addIssue({ code: 'custom', message: 'expected at least one search term' });
    else if (terms.length > MAX_QUERY_TERMS) {
      ctx.addIssue({ code: 'custom', message: `expected at most ${MAX_QUERY_TERMS} terms and operators (the service's limit), found ${terms.length}` });
    }
  });

export const jobIdSchema = z.string().trim().pipe(storeJobIdSchema);

export const parseHandle = (s: string, option = '<handle>'): string => parseWith(handleSchema, s, option);
export const parseUserRef = (s: string, option = '<user>'): UserRef => parseWith(userRefSchema, s, option);
export const parseTweetRef = (s: string, option = '<tweet>'): TweetRef => parseWith(tweetRefSchema, s, option);
export const parseListRef = (s: string, option = '<list>'): ListRef => parseWith(listRefSchema, s, option);
export const parseCommunityRef = (s: string, option = '<community>'): CommunityRef =>
  parseWith(communityRefSchema, s, option);
export const parseDate = (s: string, option: string): ParsedDate => parseWith(dateSchema, s, option);
export const parseEvery = (s: string, option = '--every'): number => parseWith(everySchema, s, option);
export const parseOrder = (s: string, option = '--order'): SearchOrder => parseWith(orderSchema, s, option);
export const parseFormat = (s: string, option = '--format'): ExportFormat => parseWith(formatSchema, s, option);
export const parseSearchQuery = (s: string, option = '<query>'): string => parseWith(searchQuerySchema, s, option);
export const parseJobId = (s: string, option = '<job-id>'): string => parseWith(jobIdSchema, s, option);

export function parsePositiveInt(s: string, option: string, opts: { max?: number } = {}): number {
  return parseWith(intSchema(1, Math.min(opts.max ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)), s, option);
}
export function parseNonNegativeInt(s: string, option: string, opts: { max?: number } = {}): number {
  return parseWith(intSchema(0, Math.min(opts.max ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)), s, option);
}
export const parseConcurrency = (s: string, option = '--concurrency'): number => parsePositiveInt(s, option, { max: 256 });

/**
 * The first whole day whose tweets carry their creation time in their ids (the id epoch is
 * 2010-11-04T01:42:54.657Z): date ranges are cut into `since_id:`/`max_id:` bounds, and an earlier
 * date has no id (it would come out negative, and the service refuses the query).
 */
export const FIRST_ID_DAY = '2010-11-05';
const DAY_MS = 86_400_000;

/**
 * A `--since`/`--until` date harvest can turn into tweet ids. A `--since` may be tomorrow (in UTC:
 * a user east of UTC may already live in it) but no later: a later one would select nothing yet,
 * and far ahead its id would not fit in 64 bits.
 */
export function parseRangeDate(s: string, option: '--since' | '--until', now = Date.now()): ParsedDate {
  const d = parseDate(s, option);
  if (d.value < FIRST_ID_DAY) {
    throw new InputError(`${option} ${d.value} is before ${FIRST_ID_DAY}: harvest cuts date ranges by tweet id, and only tweets from 2010-11-04 on carry their time in it`);
  }
  if (option === '--since' && d.date.getTime() > now + DAY_MS) throw new InputError(`${option} ${d.value} is in the future: there is nothing to harvest yet`);
  return d;
}

/** `--since` is inclusive and `--until` exclusive, so equal dates would select nothing. */
export function parseDateRange(since?: string, until?: string): { since?: ParsedDate; until?: ParsedDate } {
  const from = since === undefined ? undefined : parseRangeDate(since, '--since');
  const to = until === undefined ? undefined : parseRangeDate(until, '--until');
  if (from && to && from.date >= to.date) {
    throw new InputError(`--since ${from.value} must be before --until ${to.value} (--until is exclusive)`);
  }
  return { since: from, until: to };
}

const TIME_OPERATOR = /^-?(since|until|since_time|until_time):/i;
/** --since/--until and time operators in the query would fight over the window the job splits. */
export function assertNoTimeOperators(query: string, option = '<query>'): void {
  const found = splitQueryTerms(query).terms.find((t) => TIME_OPERATOR.test(t.replace(/^\(+/, '')));
  if (found !== undefined) {
    throw new InputError(
      `${option}: contains the time operator ${quote(found)}; use either --since/--until or since:/until: in the query, not both`,
    );
  }
}

export interface HydrateLines {
  ids: string[];
  errors: Array<{ line: number; text: string; reason: string }>;
}

/** One tweet id or link per line; blank lines and `#` comments are skipped; ids deduped in order. */
export function parseHydrateLines(text: string): HydrateLines {
  const seen = new Set<string>();
  const errors: HydrateLines['errors'] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n|\r/)
    .forEach((rawLine, index) => {
      const line = rawLine.replace(/(^|\s)#.*$/, '').trim();
      if (line === '') return;
      const result = tweetRefSchema.safeParse(line);
      if (result.success) seen.add(result.data.id);
      else errors.push({ line: index + 1, text: line, reason: firstIssue(result.error) });
    });
  return { ids: [...seen], errors };
}
