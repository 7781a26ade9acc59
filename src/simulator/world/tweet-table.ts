import { tweetIdAt, type SimMedia, type TweetTable } from '../model.ts';
import { InputError } from '../../errors.ts';
import type { Lexicon } from './lexicon.ts';

/** One tweet to append; the generator reuses a single row object to stay allocation-free. */
export interface TweetRow {
  ms: number;
  author: number;
  /** Token ids from the lexicon; the text is their strings joined by single spaces. */
  tokens: ArrayLike<number>;
  tokenCount: number;
  lang: string;
  inReplyTo: number;
  quoted: number;
  retweeted: number;
  likes: number;
  retweets: number;
  replies: number;
  quotes: number;
  bookmarks: number;
  views: number;
  urls: readonly string[];
  media: readonly SimMedia[];
  source: string;
  flags: number;
}

const EMPTY: readonly never[] = Object.freeze([]);

type Column = BigInt64Array | Float64Array | Int32Array | Uint32Array | Uint8Array;

/** Amortised doubling, so appends (test control) stay O(1) on average. */
function grow<T extends Column>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  const Ctor = array.constructor as new (n: number) => T;
  const next = new Ctor(Math.max(needed, array.length * 2, 16));
  (next as unknown as { set(a: T): void }).set(array);
  return next;
}

function has(pool: Uint32Array | Int32Array, from: number, to: number, value: number): boolean {
  for (let k = from; k < to; k++) if (pool[k] === value) return true;
  return false;
}

function checkRef(i: number, ref: number): void {
  if (ref >= i || ref < -1) throw new InputError(`tweet ${i} references ${ref}, which is not an earlier tweet`);
}

/**
 * The columnar tweet table: one typed array per scalar column, and pooled variable-length
 * columns (tokens, entities, urls, media) addressed by per-tweet offsets, so a million tweets
 * cost about 150 MB and no per-tweet JS object. Rows are appended in time order only.
 */
export class ColumnarTweetTable implements TweetTable {
  readonly #lex: Lexicon;
  #count = 0;
  #ids = new BigInt64Array(0);
  #ms = new Float64Array(0);
  #author = new Int32Array(0);
  #reply = new Int32Array(0);
  #conv = new Int32Array(0);
  #quoted = new Int32Array(0);
  #retweeted = new Int32Array(0);
  #likes = new Int32Array(0);
  #retweets = new Int32Array(0);
  #replies = new Int32Array(0);
  #quotes = new Int32Array(0);
  #bookmarks = new Int32Array(0);
  #views = new Float64Array(0);
  #lang = new Uint8Array(0);
  #source = new Uint8Array(0);
  #flags = new Uint8Array(0);
  // Offsets have count+1 entries: row i spans [off[i], off[i+1]).
  #tokOff = new Uint32Array(1);
  #tokPool = new Uint32Array(0);
  #tagOff = new Uint32Array(1);
  #tagPool = new Uint32Array(0);
  #cashOff = new Uint32Array(1);
  #cashPool = new Uint32Array(0);
  #menOff = new Uint32Array(1);
  #menPool = new Int32Array(0);
  #urlOff = new Uint32Array(1);
  readonly #urlPool: string[] = [];
  #mediaOff = new Uint32Array(1);
  readonly #mediaPool: SimMedia[] = [];
  readonly #langs: string[] = [];
  readonly #sources: string[] = [];
  #lastMs = -Infinity;
  #lastSeq = 0;

  constructor(lexicon: Lexicon, initialCapacity = 1024) {
    this.#lex = lexicon;
    this.#reserve(initialCapacity);
  }

  get count(): number {
    return this.#count;
  }

  get newestMs(): number {
    return this.#lastMs;
  }

  #reserve(rows: number): void {
    if (rows <= this.#ids.length) return;
    const n = Math.max(rows, this.#ids.length * 2);
    this.#ids = grow(this.#ids, n);
    this.#ms = grow(this.#ms, n);
    this.#author = grow(this.#author, n);
    this.#reply = grow(this.#reply, n);
    this.#conv = grow(this.#conv, n);
    this.#quoted = grow(this.#quoted, n);
    this.#retweeted = grow(this.#retweeted, n);
    this.#likes = grow(this.#likes, n);
    this.#retweets = grow(this.#retweets, n);
    this.#replies = grow(this.#replies, n);
    this.#quotes = grow(this.#quotes, n);
    this.#bookmarks = grow(this.#bookmarks, n);
    this.#views = grow(this.#views, n);
    this.#lang = grow(this.#lang, n);
    this.#source = grow(this.#source, n);
    this.#flags = grow(this.#flags, n);
    this.#tokOff = grow(this.#tokOff, n + 1);
    this.#tagOff = grow(this.#tagOff, n + 1);
    this.#cashOff = grow(this.#cashOff, n + 1);
    this.#menOff = grow(this.#menOff, n + 1);
    this.#urlOff = grow(this.#urlOff, n + 1);
    this.#mediaOff = grow(this.#mediaOff, n + 1);
  }

  #small(table: string[], value: string, what: string): number {
    let k = table.indexOf(value);
    if (k < 0) {
      if (table.length >= 255) throw new InputError(`too many distinct tweet ${what} values`);
      k = table.push(value) - 1;
    }
    return k;
  }

  /** Appends a row; its time must not precede the newest row. Returns the new index. */
  append(row: TweetRow): number {
    const i = this.#count;
    if (!(row.ms >= this.#lastMs)) throw new InputError(`tweet at ${row.ms} precedes the newest at ${this.#lastMs}`);
    checkRef(i, row.inReplyTo);
    checkRef(i, row.quoted);
    checkRef(i, row.retweeted);
    this.#reserve(i + 1);
    this.#lastSeq = row.ms === this.#lastMs ? this.#lastSeq + 1 : 0;
    this.#lastMs = row.ms;
    this.#ids[i] = tweetIdAt(row.ms, this.#lastSeq);
    this.#ms[i] = row.ms;
    this.#author[i] = row.author;
    this.#reply[i] = row.inReplyTo;
    this.#conv[i] = row.inReplyTo >= 0 ? (this.#conv[row.inReplyTo] ?? i) : i;
    this.#quoted[i] = row.quoted;
    this.#retweeted[i] = row.retweeted;
    this.#likes[i] = row.likes;
    this.#retweets[i] = row.retweets;
    this.#replies[i] = row.replies;
    this.#quotes[i] = row.quotes;
    this.#bookmarks[i] = row.bookmarks;
    this.#views[i] = row.views;
    this.#lang[i] = this.#small(this.#langs, row.lang, 'lang');
    this.#source[i] = this.#small(this.#sources, row.source, 'source');
    this.#flags[i] = row.flags;
    this.#appendTokens(i, row);
    this.#urlPool.push(...row.urls);
    this.#urlOff[i + 1] = this.#urlPool.length;
    this.#mediaPool.push(...row.media);
    this.#mediaOff[i + 1] = this.#mediaPool.length;
    this.#count = i + 1;
    return i;
  }

  #appendTokens(i: number, row: TweetRow): void {
    const tokStart = this.#tokOff[i] ?? 0;
    this.#tokPool = grow(this.#tokPool, tokStart + row.tokenCount);
    let tags = this.#tagOff[i] ?? 0;
    let cash = this.#cashOff[i] ?? 0;
    let men = this.#menOff[i] ?? 0;
    const tagStart = tags;
    const cashStart = cash;
    const menStart = men;
    for (let k = 0; k < row.tokenCount; k++) {
      const tok = row.tokens[k] ?? 0;
      this.#tokPool[tokStart + k] = tok;
      const ent = this.#lex.entitiesOf(tok);
      if (ent === null) continue;
      // Each entity is listed once per tweet, in order of first appearance.
      for (const h of ent.hashtags) {
        if (has(this.#tagPool, tagStart, tags, h)) continue;
        this.#tagPool = grow(this.#tagPool, tags + 1);
        this.#tagPool[tags++] = h;
      }
      for (const c of ent.cashtags) {
        if (has(this.#cashPool, cashStart, cash, c)) continue;
        this.#cashPool = grow(this.#cashPool, cash + 1);
        this.#cashPool[cash++] = c;
      }
      for (const u of ent.mentions) {
        if (has(this.#menPool, menStart, men, u)) continue;
        this.#menPool = grow(this.#menPool, men + 1);
        this.#menPool[men++] = u;
      }
    }
    this.#tokOff[i + 1] = tokStart + row.tokenCount;
    this.#tagOff[i + 1] = tags;
    this.#cashOff[i + 1] = cash;
    this.#menOff[i + 1] = men;
  }

  /** Token ids of a row's text (a view into the pool: copy before appending). */
  tokensOf(i: number): Uint32Array {
    return this.#tokPool.subarray(this.#tokOff[i] ?? 0, this.#tokOff[i + 1] ?? 0);
  }

  /** Adds to a tweet's engagement counters when a reply, quote or retweet of it is appended. */
  bump(i: number, column: 'replies' | 'quotes' | 'retweets'): void {
    const col = column === 'replies' ? this.#replies : column === 'quotes' ? this.#quotes : this.#retweets;
    col[i] = (col[i] ?? 0) + 1;
  }

  id(i: number): bigint {
    return this.#ids[i] ?? -1n;
  }
  idString(i: number): string {
    return (this.#ids[i] ?? -1n).toString();
  }
  createdAtMs(i: number): number {
    return this.#ms[i] ?? NaN;
  }
  author(i: number): number {
    return this.#author[i] ?? -1;
  }
  text(i: number): string {
    const start = this.#tokOff[i] ?? 0;
    const end = this.#tokOff[i + 1] ?? start;
    let out = '';
    for (let k = start; k < end; k++) {
      if (k > start) out += ' ';
      out += this.#lex.tokens.get(this.#tokPool[k] ?? 0);
    }
    return out;
  }
  lang(i: number): string {
    return this.#langs[this.#lang[i] ?? 0] ?? 'und';
  }
  inReplyTo(i: number): number {
    return this.#reply[i] ?? -1;
  }
  conversation(i: number): number {
    return this.#conv[i] ?? -1;
  }
  quoted(i: number): number {
    return this.#quoted[i] ?? -1;
  }
  retweeted(i: number): number {
    return this.#retweeted[i] ?? -1;
  }
  likes(i: number): number {
    return this.#likes[i] ?? 0;
  }
  retweets(i: number): number {
    return this.#retweets[i] ?? 0;
  }
  replies(i: number): number {
    return this.#replies[i] ?? 0;
  }
  quotes(i: number): number {
    return this.#quotes[i] ?? 0;
  }
  bookmarks(i: number): number {
    return this.#bookmarks[i] ?? 0;
  }
  views(i: number): number {
    return this.#views[i] ?? 0;
  }
  hashtags(i: number): readonly string[] {
    return this.#names(this.#tagPool, this.#tagOff, i);
  }
  cashtags(i: number): readonly string[] {
    return this.#names(this.#cashPool, this.#cashOff, i);
  }
  #names(pool: Uint32Array, off: Uint32Array, i: number): readonly string[] {
    const start = off[i] ?? 0;
    const end = off[i + 1] ?? start;
    if (end <= start) return EMPTY;
    const out: string[] = [];
    for (let k = start; k < end; k++) out.push(this.#lex.names.get(pool[k] ?? 0));
    return out;
  }
  /** Mentioned user indices as a view into the pool (no copy): for index maintenance. */
  mentionsView(i: number): Int32Array {
    return this.#menPool.subarray(this.#menOff[i] ?? 0, this.#menOff[i + 1] ?? 0);
  }
  mediaCount(i: number): number {
    return (this.#mediaOff[i + 1] ?? 0) - (this.#mediaOff[i] ?? 0);
  }
  mentionCount(i: number): number {
    return (this.#menOff[i + 1] ?? 0) - (this.#menOff[i] ?? 0);
  }

  mentions(i: number): readonly number[] {
    const start = this.#menOff[i] ?? 0;
    const end = this.#menOff[i + 1] ?? start;
    return end <= start ? EMPTY : Array.from(this.#menPool.subarray(start, end));
  }
  urls(i: number): readonly string[] {
    const start = this.#urlOff[i] ?? 0;
    const end = this.#urlOff[i + 1] ?? start;
    return end <= start ? EMPTY : this.#urlPool.slice(start, end);
  }
  media(i: number): readonly SimMedia[] {
    const start = this.#mediaOff[i] ?? 0;
    const end = this.#mediaOff[i + 1] ?? start;
    return end <= start ? EMPTY : this.#mediaPool.slice(start, end);
  }
  source(i: number): string {
    return this.#sources[this.#source[i] ?? 0] ?? '';
  }
  flags(i: number): number {
    return this.#flags[i] ?? 0;
  }

  indexOfId(id: bigint): number {
    const i = this.lowerBoundId(id);
    return i < this.#count && this.#ids[i] === id ? i : -1;
  }
  lowerBoundMs(ms: number): number {
    let lo = 0;
    let hi = this.#count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#ms[mid] ?? 0) < ms) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  lowerBoundId(id: bigint): number {
    let lo = 0;
    let hi = this.#count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#ids[mid] ?? 0n) < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
