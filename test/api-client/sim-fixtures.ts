/** Picks what the simulator tests ask for out of the simulated world (read-only). */
import type { SimUser, World } from '../../src/simulator/model.ts';

const TWO_53 = 2n ** 53n;

function visible(u: SimUser | undefined): u is SimUser {
  return u !== undefined && !u.protected && !u.suspended && !u.deleted;
}

function must<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new Error(`the simulated world has no ${what}`);
  return value;
}

function findTweet(world: World, accept: (i: number) => boolean): number | undefined {
  const t = world.tweets;
  for (let i = 0; i < t.count; i++) if (accept(i)) return i;
  return undefined;
}

export function pickFixtures(world: World) {
  const t = world.tweets;
  const authorOf = (i: number): SimUser | undefined => world.users[t.author(i)];
  const visibleTweet = (i: number): boolean => i >= 0 && visible(authorOf(i));

  const author = must(
    world.users.find((u) => visible(u) && world.tweetsByAuthor(u.index).length >= 25 && world.tweetsByAuthor(u.index).length <= 150),
    'user with 25–150 tweets',
  );
  const bigIdUser = must(world.users.find((u) => visible(u) && BigInt(u.id) > TWO_53), 'public user with an id above 2^53');
  const protectedUser = must(world.users.find((u) => u.protected && !u.suspended && !u.deleted), 'protected user');
  const followed = must(
    world.users.find((u) => visible(u) && world.followersOf(u.index).length > 0 && world.followsOf(u.index).length > 0),
    'user with followers and follows',
  );
  const replyIndex = must(findTweet(world, (i) => visibleTweet(i) && visibleTweet(t.inReplyTo(i))), 'visible reply');
  const quoteIndex = must(findTweet(world, (i) => visibleTweet(i) && visibleTweet(t.quoted(i))), 'visible quote');
  const retweetIndex = must(findTweet(world, (i) => visibleTweet(i) && visibleTweet(t.retweeted(i))), 'visible retweet');
  const mentioned = must(
    world.users.find((u) => visible(u) && world.mentionsOf(u.index).some((i) => visibleTweet(i))),
    'user mentioned in a visible tweet',
  );
  const list = must(
    world.lists.find((l) => l.members.length > 0 && l.followers.length > 0),
    'list with members and followers',
  );
  const community = must(world.communities.find((c) => c.members.length > 0), 'community with members');
  const space = must(world.spaces[0], 'space');

  return {
    author,
    authorTweetIds: world.tweetsByAuthor(author.index).map((i) => t.idString(i)),
    bigIdUser,
    protectedUser,
    followed,
    reply: {
      id: t.idString(replyIndex),
      parentId: t.idString(t.inReplyTo(replyIndex)),
      by: must(authorOf(replyIndex), 'reply author'),
      createdAtMs: t.createdAtMs(replyIndex),
    },
    quote: {
      id: t.idString(quoteIndex),
      quotedId: t.idString(t.quoted(quoteIndex)),
      by: must(authorOf(quoteIndex), 'quote author'),
      createdAtMs: t.createdAtMs(quoteIndex),
    },
    retweet: { id: t.idString(retweetIndex), originalId: t.idString(t.retweeted(retweetIndex)) },
    mentioned,
    list,
    community,
    space,
  };
}

export type Fixtures = ReturnType<typeof pickFixtures>;
