export { buildWorld } from './build.ts';
export type { UserInput, TweetInput, ListInput, CommunityInput, SpaceInput, WorldInput } from './build.ts';
export { createWorld, DEFAULT_START_MS, DEFAULT_END_MS } from './create.ts';
export type { CreateWorldOptions, WorldScale } from './create.ts';
export { catalog } from './catalog.ts';
export type { WorldCatalog } from './catalog.ts';
export { CELEBRITIES, SEARCH_TERMS } from './vocabulary.ts';
