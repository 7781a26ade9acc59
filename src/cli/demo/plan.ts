/**
 * What the demo harvests, picked from the generated world so every step has something to show
 * and stays short. Pure and deterministic: the same world gives the same plan.
 */
import type { World } from '../../simulator/model.ts';
import { isListedUser } from '../../simulator/render-v3.ts';
import { catalog } from '../../simulator/world/index.ts';
import type { DemoOptions } from './options.ts';

export interface DemoPlan {
  term: string;
  celebrity: string;
  /** YYYY-MM-DD: the watch's first pass reads back to here. */
  watchSince: string;
  list: { id: string; name: string; members: number; followers: number; memberTweets: number };
  community: { id: string; name: string; members: number };
}

const DAY_MS = 86_400_000;

export function planDemo(world: World, options: DemoOptions): DemoPlan {
  const cat = catalog(world);
  const term = cat.searchTerms.find((t) => !t.startsWith('#')) ?? cat.searchTerms[0];
  if (!term) throw new Error('the demo world has no search term');
  const newest = world.tweets.count > 0 ? world.tweets.createdAtMs(world.tweets.count - 1) : Date.now();
  const floorMs = newest - options.watchDays * DAY_MS;
  const isPublic = (h: string) => {
    const u = world.userByHandle(h);
    return u !== undefined && !u.protected && !u.suspended && !u.deleted;
  };
  const recentMentions = (h: string) => {
    const u = world.userByHandle(h);
    return u ? world.mentionsOf(u.index).filter((i) => world.tweets.createdAtMs(i) >= floorMs).length : 0;
  };
  // A mid-sized celebrity: enough recent mentions for a few pages, not hundreds.
  const celebrities = cat.celebrities.filter(isPublic).map((h) => ({ h, n: recentMentions(h) }));
  const celebrity =
    celebrities.filter((c) => c.n >= 20 && c.n <= 200).sort((a, b) => b.n - a.n)[0]?.h ??
    celebrities.sort((a, b) => a.n - b.n)[0]?.h;
  if (!celebrity) throw new Error('the demo world has no celebrity to watch');

  // Members and followers as the service lists them (suspended and deleted accounts are not
  // listed): the heading's counts are what the crawl can store.
  const listed = (users: readonly number[]): number => users.filter((u) => isListedUser(world.users[u])).length;
  // A list's tweets are walked one page (~20) at a time, so its member tweets bound its duration:
  // prefer the list with most followers among those that stay short, else the shortest.
  const lists = world.lists.map((l) => ({
    id: l.id,
    name: l.name,
    members: listed(l.members),
    followers: listed(l.followers),
    memberTweets: l.members.reduce((sum, u) => sum + world.tweetsByAuthor(u).length, 0),
  }));
  const list =
    lists
      .filter((l) => l.memberTweets <= options.listMaxTweets && l.members > 0)
      .sort((a, b) => b.followers - a.followers || b.members - a.members)[0] ?? lists.sort((a, b) => a.memberTweets - b.memberTweets)[0];
  if (!list) throw new Error('the demo world has no list');

  const communities = world.communities.map((c) => ({ id: c.id, name: c.name, members: listed(c.members) }));
  const community =
    communities.filter((c) => c.members <= options.communityMaxMembers).sort((a, b) => b.members - a.members)[0] ??
    communities.sort((a, b) => a.members - b.members)[0];
  if (!community) throw new Error('the demo world has no community');

  return { term, celebrity, watchSince: new Date(floorMs).toISOString().slice(0, 10), list, community };
}
