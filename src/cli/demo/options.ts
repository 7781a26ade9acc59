/**
 * What the demo runs against and how big it is. The defaults are sized for "about a minute on a
 * 2-core box": a 150k-tweet world builds in ~1.5 s, and one search term matches ~10.8k tweets over
 * its two months, i.e. ~540 pages, ~27 s at the 20 req/s limit. Tests pass a smaller copy.
 */
import { DEFAULT_END_MS, DEFAULT_START_MS } from '../../simulator/world/index.ts';

export interface DemoOptions {
  seed: number;
  world: { users: number; tweets: number };
  /** Uniform simulator latency per response, [min, max] ms; realistic latency makes the rate limit visible. */
  latencyMs: [number, number];
  ratePerKey: number;
  /** The one key the in-process simulator accepts, and its quota. */
  key: string;
  quota: number;
  /** Search backfill window, YYYY-MM-DD, `until` exclusive. */
  since: string;
  until: string;
  /** How many days before the world's newest tweet the watch's first pass reads back. */
  watchDays: number;
  /** Mentions added between the two watch passes. */
  newMentions: number;
  /** A list whose members wrote more tweets than this is skipped: its tweets walk page by page (~20 per request). */
  listMaxTweets: number;
  /** Same for a community's members (20 per request). */
  communityMaxMembers: number;
  /** Database name on the server of DATABASE_URL; dropped and recreated on every run. */
  database: string;
  /** Redis key prefix; every key under it is deleted on every run. */
  redisPrefix: string;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export const DEMO_DEFAULTS: DemoOptions = {
  seed: 42,
  world: { users: 3000, tweets: 150_000 },
  latencyMs: [300, 800],
  ratePerKey: 20,
  key: 'demo-key',
  quota: 100_000,
  since: day(DEFAULT_START_MS),
  until: day(DEFAULT_END_MS),
  watchDays: 3,
  newMentions: 30,
  listMaxTweets: 600,
  communityMaxMembers: 240,
  database: 'harvest_demo',
  redisPrefix: 'harvest-demo',
};

/**
 * The same server, user and password as `databaseUrl`, another database. The user is already in
 * the URL: config's `resolveDatabaseUrl` fills in libpq's default.
 */
export function withDatabase(databaseUrl: string, name: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${encodeURIComponent(name)}`;
  return url.toString();
}
