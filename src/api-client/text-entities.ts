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
const TRAILING_PUNCTUATION = /[.,;:!?)\]}'"…]+$/u;

/** Media kinds the service uses in an entity's `type`. */
const MEDIA_TYPES = new Set(['photo', 'video', 'animated_gif', 'gif', 'image', 'media']);

export function isMediaEntity(entity: TweetEntity): boolean {
  return entity.type !== null && MEDIA_TYPES.has(entity.type.toLowerCase());
}

function unique(values: Iterable<string>): string[] {
  return [...new Set(values)];
}

function matches(text: string, pattern: RegExp): string[] {
  return [...text.matchAll(pattern)].map((m) => m[1] ?? '').filter((v) => v.length > 0);
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
  return unique(matches(text, HASHTAG).filter((tag) => !/^\d+$/.test(tag)).map((tag) => tag.toLowerCase()));
}

/** Upper-cased, without $. */
export function extractCashtags(text: string): string[] {
  if (!text.includes('$')) return [];
  return unique(matches(text, CASHTAG).map((tag) => tag.toUpperCase()));
}

/** Lower-cased handles, without @. */
export function extractMentions(text: string): string[] {
  if (!text.includes('@')) return [];
  return unique(matches(text, MENTION).map((handle) => handle.toLowerCase()));
}

export function extractUrls(text: string): string[] {
  if (!text.includes('://')) return [];
  return unique([...text.matchAll(URL_IN_TEXT)].map((m) => m[0].replace(TRAILING_PUNCTUATION, '')));
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
  const fromEntities = entities.filter((e) => !isMediaEntity(e) && e.link).map((e) => e.link as string);
  return unique([...extractUrls(text), ...fromEntities]).filter((url) => !media.has(url));
}
