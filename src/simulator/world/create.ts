import type { World } from '../model.ts';
import { InputError } from '../../errors.ts';
import { generateFollows, generateGroups, pinTweets } from './gen-groups.ts';
import { generateTweets } from './gen-tweets.ts';
import { generateUsers } from './gen-users.ts';
import { createRng } from './random.ts';
import { SimWorld } from './sim-world.ts';

export type WorldScale = 'small' | 'large' | { users: number; tweets: number };

export interface CreateWorldOptions {
  /** Default 1. The same seed gives the same world, byte for byte. */
  seed?: number;
  /** Default 'small': 500 users, 5,000 tweets. 'large': 50,000 users, 1,000,000 tweets. */
  scale?: WorldScale;
  /** Default 2026-09-01T00:00:00Z. */
  startMs?: number;
  /** Default 2026-11-01T00:00:00Z. */
  endMs?: number;
}

export const DEFAULT_START_MS = Date.UTC(2026, 8, 1);
export const DEFAULT_END_MS = Date.UTC(2026, 10, 1);

// Small has 500 users, not fewer: a celebrity with 450+ distinct followers and a list with 450
// followers (three 200-per-page pages) need that many accounts.
const SCALES = {
  small: { users: 500, tweets: 5_000 },
  large: { users: 50_000, tweets: 1_000_000 },
} as const;

/** Generates a deterministic world from a seed. */
export function createWorld(options: CreateWorldOptions = {}): World {
  const seed = options.seed ?? 1;
  const scale = typeof options.scale === 'object' ? options.scale : SCALES[options.scale ?? 'small'];
  const startMs = options.startMs ?? DEFAULT_START_MS;
  const endMs = options.endMs ?? DEFAULT_END_MS;
  if (!(endMs > startMs) || !Number.isInteger(scale.users) || !Number.isInteger(scale.tweets) || scale.tweets < 0) {
    throw new InputError('createWorld needs startMs < endMs and whole, non-negative counts');
  }
  const rng = createRng(seed);
  const { users, traits } = generateUsers(rng, scale.users, startMs);
  const world = new SimWorld(seed, users, Math.max(1024, scale.tweets + 256));
  generateTweets(world, rng, traits, scale.tweets, startMs, endMs);
  world.indexUsers();
  generateFollows(world, rng, traits);
  generateGroups(world, rng, startMs, endMs);
  pinTweets(world, rng);
  return world;
}
