/**
 * Hashtags, cashtags, mentions and URLs, taken from the tweet text: the service's entities carry
 * only media and links. The rules follow the platform's: a tag starts after a non-word character,
 * a hashtag is not all digits, a handle is 1–15 of [A-Za-z0-9_].
 */
import type { TweetEntity } from './canonical.ts';

const HASHTAG = /(?:^|[^\p{L}\p{N}_&#])[#＃]([\p{L}\p{M}\p{N}_]{1,139})/gu;
const CASHTAG = /(?:^|[^\p{L}\p{N}_$])\$([A-Za-z]{1,6}(?:[._][A-Za-z]{1,2})?)(?![\p{L}\p{N}_])/gu;
const MENTION = /(?:^|[^A-Za-z0-9_@!#$%&*])@([A-Za-z0-9_]{1,15})(?![A-Za-z0-9_@])/g;
const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"]+/gi;
/** Characters a link in running text does not end with (a closing parenthesis only when unmatched). */
const TRAILING_PUNCTUATION = new Set([...'.,;:!?)]}\'"…']);

/** Media kinds the service uses in an entity's `type`. */
const MEDIA_TYPES = new Set(['photo', 'video', 'animated_gif', 'gif', 'image', 'media']);

export function isMediaEntity(entity: TweetEntity): boolean {
  return entity.type !== null && MEDIA_TYPES.has(entity.type.toLowerCase());
}

function unique(values: Iterable<string>): string[] {
  return [...new Set(values)];
}

// The callbacks below live at module scope: a closure made per call loses its optimized code at
// each major GC (see plainColumns in src/store/db.ts), and these run for every tweet.
const ALL_DIGITS = /^\d+$/;
const group1 = (m: RegExpMatchArray): string => m[1] ?? '';
const nonEmpty = (v: string): boolean => v.length > 0;
const notAllDigits = (tag: string): boolean => !ALL_DIGITS.test(tag);
const lower = (s: string): string => s.toLowerCase();
const upper = (s: string): string => s.toUpperCase();

/** The link without the punctuation of the sentence around it; `…/Mercury_(planet)` keeps its `)`. */
function trimmedUrl(m: RegExpMatchArray): string {
  let url = m[0];
  while (url.length > 0) {
    const last = url[url.length - 1]!;
    if (!TRAILING_PUNCTUATION.has(last)) break;
    if (last === ')' && countOf(url, '(') >= countOf(url, ')')) break;
    url = url.slice(0, -1);
  }
  return url;
}

function countOf(text: string, char: string): number {
  let n = 0;
  for (let at = text.indexOf(char); at !== -1; at = text.indexOf(char, at + 1)) n++;
  return n;
}

/**
 * The text with its links blanked out, for the tag extractors: production sends links expanded
 * (`https://www.tiktok.com/@nasa/video/…`, `https://docs.example.org/#setup`), and their `@`, `#`
 * and `$` are parts of addresses, not mentions or tags.
 */
function withoutUrls(text: string): string {
  return text.includes('://') ? text.replace(URL_IN_TEXT, ' ') : text;
}

function matches(text: string, pattern: RegExp): string[] {
  return [...text.matchAll(pattern)].map(group1).filter(nonEmpty);
}

/*
 * Each extractor first asks whether the one character its pattern cannot match without is in the
 * text at all (#/＃, $, @, "://"): most tweets have no tags, and a scan for one character is far
 * cheaper than a Unicode regex walk plus the arrays matchAll, map, filter and Set build (~0.03 ms
 * a 20-tweet page, bench/cpu.ts). The answers are the same: without it the pattern cannot match.
 */

/** Lower-cased, without #. */
export function extractHashtags(text: string): string[] {
  if (!text.includes('#') && !text.includes('＃')) return [];
  return unique(matches(withoutUrls(text), HASHTAG).filter(notAllDigits).map(lower));
}

/** Upper-cased, without $. */
export function extractCashtags(text: string): string[] {
  if (!text.includes('$')) return [];
  return unique(matches(withoutUrls(text), CASHTAG).map(upper));
}

/** Lower-cased handles, without @. */
export function extractMentions(text: string): string[] {
  if (!text.includes('@')) return [];
  return unique(matches(withoutUrls(text), MENTION).map(lower));
}

export function extractUrls(text: string): string[] {
  if (!text.includes('://')) return [];
  return unique([...text.matchAll(URL_IN_TEXT)].map(trimmedUrl));
}

/**
 * The tweet's real links: URLs in the text plus links of non-media entities, minus the tweet's own
 * media addresses. Production appends each media item's address to `full_text` (a photo's link,
 * a video's file) and sends no url entities, so without the subtraction every photo would read as
 * a shared link.
 */
export function collectUrls(text: string, entities: readonly TweetEntity[]): string[] {
  if (entities.length === 0) return extractUrls(text);
  const media = new Set<string>();
  for (const e of entities) {
    if (!isMediaEntity(e)) continue;
    if (e.link) media.add(e.link);
    if (e.preview) media.add(e.preview);
  }
  const urls = new Set(extractUrls(text));
  for (const e of entities) if (!isMediaEntity(e) && e.link) urls.add(e.link);
  for (const url of media) urls.delete(url);
  return [...urls];
}
