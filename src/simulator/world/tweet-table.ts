import { TWITTER_EPOCH_MS, tweetIdAt, type SimMedia, type TweetTable } from '../model.ts';
import { InputError } from '../../errors.ts';
import { grow, IntRuns, ObjectRuns } from './columns.ts';
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
const EPOCH_MS = Number(TWITTER_EPOCH_MS);

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
  readonly #tokens = new IntRuns();
  readonly #hashtags = new IntRuns();
  readonly #cashtags = new IntRuns();
  readonly #mentions = new IntRuns();
  readonly #urls = new ObjectRuns<string>();
  readonly #media = new ObjectRuns<SimMedia>();
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
    for (const runs of [this.#tokens, this.#hashtags, this.#cashtags, this.#mentions, this.#urls, this.#media]) {
      runs.reserveRows(n);
    }
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
    if (!Number.isSafeInteger(row.ms) || row.ms < EPOCH_MS) throw new InputError(`tweet time ${row.ms} is not a whole ms after 2010-11-04`);
    if (row.ms < this.#lastMs) throw new InputError(`tweet at ${row.ms} precedes the newest at ${this.#lastMs}`);
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
    this.#urls.append(i, row.urls);
    this.#media.append(i, row.media);
    this.#count = i + 1;
    return i;
  }

  #appendTokens(i: number, row: TweetRow): void {
    for (let k = 0; k < row.tokenCount; k++) {
      const tok = row.tokens[k] ?? 0;
      this.#tokens.add(tok);
      const ent = this.#lex.entitiesOf(tok);
      if (ent === null) continue;
      for (const h of ent.hashtags) this.#hashtags.addUnique(i, h);
      for (const c of ent.cashtags) this.#cashtags.addUnique(i, c);
      for (const u of ent.mentions) this.#mentions.addUnique(i, u);
    }
    for (const runs of [this.#tokens, this.#hashtags, this.#cashtags, this.#mentions]) runs.close(i);
  }

  /** Token ids of a row's text (a view into the pool: copy before appending). */
  tokensOf(i: number): Int32Array {
    return this.#tokens.view(i);
  }

  /** Mentioned user indices as a view into the pool (no copy): for index maintenance. */
  mentionsView(i: number): Int32Array {
    return this.#mentions.view(i);
  }
  mediaCount(i: number): number {
    return this.#media.count(i);
  }
  mentionCount(i: number): number {
    return this.#mentions.end(i) - this.#mentions.start(i);
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
    const runs = this.#tokens;
    const start = runs.start(i);
    const end = runs.end(i);
    let out = '';
    for (let k = start; k < end; k++) {
      if (k > start) out += ' ';
      out += this.#lex.tokens.get(runs.at(k));
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
    return this.#names(this.#hashtags, i);
  }
  cashtags(i: number): readonly string[] {
    return this.#names(this.#cashtags, i);
  }
  #names(runs: IntRuns, i: number): readonly string[] {
    const start = runs.start(i);
    const end = runs.end(i);
    if (end <= start) return EMPTY;
    const out: string[] = [];
    for (let k = start; k < end; k++) out.push(this.#lex.names.get(runs.at(k)));
    return out;
  }
  mentions(i: number): readonly number[] {
    return this.mentionCount(i) === 0 ? EMPTY : Array.from(this.#mentions.view(i));
  }
  urls(i: number): readonly string[] {
    return this.#urls.get(i);
  }
  media(i: number): readonly SimMedia[] {
    return this.#media.get(i);
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
