/**
 * The simulator's public option and control types. Kept apart from server.ts so route modules can
 * name them without importing the server.
 */
import type { Logger } from '../logger.ts';
import type { NewTweetSpec, World } from './model.ts';

export interface SimulatorOptions {
  /** Default 0 (any free port). */
  port?: number;
  /** Default '127.0.0.1'. */
  host?: string;
  /** Accepted keys. Default ['sim-key']; default quota 100000; default validity 30 days from start. */
  keys?: Array<string | { key: string; quota?: number; validUntil?: string }>;
  seed?: number;
  scale?: 'small' | 'large';
  /** A prebuilt world; when given, seed and scale are ignored. */
  world?: World;
  /** Requests per key per fixed wall-clock second. Default 20. */
  ratePerKey?: number;
  /** Uniform latency added to every response, [min, max] ms. Default [0, 0]. */
  latencyMs?: [number, number];
  faults?: Partial<Faults>;
  /**
   * Default 'production': the service as production's v3 reference and the captured real answer
   * show it (service-production.md). 'spec': service-spec.md as written (v2 live, ISO
   * timestamps, absent empties). The profile only picks the starting quirks; `quirks` override.
   */
  profile?: SimulatorProfile;
  quirks?: Partial<Quirks>;
  logger?: Logger;
}

export type SimulatorProfile = 'production' | 'spec';
export const SIMULATOR_PROFILES = ['production', 'spec'] as const satisfies readonly SimulatorProfile[];

export interface Faults {
  /** Probability that a keyed request answers 500 (it still costs one request). */
  errorRate500: number;
  /** Every `everyMs` (aligned to the epoch), every key gets 429 for `durationMs`. */
  burst429: { everyMs: number; durationMs: number } | null;
  /** Probability that a paged response is empty (200) with a cursor that continues. */
  emptyPageRate: number;
  /**
   * Probability that a paged response is empty (200) with no cursor: the outage that answered
   * every endpoint empty (service-notes), which reads as the end of the results.
   */
  emptyEndRate: number;
  /** After this many pages of a walk, next_cursor repeats the cursor received. */
  repeatCursorAfterPages: number | null;
  /** Probability that a response is delayed by `slowMs` on top of the latency. */
  slowRate: number;
  slowMs: number;
}

export interface Quirks {
  /** v3 created_at in the legacy form `Sun Aug 02 13:30:00 +0000 2026` instead of ISO 8601. */
  legacyTimestamps: boolean;
  /** Empty values as explicit null (production); off: absent fields and [] arrays (the spec). */
  explicitNulls: boolean;
  /** Fields the spec does not list: tweets carry made_with_ai and paid_partnership (as the real answer). */
  extraFields: boolean;
  /** Pages of 5, 12, 18 items (cycling) while more exist, instead of 20. */
  shortPages: boolean;
  /** Every /v2 path answers 410 naming its v3 counterpart. */
  v2Gone: boolean;
  /** A malformed or empty POST body answers an empty result instead of 400. */
  malformedBodyEmpty: boolean;
  /**
   * v3 full_text with its t.co links expanded and the tweet's media addresses appended; entities
   * hold media only (no url entities) and photos have `preview: ""`. Off: the text keeps its t.co
   * links and entities list media then `{type: 'url'}` links (the spec's reading).
   */
  expandedText: boolean;
  /**
   * next_cursor of /v3/followers, /v3/follows and /v3/list-members as a JSON number (exact digits,
   * above 2^53), where the reference types the cursor as int64. Off: a numeric-looking string.
   */
  integerCursors: boolean;
  /**
   * The last page of /v3/followers, /v3/follows and /v3/list-members answers next_cursor "0" (a
   * number under integerCursors), the int64-cursor convention of the platform's older API, instead
   * of null. Nothing says production does; a client must end the walk there either way.
   */
  zeroEndCursors: boolean;
  /**
   * The first page of /v3/user-tweets starts with the user's pinned tweet, however old (as the
   * platform's profile shows it), before the newest-first timeline. Off in both profiles: nothing
   * in production's reference says; the client's timeline walk allows for it either way.
   */
  pinnedHead: boolean;
  /** The order of /v3/search-tweets and /v3/community-search-tweets when the body names none. */
  searchDefaultOrder: 'latest' | 'popular';
  /**
   * key-usage-info as production's reference reads it: key_requests is the period's allotment and
   * total_requests the requests used. Off: the spec's reading (used this period / plan quota).
   */
  usageAllotment: boolean;
  /** Also serve the spec's POST /v3/retweets (production only has /v3/retweeters). */
  retweetsPath: boolean;
}

export const DEFAULT_FAULTS: Faults = {
  errorRate500: 0,
  burst429: null,
  emptyPageRate: 0,
  emptyEndRate: 0,
  repeatCursorAfterPages: null,
  slowRate: 0,
  slowMs: 0,
};

/** service-spec.md as written. */
export const SPEC_QUIRKS: Quirks = {
  legacyTimestamps: false,
  explicitNulls: false,
  extraFields: false,
  shortPages: false,
  v2Gone: false,
  malformedBodyEmpty: false,
  expandedText: false,
  integerCursors: false,
  zeroEndCursors: false,
  pinnedHead: false,
  searchDefaultOrder: 'latest',
  usageAllotment: false,
  retweetsPath: true,
};

/**
 * Production as service-production.md and the captured answer show it. Short pages and empty
 * answers to malformed bodies stay opt-in: they are faults to defend against, not shapes.
 * search-tweets states no default order; its reference's example asks for `popular` (the
 * platform's "Top"), so a body without `order` gets popular results.
 */
export const PRODUCTION_QUIRKS: Quirks = {
  legacyTimestamps: true,
  explicitNulls: true,
  extraFields: true,
  shortPages: false,
  v2Gone: true,
  malformedBodyEmpty: false,
  expandedText: true,
  integerCursors: true,
  zeroEndCursors: false,
  pinnedHead: false,
  searchDefaultOrder: 'popular',
  usageAllotment: true,
  retweetsPath: false,
};

/** The demo, the tests and the benches meet the service as production answers. */
export const DEFAULT_PROFILE: SimulatorProfile = 'production';

/** The default profile's quirks. */
export const DEFAULT_QUIRKS: Quirks = PRODUCTION_QUIRKS;

/** A profile's quirks with explicit quirk options on top; no profile is the default profile. */
export function quirksFor(profile: SimulatorProfile | undefined, overrides: Partial<Quirks> = {}): Quirks {
  const base = profile === undefined ? DEFAULT_QUIRKS : profile === 'spec' ? SPEC_QUIRKS : PRODUCTION_QUIRKS;
  return { ...base, ...overrides };
}

export interface RequestLogEntry {
  method: string;
  /** Path without the query string. */
  path: string;
  keyFingerprint: string | null;
  status: number;
  /** Epoch ms when the request arrived. */
  at: number;
  durationMs: number;
}

export interface SimulatorStats {
  requests: number;
  byStatus: Record<string, number>;
  /** By key fingerprint ('none' when no ApiKey header was sent). */
  byKey: Record<string, number>;
}

export interface SimulatorControl {
  addTweets(specs: NewTweetSpec[]): string[];
  /** An account takes a new handle (the old one answers 404 until another account takes it). */
  renameUser(handle: string, newHandle: string): void;
  setQuota(key: string, remaining: number, validUntil?: string): void;
  removeKey(key: string): void;
  addKey(key: string, quota?: number): void;
  setFaults(f: Partial<Faults>): void;
  setQuirks(q: Partial<Quirks>): void;
  requestLog(): RequestLogEntry[];
  clearRequestLog(): void;
  stats(): SimulatorStats;
}

export interface RunningSimulator {
  /** e.g. http://127.0.0.1:54321 (no version segment). */
  url: string;
  /** The profile it started with (quirks may since have been changed). */
  profile: SimulatorProfile;
  world: World;
  control: SimulatorControl;
  close(): Promise<void>;
}
