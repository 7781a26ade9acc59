import { TweetFlag, type SimMedia, type SimSpace, type World } from '../model.ts';
import { InputError } from '../../errors.ts';
import { SimWorld, type MutableUser } from './sim-world.ts';
import type { TweetRow } from './tweet-table.ts';

/** A user fixture: any SimUser field but `index`; only the handle is required. */
export type UserInput = Partial<Omit<MutableUser, 'index'>> & { username: string };

/** A tweet fixture; references are indices into the input array, in any order. */
export interface TweetInput {
  /** Author handle. */
  author: string;
  text: string;
  createdAtMs: number;
  lang?: string;
  inReplyTo?: number;
  quoted?: number;
  retweeted?: number;
  likes?: number;
  /** Counters default to the number of input tweets retweeting / replying to / quoting this one. */
  retweets?: number;
  replies?: number;
  quotes?: number;
  bookmarks?: number;
  views?: number;
  media?: SimMedia[];
  urls?: string[];
  source?: string;
  flags?: number;
}

export interface ListInput {
  id?: string;
  name?: string;
  /** Handles. */
  owner: string;
  members: string[];
  followers?: string[];
}

export interface CommunityInput {
  id?: string;
  name?: string;
  members: string[];
  /** Indices into the tweet fixtures posted in the community (authors must be members). */
  tweets?: number[];
}

export type SpaceInput = Partial<Omit<SimSpace, 'creatorIndex' | 'adminIndices' | 'speakerIndices' | 'listenerIndices'>> & {
  creator: string;
  admins?: string[];
  speakers?: string[];
  listeners?: string[];
};

export interface WorldInput {
  seed?: number;
  users: UserInput[];
  tweets: TweetInput[];
  lists?: ListInput[];
  communities?: CommunityInput[];
  spaces?: SpaceInput[];
  /** [followerHandle, followedHandle]. */
  follows?: Array<[string, string]>;
}

const DEFAULT_USER_CREATED_MS = Date.UTC(2015, 0, 1);

function makeUsers(inputs: readonly UserInput[]): MutableUser[] {
  const taken = new Set(inputs.flatMap((u) => (u.id === undefined ? [] : [u.id])));
  let nextId = 10_000_000;
  return inputs.map((u, index) => {
    let id = u.id;
    if (id === undefined) {
      while (taken.has(String(nextId))) nextId++;
      id = String(nextId++);
    }
    return {
      displayName: u.username,
      description: '',
      location: '',
      createdAtMs: DEFAULT_USER_CREATED_MS,
      protected: false,
      suspended: false,
      deleted: false,
      verified: false,
      blueVerified: false,
      canDm: true,
      possiblySensitive: false,
      favouritesCount: 0,
      bioUrls: [],
      pinnedTweetIds: [],
      profileImageUrl: `https://pbs.twimg.com/profile_images/${id}/avatar_normal.jpg`,
      profileBackgroundImageUrl: '',
      ...u,
      // Derived from the graph and the table below unless the fixture sets them.
      followersCount: 0,
      followingsCount: 0,
      tweetsCount: 0,
      mediaCount: 0,
      index,
      id,
    };
  });
}

/** Builds a world from explicit fixtures; the low-level entry point for tests. */
export function buildWorld(input: WorldInput): World {
  const world = new SimWorld(input.seed ?? 0, makeUsers(input.users), Math.max(16, input.tweets.length));
  const userIndex = (handle: string): number => {
    const u = world.userByHandle(handle);
    if (u === undefined) throw new InputError(`unknown handle ${handle} in world fixture`);
    return u.index;
  };
  const position = appendTweets(world, input.tweets, userIndex);
  const follows = input.follows ?? [];
  world.setFollows(follows.map(([a]) => userIndex(a)), follows.map(([, b]) => userIndex(b)));
  input.users.forEach((u, i) => {
    const user = world.users[i] as MutableUser;
    if (u.followersCount !== undefined) user.followersCount = u.followersCount;
    if (u.followingsCount !== undefined) user.followingsCount = u.followingsCount;
    if (u.tweetsCount !== undefined) user.tweetsCount = u.tweetsCount;
    if (u.mediaCount !== undefined) user.mediaCount = u.mediaCount;
  });
  let groupSeq = 0;
  const groupId = (): string => String(1_700_000_000_000_000_000n + BigInt(++groupSeq));
  const lists = (input.lists ?? []).map((l, k) => ({
    id: l.id ?? groupId(),
    name: l.name ?? `List ${k + 1}`,
    ownerIndex: userIndex(l.owner),
    members: l.members.map(userIndex),
    followers: (l.followers ?? []).map(userIndex),
  }));
  const communities = (input.communities ?? []).map((c, k) => {
    const members = c.members.map(userIndex);
    const tweets = (c.tweets ?? []).map((f) => {
      const i = position[f];
      if (i === undefined) throw new InputError(`community ${k + 1} names missing tweet fixture ${f}`);
      if (!members.includes(world.tweets.author(i))) throw new InputError(`community ${k + 1}: tweet fixture ${f} is by a non-member`);
      return i;
    });
    return { id: c.id ?? groupId(), name: c.name ?? `Community ${k + 1}`, members, tweets: tweets.sort((a, b) => a - b) };
  });
  const spaces = (input.spaces ?? []).map((s, k) => {
    const { creator, admins, speakers, listeners, ...rest } = s;
    const createdAtMs = s.createdAtMs ?? DEFAULT_USER_CREATED_MS;
    return {
      id: `1space${String(k + 1).padStart(8, '0')}`,
      title: `Space ${k + 1}`,
      state: 'Ended',
      mediaKey: `28_${1_800_000_000_000_000_000n + BigInt(k)}`,
      createdAtMs,
      updatedAtMs: createdAtMs,
      scheduledStartMs: createdAtMs,
      totalLiveListeners: listeners?.length ?? 0,
      totalReplayWatched: 0,
      ...rest,
      creatorIndex: userIndex(creator),
      adminIndices: (admins ?? [creator]).map(userIndex),
      speakerIndices: (speakers ?? []).map(userIndex),
      listenerIndices: (listeners ?? []).map(userIndex),
    };
  });
  world.setGroups(lists, communities, spaces);
  return world;
}

/** Appends the fixtures in time order; returns each fixture's world index. */
function appendTweets(world: SimWorld, tweets: readonly TweetInput[], userIndex: (h: string) => number): Int32Array {
  // Stable by time, so equal-millisecond fixtures keep their input order (and get sequence 1, 2…).
  const order = tweets.map((_, k) => k).sort((a, b) => (tweets[a]?.createdAtMs ?? 0) - (tweets[b]?.createdAtMs ?? 0));
  const position = new Int32Array(tweets.length);
  order.forEach((k, pos) => (position[k] = pos));
  const refCounts = { replies: new Int32Array(tweets.length), quotes: new Int32Array(tweets.length), retweets: new Int32Array(tweets.length) };
  const ref = (from: number, to: number | undefined, counter: Int32Array): number => {
    if (to === undefined || to < 0) return -1;
    if (to >= tweets.length) throw new InputError(`tweet fixture ${from} references missing fixture ${to}`);
    counter[to] = (counter[to] ?? 0) + 1;
    const target = position[to] ?? 0;
    if (target >= (position[from] ?? 0)) throw new InputError(`tweet fixture ${from} is not newer than the fixture ${to} it references`);
    return target;
  };
  const rows = order.map((k): TweetRow => {
    const t = tweets[k] as TweetInput;
    const tokens = world.tokenize(t.text);
    return {
      ms: t.createdAtMs,
      author: userIndex(t.author),
      tokens,
      tokenCount: tokens.length,
      lang: t.lang ?? 'en',
      inReplyTo: ref(k, t.inReplyTo, refCounts.replies),
      quoted: ref(k, t.quoted, refCounts.quotes),
      retweeted: ref(k, t.retweeted, refCounts.retweets),
      likes: t.likes ?? 0,
      retweets: 0,
      replies: 0,
      quotes: 0,
      bookmarks: t.bookmarks ?? 0,
      views: t.views ?? 0,
      urls: t.urls ?? [],
      media: t.media ?? [],
      source: t.source ?? 'Twitter Web App',
      flags: t.flags ?? TweetFlag.SAFE,
    };
  });
  rows.forEach((row, pos) => {
    const k = order[pos] ?? 0;
    const t = tweets[k] as TweetInput;
    row.replies = t.replies ?? refCounts.replies[k] ?? 0;
    row.quotes = t.quotes ?? refCounts.quotes[k] ?? 0;
    row.retweets = t.retweets ?? refCounts.retweets[k] ?? 0;
    world.appendTweet(row, false);
  });
  return position;
}
