import type { SimCommunity, SimList, SimSpace } from '../model.ts';
import { tweetIdAt } from '../model.ts';
import { randomKey } from './gen-media.ts';
import type { UserTraits } from './gen-users.ts';
import { createRng, weightedSampler, type Rng } from './random.ts';
import type { MutableUser, SimWorld } from './sim-world.ts';
import { CELEBRITIES, TOPICS } from './vocabulary.ts';

const HOUR_MS = 3_600_000;

/**
 * Follow graph: everyone follows a heavy-tailed number of accounts, half of them drawn by
 * activity (popular accounts gather followers), and ~93% follow each celebrity, so celebrities
 * have 450+ followers as soon as the world has ~500 users.
 */
export function generateFollows(world: SimWorld, rng: Rng, traits: UserTraits): void {
  const n = world.users.length;
  const popular = weightedSampler(traits.activity);
  const from: number[] = [];
  const to: number[] = [];
  for (let u = 0; u < n; u++) {
    for (let c = 0; c < CELEBRITIES.length; c++) {
      if (rng.chance(0.93)) {
        from.push(u);
        to.push(c);
      }
    }
    for (let k = Math.min(n - 1, rng.heavy(3, 400, 1.4)); k > 0; k--) {
      from.push(u);
      to.push(rng.chance(0.5) ? popular(rng) : rng.int(0, n - 1));
    }
  }
  world.setFollows(from, to);
}

function sample(rng: Rng, n: number, k: number): number[] {
  const chosen = new Set<number>();
  const want = Math.min(k, n);
  while (chosen.size < want) chosen.add(rng.int(0, n - 1));
  return [...chosen].sort((a, b) => a - b);
}

function snowflake(rng: Rng, ms: number): string {
  return tweetIdAt(ms, rng.int(0, 4_194_303)).toString();
}

/** Share of a member's own posts (not retweets or replies) that also go to the community. */
const COMMUNITY_POST_SHARE = 0.1;

/**
 * A community's feed: about a tenth of its members' original posts and quotes, drawn from a
 * stream of its own so the rest of the world stays byte for byte what it was before feeds.
 */
function communityFeed(world: SimWorld, members: readonly number[], k: number): number[] {
  const pick = createRng((world.seed * 31 + k + 0xc0ffee) >>> 0);
  const t = world.tweets;
  const feed: number[] = [];
  for (const m of members) {
    for (const i of world.tweetsByAuthor(m)) {
      if (t.retweeted(i) < 0 && t.inReplyTo(i) < 0 && pick.chance(COMMUNITY_POST_SHARE)) feed.push(i);
    }
  }
  return feed.sort((a, b) => a - b);
}

export function generateGroups(world: SimWorld, rng: Rng, startMs: number, endMs: number): void {
  const users = world.users;
  const n = users.length;
  const publicUsers = users.filter((u) => !u.protected && !u.suspended && !u.deleted).map((u) => u.index);
  const when = (): number => startMs + Math.floor(rng.next() * (endMs - startMs));
  const lists: SimList[] = [];
  for (let k = 0; k < Math.max(8, Math.floor(n / 250)); k++) {
    // The first list is the paging fixture: 300 members, 450 followers (200 per page = 3 pages).
    lists.push({
      id: snowflake(rng, when()),
      name: `${TOPICS[k % TOPICS.length] ?? 'List'} ${k + 1}`,
      ownerIndex: rng.pick(publicUsers),
      members: sample(rng, n, k === 0 ? 300 : rng.int(10, 300)),
      followers: sample(rng, n, k === 0 ? 450 : rng.heavy(0, 450, 1.1)),
    });
  }
  const communities: SimCommunity[] = [];
  for (let k = 0; k < Math.max(5, Math.floor(n / 1000)); k++) {
    const members = sample(rng, n, k === 0 ? 300 : rng.int(10, 300));
    communities.push({
      id: snowflake(rng, when()),
      name: TOPICS[(k + 3) % TOPICS.length] ?? `Community ${k + 1}`,
      members,
      tweets: communityFeed(world, members, k),
    });
  }
  const spaces: SimSpace[] = [];
  const states = ['Running', 'Ended', 'NotStarted', 'Ended'];
  for (let k = 0; k < Math.max(6, Math.floor(n / 2000)); k++) {
    const state = states[k % states.length] ?? 'Ended';
    const creatorIndex = k < CELEBRITIES.length ? k : rng.pick(publicUsers);
    const createdAtMs = state === 'Running' ? endMs - rng.int(1, 3) * HOUR_MS : when();
    const scheduledStartMs = state === 'NotStarted' ? endMs + rng.int(1, 72) * HOUR_MS : createdAtMs;
    const listeners = state === 'NotStarted' ? [] : sample(rng, n, rng.int(5, 200));
    spaces.push({
      id: `1${randomKey(rng, 12)}`,
      title: `${TOPICS[k % TOPICS.length] ?? 'Chat'} live`,
      state,
      mediaKey: `28_${snowflake(rng, createdAtMs)}`,
      creatorIndex,
      createdAtMs,
      updatedAtMs: state === 'Ended' ? createdAtMs + rng.int(1, 4) * HOUR_MS : createdAtMs,
      scheduledStartMs,
      adminIndices: [creatorIndex],
      speakerIndices: sample(rng, n, rng.int(1, 5)),
      listenerIndices: listeners,
      totalLiveListeners: listeners.length,
      totalReplayWatched: state === 'Ended' ? rng.heavy(0, 50_000, 0.8) : 0,
    });
  }
  world.setGroups(lists, communities, spaces);
}

/** A quarter of the users pin one of their own original tweets. */
export function pinTweets(world: SimWorld, rng: Rng): void {
  const t = world.tweets;
  for (const user of world.users as MutableUser[]) {
    const own = world.tweetsByAuthor(user.index);
    if (own.length === 0 || !rng.chance(0.25)) continue;
    const pick = own[rng.int(0, own.length - 1)] ?? 0;
    if (t.retweeted(pick) < 0 && t.inReplyTo(pick) < 0) user.pinnedTweetIds = [t.idString(pick)];
  }
}
