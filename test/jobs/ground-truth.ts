/** What the simulator's own search engine says a query matches: the exact set a job must store. */
import { searchTweets } from '../../src/simulator/search/index.ts';
import type { World } from '../../src/simulator/model.ts';

export function expectedSearchIds(world: World, query: string): string[] {
  const ids: bigint[] = [];
  let state: string | undefined;
  for (;;) {
    const page = searchTweets(world, { query, order: 'latest', limit: 500, ...(state ? { state } : {}) });
    for (const i of page.indices) ids.push(world.tweets.id(i));
    if (page.nextState === null) break;
    state = page.nextState;
  }
  return ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map(String);
}

/** Ids of `count` tweets the service returns (authors neither protected, suspended nor deleted), every `step`th tweet. */
export function visibleTweetIds(world: World, count: number, step: number): string[] {
  const ids: string[] = [];
  for (let i = 0; i < world.tweets.count && ids.length < count; i += step) {
    const u = world.users[world.tweets.author(i)]!;
    if (!u.protected && !u.suspended && !u.deleted) ids.push(world.tweets.idString(i));
  }
  return ids;
}
