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
