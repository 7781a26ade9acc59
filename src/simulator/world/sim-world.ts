import type {
  NewTweetSpec, SimCommunity, SimList, SimSpace, SimUser, World,
} from '../model.ts';
import { TweetFlag } from '../model.ts';
import { InputError } from '../../errors.ts';
import { Lexicon } from './lexicon.ts';
import { ColumnarTweetTable, type TweetRow } from './tweet-table.ts';

export type MutableUser = { -readonly [K in keyof SimUser]: SimUser[K] };

const EMPTY: readonly never[] = Object.freeze([]);

function pushTo(map: Map<number, number[]>, key: number, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * The world behind the `World` interface: users and groups as plain objects (tens of
 * thousands), tweets in the columnar table, and the derived indices kept as ascending arrays so
 * an accessor hands out the stored array itself (no copy) and appends keep them sorted for free.
 */
export class SimWorld implements World {
  readonly seed: number;
  readonly users: readonly SimUser[];
  readonly tweets: ColumnarTweetTable;
  readonly lexicon: Lexicon;
  lists: readonly SimList[] = [];
  communities: readonly SimCommunity[] = [];
  spaces: readonly SimSpace[] = [];
  readonly #users: MutableUser[];
  readonly #byHandle = new Map<string, number>();
  readonly #byId = new Map<string, number>();
  readonly #listById = new Map<string, SimList>();
  readonly #communityById = new Map<string, SimCommunity>();
  readonly #spaceById = new Map<string, SimSpace>();
  readonly #byAuthor: number[][];
  readonly #mentionsOf: number[][];
  readonly #followers: number[][];
  readonly #follows: number[][];
  readonly #conversations = new Map<number, number[]>();
  readonly #quotesOf = new Map<number, number[]>();
  readonly #retweetsOf = new Map<number, number[]>();

  constructor(seed: number, users: MutableUser[], initialTweetCapacity = 1024) {
    this.seed = seed;
    this.#users = users;
    this.users = users;
    users.forEach((u, i) => {
      if (u.index !== i) throw new InputError(`user ${u.username} has index ${u.index}, expected ${i}`);
      const handle = u.username.toLowerCase();
      if (this.#byHandle.has(handle)) throw new InputError(`duplicate handle ${u.username}`);
      if (this.#byId.has(u.id)) throw new InputError(`duplicate user id ${u.id}`);
      this.#byHandle.set(handle, i);
      this.#byId.set(u.id, i);
    });
    this.#byAuthor = users.map(() => []);
    this.#mentionsOf = users.map(() => []);
    this.#followers = users.map(() => []);
    this.#follows = users.map(() => []);
    this.lexicon = new Lexicon((h) => this.#byHandle.get(h) ?? -1);
    this.tweets = new ColumnarTweetTable(this.lexicon, initialTweetCapacity);
  }

  /** The account takes a new handle; the old one is free (and answers 404) until another takes it. */
  renameUser(handle: string, newHandle: string): void {
    const i = this.#byHandle.get(handle.replace(/^@/, '').toLowerCase());
    if (i === undefined) throw new InputError(`unknown handle ${handle}`);
    const next = newHandle.replace(/^@/, '');
    if (this.#byHandle.has(next.toLowerCase())) throw new InputError(`handle ${next} is taken`);
    this.#byHandle.delete(this.#users[i]!.username.toLowerCase());
    this.#users[i]!.username = next;
    this.#byHandle.set(next.toLowerCase(), i);
  }

  userByHandle(handle: string): SimUser | undefined {
    const i = this.#byHandle.get(handle.replace(/^@/, '').toLowerCase());
    return i === undefined ? undefined : this.#users[i];
  }
  userById(id: string): SimUser | undefined {
    const i = this.#byId.get(id);
    return i === undefined ? undefined : this.#users[i];
  }
  listById(id: string): SimList | undefined {
    return this.#listById.get(id);
  }
  communityById(id: string): SimCommunity | undefined {
    return this.#communityById.get(id);
  }
  spaceById(id: string): SimSpace | undefined {
    return this.#spaceById.get(id);
  }
  tweetsByAuthor(userIndex: number): readonly number[] {
    return this.#byAuthor[userIndex] ?? EMPTY;
  }
  conversationReplies(rootIndex: number): readonly number[] {
    return this.#conversations.get(rootIndex) ?? EMPTY;
  }
  quotesOf(tweetIndex: number): readonly number[] {
    return this.#quotesOf.get(tweetIndex) ?? EMPTY;
  }
  retweetsOf(tweetIndex: number): readonly number[] {
    return this.#retweetsOf.get(tweetIndex) ?? EMPTY;
  }
  mentionsOf(userIndex: number): readonly number[] {
    return this.#mentionsOf[userIndex] ?? EMPTY;
  }
  followersOf(userIndex: number): readonly number[] {
    return this.#followers[userIndex] ?? EMPTY;
  }
  followsOf(userIndex: number): readonly number[] {
    return this.#follows[userIndex] ?? EMPTY;
  }

  /** Token ids of a text (split on single spaces, so the text round-trips exactly). */
  tokenize(text: string): number[] {
    return text.split(' ').map((t) => this.lexicon.token(t));
  }

  /**
   * Appends a tweet and updates every index. With `bumpTargets`, the replied-to, quoted and
   * retweeted tweets' counters grow by one, as on the platform. A bulk loader passes
   * `indexUsers = false` and calls `indexUsers()` once at the end: exact-size per-user arrays
   * instead of 100k arrays growing one push at a time (a third of the large build otherwise).
   */
  appendTweet(row: TweetRow, bumpTargets: boolean, indexUsers = true): number {
    const author = this.#users[row.author];
    if (author === undefined) throw new InputError(`tweet author ${row.author} is not a user`);
    const t = this.tweets;
    const i = t.append(row);
    if (indexUsers) {
      this.#byAuthor[row.author]?.push(i);
      author.tweetsCount += 1;
      if (row.media.length > 0) author.mediaCount += 1;
      if (t.mentionCount(i) > 0) for (const u of t.mentionsView(i)) this.#mentionsOf[u]?.push(i);
    }
    if (row.inReplyTo >= 0) {
      pushTo(this.#conversations, t.conversation(i), i);
      if (bumpTargets) t.bump(row.inReplyTo, 'replies');
    }
    if (row.quoted >= 0) {
      pushTo(this.#quotesOf, row.quoted, i);
      if (bumpTargets) t.bump(row.quoted, 'quotes');
    }
    if (row.retweeted >= 0) {
      pushTo(this.#retweetsOf, row.retweeted, i);
      if (bumpTargets) t.bump(row.retweeted, 'retweets');
    }
    return i;
  }

  /** Rebuilds tweetsByAuthor, mentionsOf and the users' tweet/media counts from the table. */
  indexUsers(): void {
    const t = this.tweets;
    const n = this.#users.length;
    const authored = new Int32Array(n);
    const mentioned = new Int32Array(n);
    for (let i = 0; i < t.count; i++) {
      authored[t.author(i)] = (authored[t.author(i)] ?? 0) + 1;
      for (const u of t.mentionsView(i)) mentioned[u] = (mentioned[u] ?? 0) + 1;
    }
    const fill = new Int32Array(n);
    const mfill = new Int32Array(n);
    for (let u = 0; u < n; u++) {
      this.#byAuthor[u] = new Array<number>(authored[u] ?? 0);
      this.#mentionsOf[u] = new Array<number>(mentioned[u] ?? 0);
      const user = this.#users[u] as MutableUser;
      user.tweetsCount = authored[u] ?? 0;
      user.mediaCount = 0;
    }
    for (let i = 0; i < t.count; i++) {
      const a = t.author(i);
      (this.#byAuthor[a] as number[])[fill[a] ?? 0] = i;
      fill[a] = (fill[a] ?? 0) + 1;
      if (t.mediaCount(i) > 0) (this.#users[a] as MutableUser).mediaCount += 1;
      if (t.mentionCount(i) === 0) continue;
      for (const u of t.mentionsView(i)) {
        (this.#mentionsOf[u] as number[])[mfill[u] ?? 0] = i;
        mfill[u] = (mfill[u] ?? 0) + 1;
      }
    }
  }

  setGroups(lists: SimList[], communities: SimCommunity[], spaces: SimSpace[]): void {
    this.lists = lists;
    // own copies of the feeds: addTweets appends to them
    communities = communities.map((c) => ({ ...c, tweets: [...c.tweets] }));
    this.communities = communities;
    this.spaces = spaces;
    for (const l of lists) this.#listById.set(l.id, l);
    for (const c of communities) this.#communityById.set(c.id, c);
    for (const s of spaces) this.#spaceById.set(s.id, s);
  }

  /**
   * Replaces the follow graph from parallel arrays (follower[k] follows followed[k]): no tuple
   * per edge, which matters at a million edges. Duplicates and self-follows are dropped, lists
   * kept ascending, and the users' follower/following counts follow the graph.
   */
  setFollows(follower: ArrayLike<number>, followed: ArrayLike<number>): void {
    const n = this.#users.length;
    for (const list of [...this.#followers, ...this.#follows]) list.length = 0;
    for (let k = 0; k < follower.length; k++) {
      const a = follower[k] ?? -1;
      const b = followed[k] ?? -1;
      if (a === b || a < 0 || b < 0 || a >= n || b >= n) continue;
      this.#follows[a]?.push(b);
      this.#followers[b]?.push(a);
    }
    const tidy = (list: number[]): void => {
      list.sort((x, y) => x - y);
      let w = 0;
      for (let r = 0; r < list.length; r++) if (r === 0 || list[r] !== list[r - 1]) list[w++] = list[r] ?? 0;
      list.length = w;
    };
    this.#follows.forEach(tidy);
    this.#followers.forEach(tidy);
    this.#users.forEach((u, i) => {
      u.followersCount = this.#followers[i]?.length ?? 0;
      u.followingsCount = this.#follows[i]?.length ?? 0;
    });
  }

  addTweets(specs: readonly NewTweetSpec[]): number[] {
    return specs.map((spec) => {
      const community = spec.communityId === undefined ? undefined : this.#communityById.get(spec.communityId);
      if (spec.communityId !== undefined) {
        if (community === undefined) throw new InputError(`unknown community ${spec.communityId}`);
        const author = this.userByHandle(spec.authorHandle);
        if (author && !community.members.includes(author.index)) {
          throw new InputError(`${spec.authorHandle} is not a member of community ${spec.communityId}`);
        }
      }
      const i = this.appendTweet(this.#rowOf(spec), true);
      // appended tweets are the newest, so the feed stays ascending
      if (community) (community.tweets as number[]).push(i);
      return i;
    });
  }

  #rowOf(spec: NewTweetSpec): TweetRow {
    const author = this.userByHandle(spec.authorHandle);
    if (author === undefined) throw new InputError(`unknown author handle ${spec.authorHandle}`);
    const newest = this.tweets.newestMs;
    const wanted = spec.createdAtMs ?? Date.now();
    const tokens = this.tokenize(spec.text);
    return {
      ms: Number.isFinite(newest) && wanted <= newest ? newest + 1 : wanted,
      author: author.index,
      tokens,
      tokenCount: tokens.length,
      lang: spec.lang ?? 'en',
      inReplyTo: this.#tweetRef(spec.inReplyToId),
      quoted: this.#tweetRef(spec.quotedId),
      retweeted: -1,
      likes: spec.likes ?? 0,
      retweets: spec.retweets ?? 0,
      replies: spec.replies ?? 0,
      quotes: 0,
      bookmarks: 0,
      views: 0,
      urls: [],
      media: [],
      source: 'Twitter Web App',
      flags: TweetFlag.SAFE,
    };
  }

  #tweetRef(id: string | undefined): number {
    if (id === undefined) return -1;
    const i = /^\d{1,20}$/.test(id) ? this.tweets.indexOfId(BigInt(id)) : -1;
    if (i < 0) throw new InputError(`unknown tweet id ${id}`);
    return i;
  }
}
