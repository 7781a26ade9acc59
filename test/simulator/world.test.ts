import { describe, it, expect } from 'vitest';
import { catalog, createWorld, DEFAULT_END_MS, DEFAULT_START_MS } from '../../src/simulator/world/index.ts';
import { msOfTweetId, TweetFlag, type World } from '../../src/simulator/model.ts';

const built = performance.now();
const world = createWorld({ seed: 42 });
const buildMs = performance.now() - built;

function group(count: number, keyOf: (i: number) => number): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (let i = 0; i < count; i++) {
    const k = keyOf(i);
    if (k < 0) continue;
    const list = out.get(k) ?? [];
    list.push(i);
    out.set(k, list);
  }
  return out;
}

/** Recomputes every derived index from the table and compares. */
function expectConsistent(w: World): void {
  const t = w.tweets;
  const byAuthor = group(t.count, (i) => t.author(i));
  const convs = group(t.count, (i) => (t.conversation(i) === i ? -1 : t.conversation(i)));
  const quotes = group(t.count, (i) => t.quoted(i));
  const rts = group(t.count, (i) => t.retweeted(i));
  const mentions = new Map<number, number[]>();
  for (let i = 0; i < t.count; i++) {
    for (const u of new Set(t.mentions(i))) mentions.set(u, [...(mentions.get(u) ?? []), i]);
    const parent = t.inReplyTo(i);
    expect(t.conversation(i)).toBe(parent < 0 ? i : t.conversation(parent));
  }
  for (const u of w.users) {
    expect(w.tweetsByAuthor(u.index)).toEqual(byAuthor.get(u.index) ?? []);
    expect(w.mentionsOf(u.index)).toEqual(mentions.get(u.index) ?? []);
    expect(u.tweetsCount).toBe(w.tweetsByAuthor(u.index).length);
  }
  for (let i = 0; i < t.count; i++) {
    expect(w.conversationReplies(i)).toEqual(convs.get(i) ?? []);
    expect(w.quotesOf(i)).toEqual(quotes.get(i) ?? []);
    expect(w.retweetsOf(i)).toEqual(rts.get(i) ?? []);
  }
}

describe('createWorld (small)', () => {
  it('builds in reasonable time', () => {
    // Logged, not asserted: the machine is shared. Target: well under 300 ms.
    process.stdout.write(`small world: ${world.tweets.count} tweets, ${world.users.length} users in ${buildMs.toFixed(0)} ms\n`);
    expect(world.tweets.count).toBe(5000);
    expect(world.users.length).toBe(500);
  });

  it('is deterministic: the same seed gives the same world, another seed another', () => {
    const again = createWorld({ seed: 42 });
    const other = createWorld({ seed: 43 });
    const dump = (w: World): string[] => {
      const out: string[] = w.users.map((u) => JSON.stringify(u));
      const t = w.tweets;
      for (let i = 0; i < t.count; i++) {
        out.push(`${t.idString(i)} ${t.author(i)} ${t.text(i)} ${t.likes(i)} ${t.views(i)} ${t.flags(i)} ${t.lang(i)} ${t.source(i)} ${JSON.stringify(t.media(i))} ${t.urls(i).join()}`);
      }
      out.push(JSON.stringify([w.lists, w.communities, w.spaces]));
      return out;
    };
    expect(dump(again)).toEqual(dump(world));
    expect(dump(other)).not.toEqual(dump(world));
    expect(other.tweets.text(100)).not.toBe(world.tweets.text(100));
  });

  it('has ids above 2^53, strictly increasing, encoding the creation time within the span', () => {
    const t = world.tweets;
    for (let i = 0; i < t.count; i++) {
      expect(t.id(i) > 2n ** 53n).toBe(true);
      if (i > 0) expect(t.id(i) > t.id(i - 1)).toBe(true);
      expect(msOfTweetId(t.id(i))).toBe(t.createdAtMs(i));
    }
    expect(t.createdAtMs(0)).toBeGreaterThanOrEqual(DEFAULT_START_MS);
    expect(t.createdAtMs(t.count - 1)).toBeLessThan(DEFAULT_END_MS);
  });

  it('keeps every derived index consistent with the table', () => {
    expectConsistent(world);
  });

  it('finds tweets by id and time by binary search', () => {
    const t = world.tweets;
    for (const i of [0, 1, 777, t.count - 1]) {
      expect(t.indexOfId(t.id(i))).toBe(i);
      expect(t.lowerBoundId(t.id(i))).toBe(i);
      expect(t.lowerBoundMs(t.createdAtMs(i))).toBeLessThanOrEqual(i);
      expect(t.createdAtMs(t.lowerBoundMs(t.createdAtMs(i)))).toBe(t.createdAtMs(i));
    }
    expect(t.indexOfId(t.id(5) + 1n === t.id(6) ? -1n : t.id(5) + 1n)).toBe(-1);
    expect(t.lowerBoundMs(0)).toBe(0);
    expect(t.lowerBoundMs(DEFAULT_END_MS)).toBe(t.count);
    expect(t.lowerBoundId(t.id(t.count - 1) + 1n)).toBe(t.count);
  });

  it('renders native retweets as "RT @handle: original text"', () => {
    const t = world.tweets;
    let seen = 0;
    for (let i = 0; i < t.count; i++) {
      const o = t.retweeted(i);
      if (o < 0) continue;
      seen++;
      expect(t.text(i)).toBe(`RT @${world.users[t.author(o)]?.username}: ${t.text(o)}`);
      expect(t.retweeted(o)).toBe(-1);
    }
    expect(seen).toBeGreaterThan(100);
  });

  it('has the user-state mix, with hidden users still tweeting', () => {
    const u = world.users;
    for (const state of ['protected', 'suspended', 'deleted', 'verified', 'blueVerified'] as const) {
      const holders = u.filter((x) => x[state]);
      expect(holders.length, state).toBeGreaterThanOrEqual(3);
      if (state === 'protected' || state === 'suspended' || state === 'deleted') {
        expect(holders.some((x) => world.tweetsByAuthor(x.index).length > 0), state).toBe(true);
      }
    }
    expect(u.some((x) => BigInt(x.id) > 2n ** 53n)).toBe(true);
    expect(u.some((x) => BigInt(x.id) < 2n ** 53n)).toBe(true);
    expect(new Set(u.map((x) => x.id)).size).toBe(u.length);
    expect(new Set(u.map((x) => x.username.toLowerCase())).size).toBe(u.length);
    expect(u.some((x) => world.followersOf(x.index).length >= 450)).toBe(true);
    expect(u.every((x) => x.followersCount === world.followersOf(x.index).length)).toBe(true);
  });

  it('has the tweet variety the server and search engine rely on', () => {
    const t = world.tweets;
    const langs = new Map<string, number>();
    const media = new Set<string>();
    const sources = new Set<string>();
    let flags = 0;
    let maxLikes = 0;
    let hashtags = 0;
    let cashtags = 0;
    let urls = 0;
    let quotes = 0;
    for (let i = 0; i < t.count; i++) {
      langs.set(t.lang(i), (langs.get(t.lang(i)) ?? 0) + 1);
      for (const m of t.media(i)) media.add(`${m.type}:${m.native}`);
      sources.add(t.source(i));
      flags |= t.flags(i);
      maxLikes = Math.max(maxLikes, t.likes(i));
      if (t.hashtags(i).length > 0) hashtags++;
      if (t.cashtags(i).length > 0) cashtags++;
      if (t.urls(i).length > 0) urls++;
      if (t.quoted(i) >= 0) quotes++;
    }
    expect([...langs.keys()]).toEqual(expect.arrayContaining(['en', 'es', 'fr', 'de', 'ja', 'pt', 'und']));
    expect(langs.get('en') ?? 0).toBeGreaterThan(t.count / 2);
    expect([...media]).toEqual(expect.arrayContaining(['photo:true', 'photo:false', 'video:true', 'animated_gif:true']));
    expect(sources.size).toBeGreaterThanOrEqual(4);
    for (const f of Object.values(TweetFlag)) expect(flags & f, `flag ${f}`).toBe(f);
    expect(maxLikes).toBeGreaterThanOrEqual(10_000);
    expect(Math.min(hashtags, cashtags, urls, quotes)).toBeGreaterThan(50);
    const bigConversations = [...Array(t.count).keys()].filter((i) => world.conversationReplies(i).length >= 50);
    expect(bigConversations.length).toBeGreaterThanOrEqual(3);
  });

  it('has lists, communities and spaces sized for paging', () => {
    expect(world.lists.length).toBeGreaterThanOrEqual(5);
    expect(world.lists.some((l) => l.followers.length >= 401)).toBe(true);
    for (const l of world.lists) {
      expect(l.members.length).toBeGreaterThanOrEqual(10);
      expect(l.members.length).toBeLessThanOrEqual(300);
      expect(world.listById(l.id)).toBe(l);
    }
    expect(world.communities.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...world.communities.map((c) => c.members.length))).toBe(300);
    expect(world.spaces.length).toBeGreaterThanOrEqual(3);
    expect(new Set(world.spaces.map((s) => s.state))).toEqual(new Set(['Running', 'Ended', 'NotStarted']));
    for (const s of world.spaces) expect(world.spaceById(s.id)).toBe(s);
  });

  it('offers a catalog with at least three of each, and frequent search terms', () => {
    const c = catalog(world);
    for (const list of [c.users.public, c.users.protected, c.users.suspended, c.tweets, c.lists, c.communities, c.spaces, c.searchTerms, c.celebrities]) {
      expect(list.length).toBeGreaterThanOrEqual(3);
    }
    expect(world.userByHandle(c.users.protected[0] ?? '')?.protected).toBe(true);
    expect(world.userByHandle(c.users.suspended[0] ?? '')?.suspended).toBe(true);
    for (const id of c.tweets) {
      const i = world.tweets.indexOfId(BigInt(id));
      const author = world.users[world.tweets.author(i)];
      expect(author?.protected || author?.suspended || author?.deleted).toBe(false);
      expect(world.conversationReplies(i).length).toBeGreaterThan(0);
    }
    for (const term of c.searchTerms) {
      let hits = 0;
      for (let i = 0; i < world.tweets.count; i++) if (world.tweets.text(i).includes(term)) hits++;
      expect(hits, term).toBeGreaterThanOrEqual(200);
    }
    for (const h of c.celebrities) expect(world.mentionsOf(world.userByHandle(h)?.index ?? -1).length).toBeGreaterThanOrEqual(30);
    expect(catalog(world)).toEqual(c);
  });
});

describe('addTweets on a generated world', () => {
  it('appends after the newest tweet, grows the columns and keeps every index consistent', () => {
    const w = createWorld({ seed: 5, scale: { users: 60, tweets: 400 } });
    const t = w.tweets;
    const newest = t.createdAtMs(t.count - 1);
    const root = [...Array(t.count).keys()].find((i) => w.conversationReplies(i).length > 0) ?? 0;
    const deep = w.conversationReplies(root).at(-1) ?? root;
    const celeb = w.users[0]?.username ?? '';
    const author = w.users[10]?.username ?? '';
    const [a, b] = w.addTweets([
      { authorHandle: author, text: `late reply @${celeb} #Fresh $NEW`, createdAtMs: DEFAULT_START_MS, inReplyToId: t.idString(deep) },
      { authorHandle: celeb, text: 'quoting it', quotedId: t.idString(root) },
    ]);
    expect(t.createdAtMs(a ?? -1)).toBe(newest + 1);
    expect(t.createdAtMs(b ?? -1)).toBeGreaterThanOrEqual(Date.now() - 60_000);
    expect(t.conversation(a ?? -1)).toBe(root);
    expect(t.hashtags(a ?? -1)).toEqual(['fresh']);
    expect(t.cashtags(a ?? -1)).toEqual(['NEW']);
    expect(w.mentionsOf(0).at(-1)).toBe(a);
    // Thousands more force several doublings of every column and pool.
    const many = w.addTweets(Array.from({ length: 3000 }, (_, k) => ({ authorHandle: author, text: `bulk ${k} @${celeb}` })));
    expect(many.length).toBe(3000);
    expect(t.text(many.at(-1) ?? -1)).toBe(`bulk 2999 @${celeb}`);
    for (let i = 1; i < t.count; i++) expect(t.id(i) > t.id(i - 1)).toBe(true);
    expect(t.indexOfId(t.id(many[1234] ?? -1))).toBe(many[1234]);
    expectConsistent(w);
    expect(() => w.addTweets([{ authorHandle: author, text: 'x', inReplyToId: '123' }])).toThrow();
  });
});

describe.skipIf(process.env.WORLD_LARGE !== '1')('createWorld (large, WORLD_LARGE=1)', () => {
  it('holds a million tweets in well under 1 GB', () => {
    const start = performance.now();
    const large = createWorld({ seed: 1, scale: 'large' });
    const ms = performance.now() - start;
    const mem = process.memoryUsage();
    process.stdout.write(`large world: ${large.tweets.count} tweets in ${ms.toFixed(0)} ms, rss ${(mem.rss / 2 ** 20).toFixed(0)} MB\n`);
    expect(large.tweets.count).toBeGreaterThanOrEqual(1_000_000);
    expect(mem.heapUsed + mem.external).toBeLessThan(900 * 2 ** 20);
    let hits = 0;
    for (let i = 0; i < large.tweets.count; i++) if (large.tweets.text(i).includes('coffee')) hits++;
    expect(hits).toBeGreaterThanOrEqual(60_000);
  }, 120_000);
});
