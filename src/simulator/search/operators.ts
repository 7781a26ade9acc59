/**
 * `name:value` operators and the `#`, `$`, `@` shorthands, parsed into typed nodes. Values are
 * validated here so a malformed operator is a 400 before any scan starts.
 */
import { FILTER_NAMES, type FilterName, type QueryNode } from './ast.ts';
import { SearchQueryError } from './errors.ts';

const HANDLE = /^[A-Za-z0-9_]{1,50}$/u;
const DECIMAL_ID = /^[0-9]{1,20}$/u;
const COUNT = /^[0-9]{1,9}$/u;
const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:_(\d{2}):(\d{2}):(\d{2})_UTC)?$/u;
const DURATION = /^(\d{1,9})([dhms])$/u;
const LANG = /^[a-z]{2,3}(?:-[a-z0-9]{2,8})?$/u;
const HASHTAG = /^[\p{L}\p{N}\p{M}_]+$/u;
const CASHTAG = /^[A-Za-z][A-Za-z0-9_.]{0,14}$/u;
const DOMAIN = /^[a-z0-9_.\-/]+$/u;
const UNIT_SECONDS = { d: 86_400, h: 3_600, m: 60, s: 1 } as const;
/** Ids above 2^64 cannot be tweet ids; keeps BigInt parsing of user input bounded. */
const MAX_ID = (1n << 64n) - 1n;

/** card_name values of the spec; the poll ones and animated_gif are modelled. */
export const CARD_NAMES = [
  'poll2choice_text_only',
  'poll3choice_text_only',
  'poll4choice_text_only',
  'poll2choice_image',
  'animated_gif',
  'audio',
  'player',
  'summary',
  'summary_large_image',
  'promo_website',
  'promo_image_convo',
  'promo_video_convo',
] as const;

/** Operators the platform supports only in its own UI; the service cannot answer them. */
const UI_ONLY = new Set(['filter:follows', 'near:me']);

type OperatorParser = (value: string, pos: number) => QueryNode;

function fail(message: string, pos: number): never {
  throw new SearchQueryError(message, pos);
}

function handle(op: string): OperatorParser {
  return (value, pos) => {
    const h = value.startsWith('@') ? value.slice(1) : value;
    if (!HANDLE.test(h)) fail(`${op}: needs a handle (letters, digits, underscore), got '${value}'`, pos);
    return op === 'from' ? { kind: 'from', handle: h } : { kind: 'to', handle: h };
  };
}

function decimalId(op: string, value: string, pos: number): string {
  if (!DECIMAL_ID.test(value) || BigInt(value) > MAX_ID) fail(`${op}: needs a decimal id, got '${value}'`, pos);
  return BigInt(value).toString();
}

function count(op: string, value: string, pos: number): number {
  if (!COUNT.test(value)) fail(`${op}: needs a non-negative whole number, got '${value}'`, pos);
  return Number(value);
}

/** since:/until: dates, midnight UTC or the _HH:MM:SS_UTC form; rejects impossible dates. */
export function parseDateValue(op: string, value: string, pos: number): number {
  const m = DATE.exec(value);
  if (m === null) fail(`${op}: needs YYYY-MM-DD or YYYY-MM-DD_HH:MM:SS_UTC, got '${value}'`, pos);
  const parts = m.slice(1).map((part) => Number(part ?? '0'));
  const [year, month, day, hour, minute, second] = parts as [number, number, number, number, number, number];
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const back = new Date(ms);
  if (
    month < 1 ||
    month > 12 ||
    back.getUTCFullYear() !== year ||
    back.getUTCMonth() !== month - 1 ||
    back.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    fail(`${op}: '${value}' is not a valid date`, pos);
  }
  return ms;
}

function unixSeconds(op: string, value: string, pos: number): number {
  if (!/^[0-9]{1,11}$/u.test(value)) fail(`${op}: needs unix seconds, got '${value}'`, pos);
  return Number(value) * 1000;
}

function filter(value: string, pos: number): QueryNode {
  const name = value.toLowerCase();
  if (name === 'follows') fail('filter:follows works only in the platform UI, not through the service', pos);
  if (!(FILTER_NAMES as readonly string[]).includes(name)) fail(`filter:${value} is not a known filter`, pos);
  return { kind: 'filter', filter: name as FilterName };
}

function domain(op: string, value: string, pos: number): string {
  const lower = value.toLowerCase();
  if (!DOMAIN.test(lower)) fail(`${op}: needs a domain, got '${value}'`, pos);
  return lower;
}

const PARSERS: Readonly<Record<string, OperatorParser>> = {
  from: handle('from'),
  to: handle('to'),
  list: (v, p) => ({ kind: 'list', listId: decimalId('list', v, p) }),
  filter,
  include: (v, p) => {
    if (v.toLowerCase() !== 'nativeretweets') fail(`include:${v} is not supported (only include:nativeretweets)`, p);
    return { kind: 'includeNativeRetweets' };
  },
  min_faves: (v, p) => ({ kind: 'minCount', metric: 'faves', min: count('min_faves', v, p) }),
  min_retweets: (v, p) => ({ kind: 'minCount', metric: 'retweets', min: count('min_retweets', v, p) }),
  min_replies: (v, p) => ({ kind: 'minCount', metric: 'replies', min: count('min_replies', v, p) }),
  card_name: (v, p) => {
    const name = v.toLowerCase();
    if (!(CARD_NAMES as readonly string[]).includes(name)) fail(`card_name:${v} is not a known card name`, p);
    return { kind: 'card', name };
  },
  quoted_tweet_id: (v, p) => ({ kind: 'quotedTweetId', id: decimalId('quoted_tweet_id', v, p) }),
  quoted_user_id: (v, p) => ({ kind: 'quotedUserId', id: decimalId('quoted_user_id', v, p) }),
  conversation_id: (v, p) => ({ kind: 'conversationId', id: decimalId('conversation_id', v, p) }),
  lang: (v, p) => {
    const code = v.toLowerCase();
    if (!LANG.test(code)) fail(`lang: needs a language code such as en or und, got '${v}'`, p);
    return { kind: 'lang', code };
  },
  source: (v, p) => {
    if (v.trim() === '') fail('source: needs a client name', p);
    return { kind: 'source', client: v.replaceAll('_', ' ').toLowerCase() };
  },
  url: (v, p) => ({ kind: 'url', domain: domain('url', v, p) }),
  since: (v, p) => ({ kind: 'timeBound', side: 'since', ms: parseDateValue('since', v, p) }),
  until: (v, p) => ({ kind: 'timeBound', side: 'until', ms: parseDateValue('until', v, p) }),
  since_time: (v, p) => ({ kind: 'timeBound', side: 'since', ms: unixSeconds('since_time', v, p) }),
  until_time: (v, p) => ({ kind: 'timeBound', side: 'until', ms: unixSeconds('until_time', v, p) }),
  within_time: (v, p) => {
    const m = DURATION.exec(v);
    if (m === null) fail(`within_time: needs a number followed by d, h, m or s, got '${v}'`, p);
    const unit = m[2] as keyof typeof UNIT_SECONDS;
    return { kind: 'withinTime', seconds: Number(m[1]) * UNIT_SECONDS[unit] };
  },
  since_id: (v, p) => ({ kind: 'idBound', side: 'since', id: decimalId('since_id', v, p) }),
  max_id: (v, p) => ({ kind: 'idBound', side: 'max', id: decimalId('max_id', v, p) }),
  near: (v) => ({ kind: 'geo', operator: 'near', value: v }),
  within: (v, p) => {
    if (!/^\d+(?:\.\d+)?(?:km|mi)$/u.test(v)) fail(`within: needs a radius such as 10km or 5mi, got '${v}'`, p);
    return { kind: 'geo', operator: 'within', value: v };
  },
  geocode: (v, p) => {
    if (!/^-?\d+(?:\.\d+)?,-?\d+(?:\.\d+)?,\d+(?:\.\d+)?(?:km|mi)$/u.test(v)) {
      fail(`geocode: needs latitude,longitude,radius such as 37.78,-122.39,1km, got '${v}'`, p);
    }
    return { kind: 'geo', operator: 'geocode', value: v };
  },
  place: (v, p) => {
    if (!/^[0-9a-f]{1,32}$/iu.test(v)) fail(`place: needs a place id, got '${v}'`, p);
    return { kind: 'geo', operator: 'place', value: v };
  },
  card_domain: (v, p) => ({ kind: 'cardLink', operator: 'card_domain', domain: domain('card_domain', v, p) }),
  card_url: (v, p) => ({ kind: 'cardLink', operator: 'card_url', domain: domain('card_url', v, p) }),
};

const OPERATOR = /^([A-Za-z_]+):(.*)$/su;

/**
 * Parses one term (a token that is not a phrase or parenthesis). Returns null when the term is a
 * plain word, for the caller to treat as text. A `name:` prefix that is not an operator is an
 * error rather than text, so a typo such as `form:alice` is reported instead of silently
 * matching nothing; `http:`/`https:` prefixes stay words.
 */
export function parseOperatorTerm(text: string, pos: number): QueryNode | null {
  if (UI_ONLY.has(text.toLowerCase())) fail(`${text} works only in the platform UI, not through the service`, pos);
  const m = OPERATOR.exec(text);
  if (m !== null) {
    const name = (m[1] as string).toLowerCase();
    const value = m[2] as string;
    if (name === 'http' || name === 'https') return null;
    const parser = PARSERS[name];
    if (parser === undefined) fail(`unknown operator '${name}:'`, pos);
    if (value === '') fail(`${name}: needs a value`, pos);
    return parser(value, pos);
  }
  if (text.startsWith('#')) {
    const tag = text.slice(1);
    if (!HASHTAG.test(tag)) fail(`'${text}' is not a valid hashtag`, pos);
    return { kind: 'hashtag', tag: tag.toLowerCase() };
  }
  if (text.startsWith('$') && CASHTAG.test(text.slice(1))) {
    return { kind: 'cashtag', tag: text.slice(1).toUpperCase() };
  }
  if (text.startsWith('@')) {
    const h = text.slice(1);
    if (!HANDLE.test(h)) fail(`'${text}' is not a valid @handle`, pos);
    return { kind: 'mention', handle: h };
  }
  return null;
}
