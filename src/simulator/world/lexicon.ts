/**
 * Interned strings and the per-token entity cache. Tweet text is stored as token ids (the text
 * split on single spaces, which `join(' ')` restores exactly), so entity extraction runs once per
 * distinct token instead of once per tweet: a million generated tweets share a few thousand tokens.
 */

/** A string table: id by string, string by id. */
export class Interner {
  readonly #ids = new Map<string, number>();
  readonly #strings: string[] = [];

  intern(value: string): number {
    let id = this.#ids.get(value);
    if (id === undefined) {
      id = this.#strings.length;
      this.#strings.push(value);
      this.#ids.set(value, id);
    }
    return id;
  }

  idOf(value: string): number | undefined {
    return this.#ids.get(value);
  }

  get(id: number): string {
    return this.#strings[id] ?? '';
  }

  get size(): number {
    return this.#strings.length;
  }
}

/** Entities of one token: hashtag and cashtag ids (in `Lexicon.names`), mentioned user indices. */
export interface TokenEntities {
  readonly hashtags: readonly number[];
  readonly cashtags: readonly number[];
  readonly mentions: readonly number[];
}

// Like the platform: a tag must not follow a word character (so "a#b" and "x@y.com" are not
// entities) and a hashtag needs at least one non-digit.
const HASHTAG = /(?<![\p{L}\p{N}_&])[#＃]([\p{L}\p{N}_]*[\p{L}_][\p{L}\p{N}_]*)/gu;
const CASHTAG = /(?<![\p{L}\p{N}_$])\$([A-Za-z]{1,6}(?:[._][A-Za-z]{1,2})?)(?![\p{L}\p{N}_])/gu;
const MENTION = /(?<![\p{L}\p{N}_@])[@＠]([A-Za-z0-9_]{1,15})(?![A-Za-z0-9_])/gu;

export class Lexicon {
  /** Text tokens. */
  readonly tokens = new Interner();
  /** Hashtags (lower-cased) and cashtags (upper-cased), sources, languages. */
  readonly names = new Interner();
  /** Entities by token id; null when the token has none (the common case). */
  readonly #entities: (TokenEntities | null)[] = [];
  readonly #resolveHandle: (lowerHandle: string) => number;

  /** `resolveHandle` maps a lower-cased handle to a user index, or -1 when unknown. */
  constructor(resolveHandle: (lowerHandle: string) => number) {
    this.#resolveHandle = resolveHandle;
  }

  token(value: string): number {
    const id = this.tokens.intern(value);
    if (id === this.#entities.length) this.#entities.push(this.#derive(value));
    return id;
  }

  entitiesOf(tokenId: number): TokenEntities | null {
    return this.#entities[tokenId] ?? null;
  }

  #derive(token: string): TokenEntities | null {
    if (!/[#＃$@＠]/.test(token)) return null;
    // Fast path for the generator's most common entity token, "@handle" or "@handle:" (RT).
    const plain = /^@([A-Za-z0-9_]{1,15}):?$/.exec(token);
    if (plain) {
      const user = this.#resolveHandle((plain[1] ?? '').toLowerCase());
      return user >= 0 ? { hashtags: [], cashtags: [], mentions: [user] } : null;
    }
    const hashtags = [...token.matchAll(HASHTAG)].map((m) => this.names.intern((m[1] ?? '').toLowerCase()));
    const cashtags = [...token.matchAll(CASHTAG)].map((m) => this.names.intern((m[1] ?? '').toUpperCase()));
    const mentions: number[] = [];
    for (const m of token.matchAll(MENTION)) {
      const user = this.#resolveHandle((m[1] ?? '').toLowerCase());
      if (user >= 0) mentions.push(user);
    }
    if (hashtags.length + cashtags.length + mentions.length === 0) return null;
    return { hashtags, cashtags, mentions };
  }
}
