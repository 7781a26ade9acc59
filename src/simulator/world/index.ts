export { buildWorld } from './build.ts';
export type { UserInput, TweetInput, ListInput, CommunityInput, SpaceInput, WorldInput } from './build.ts';
