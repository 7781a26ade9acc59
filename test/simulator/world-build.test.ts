import { describe, it, expect } from 'vitest';
import { buildWorld } from '../../src/simulator/world/index.ts';
import { msOfTweetId } from '../../src/simulator/model.ts';

const T0 = Date.UTC(2026, 8, 10, 12, 0, 0);

function fixture() {
  return buildWorld({
    users: [
      { username: 'alice', verified: true },
      { username: 'Bob', id: '18446744073709551000' },
      { username: 'carol', protected: true },
    ],
    tweets: [
      { author: 'bob', text: 'reply to alice @Alice see $tsla', createdAtMs: T0 + 2000, inReplyTo: 1 },
      { author: 'alice', text: 'Hello #World and #world, hi @bob and @nobody $aapl', createdAtMs: T0 },
      { author: 'carol', text: 'deeper reply', createdAtMs: T0 + 3000, inReplyTo: 0 },
      { author: 'alice', text: 'same ms one', createdAtMs: T0 + 5000, quoted: 1 },
      { author: 'bob', text: 'same ms two', createdAtMs: T0 + 5000 },
      { author: 'bob', text: 'RT @alice: Hello #World and #world, hi @bob and @nobody $aapl', createdAtMs: T0 + 6000, retweeted: 1 },
    ],
    lists: [{ owner: 'alice', members: ['bob', 'carol'], followers: ['bob'] }],
    communities: [{ name: 'c', members: ['alice'] }],
    spaces: [{ creator: 'alice', state: 'Running' }],
    follows: [['bob', 'alice'], ['carol', 'alice'], ['bob', 'alice']],
  });
}

describe('buildWorld', () => {
  it('sorts fixtures by time, assigns increasing ids that encode the time, and remaps references', () => {
    const w = fixture();
    const t = w.tweets;
    expect(t.count).toBe(6);
    expect(t.text(0)).toBe('Hello #World and #world, hi @bob and @nobody $aapl');
    for (let i = 0; i < t.count; i++) {
      expect(t.id(i)).toBeGreaterThan(2n ** 53n);
      expect(msOfTweetId(t.id(i))).toBe(t.createdAtMs(i));
      if (i > 0) expect(t.id(i)).toBeGreaterThan(t.id(i - 1));
      expect(t.indexOfId(t.id(i))).toBe(i);
      expect(t.idString(i)).toBe(t.id(i).toString());
    }
    // Same millisecond: input order kept, ids still unique.
    expect(t.text(3)).toBe('same ms one');
    expect(t.id(4) - t.id(3)).toBe(1n);
    expect(t.inReplyTo(1)).toBe(0);
    expect(t.inReplyTo(2)).toBe(1);
    expect(t.conversation(2)).toBe(0);
    expect(w.conversationReplies(0)).toEqual([1, 2]);
    expect(t.quoted(3)).toBe(0);
    expect(w.quotesOf(0)).toEqual([3]);
    expect(t.retweeted(5)).toBe(0);
    expect(w.retweetsOf(0)).toEqual([5]);
    // Counters default to the fixtures' own references.
    expect([t.replies(0), t.quotes(0), t.retweets(0)]).toEqual([1, 1, 1]);
  });

  it('derives hashtags, cashtags and resolvable mentions from the text', () => {
    const w = fixture();
    const t = w.tweets;
    expect(t.hashtags(0)).toEqual(['world']);
    expect(t.cashtags(0)).toEqual(['AAPL']);
    expect(t.mentions(0)).toEqual([1]);
    expect(t.mentions(1)).toEqual([0]);
    expect(w.mentionsOf(1)).toEqual([0, 5]);
    expect(w.mentionsOf(0)).toEqual([1, 5]);
    expect(t.hashtags(2)).toEqual([]);
  });

  it('resolves users, groups and the follow graph by handle', () => {
    const w = fixture();
    expect(w.userByHandle('BOB')?.id).toBe('18446744073709551000');
    expect(w.userByHandle('@alice')?.index).toBe(0);
    expect(w.userById('18446744073709551000')?.username).toBe('Bob');
    const alice = w.userByHandle('alice');
    expect(alice?.verified).toBe(true);
    expect(alice?.followersCount).toBe(2);
    expect(w.followersOf(0)).toEqual([1, 2]);
    expect(w.followsOf(1)).toEqual([0]);
    expect(w.tweetsByAuthor(0)).toEqual([0, 3]);
    expect(alice?.tweetsCount).toBe(2);
    const list = w.lists[0];
    expect(list && w.listById(list.id)).toBe(list);
    expect(list?.members).toEqual([1, 2]);
    expect(w.spaces[0]?.state).toBe('Running');
    expect(w.communityById(w.communities[0]?.id ?? '')?.members).toEqual([0]);
  });

  it('rejects unknown handles and references to newer fixtures', () => {
    expect(() => buildWorld({ users: [{ username: 'a' }], tweets: [{ author: 'zz', text: 'x', createdAtMs: T0 }] })).toThrow(/zz/);
    expect(() => buildWorld({
      users: [{ username: 'a' }],
      tweets: [{ author: 'a', text: 'x', createdAtMs: T0, inReplyTo: 1 }, { author: 'a', text: 'y', createdAtMs: T0 + 1 }],
    })).toThrow(/not newer/);
  });

  it('addTweets appends after the newest tweet and keeps the indices consistent', () => {
    const w = fixture();
    const root = w.tweets.idString(0);
    const [a, b] = w.addTweets([
      { authorHandle: 'carol', text: 'late reply @alice', createdAtMs: T0, inReplyToId: root },
      { authorHandle: 'alice', text: 'quote #New', quotedId: root },
    ]);
    const t = w.tweets;
    expect([a, b]).toEqual([6, 7]);
    expect(t.createdAtMs(6)).toBe(T0 + 6001);
    expect(t.createdAtMs(7)).toBeGreaterThan(T0 + 6001);
    expect(t.conversation(6)).toBe(0);
    expect(w.conversationReplies(0)).toEqual([1, 2, 6]);
    expect(w.quotesOf(0)).toEqual([3, 7]);
    expect(w.mentionsOf(0)).toEqual([1, 5, 6]);
    expect(w.tweetsByAuthor(2)).toEqual([2, 6]);
    expect(t.replies(0)).toBe(2);
    expect(t.hashtags(7)).toEqual(['new']);
    expect(t.lowerBoundMs(T0 + 5000)).toBe(3);
    expect(t.lowerBoundMs(T0 + 10 ** 12)).toBe(8);
    expect(() => w.addTweets([{ authorHandle: 'nobody', text: 'x' }])).toThrow();
  });
});

describe('buildWorld input checks', () => {
  it('rejects tweet times that cannot be encoded in an id', () => {
    const users = [{ username: 'a' }];
    expect(() => buildWorld({ users, tweets: [{ author: 'a', text: 'x', createdAtMs: 1000 }] })).toThrow(/2010/);
    expect(() => buildWorld({ users, tweets: [{ author: 'a', text: 'x', createdAtMs: T0 + 0.5 }] })).toThrow(/whole/);
  });

  it('keeps explicit counters and text byte for byte', () => {
    const text = 'two  spaces\nnew line #Tag\t@a';
    const w = buildWorld({
      users: [{ username: 'a', followersCount: 1234 }],
      tweets: [{ author: 'a', text, createdAtMs: T0, likes: 5, replies: 9, views: 100 }],
    });
    expect(w.tweets.text(0)).toBe(text);
    expect([w.tweets.likes(0), w.tweets.replies(0), w.tweets.views(0)]).toEqual([5, 9, 100]);
    expect(w.tweets.hashtags(0)).toEqual(['tag']);
    expect(w.tweets.mentions(0)).toEqual([0]);
    expect(w.users[0]?.followersCount).toBe(1234);
  });
});
