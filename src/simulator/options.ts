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
  quirks?: Partial<Quirks>;
  logger?: Logger;
}

export interface Faults {
  /** Probability that a keyed request answers 500 (it still costs one request). */
  errorRate500: number;
  /** Every `everyMs` (aligned to the epoch), every key gets 429 for `durationMs`. */
  burst429: { everyMs: number; durationMs: number } | null;
  /** Probability that a paged response is empty (200) with a cursor that continues. */
  emptyPageRate: number;
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
  /** Fields the spec does not list (made_with_ai, paid_partnership, …). */
  extraFields: boolean;
  /** Pages of 5, 12, 18 items (cycling) while more exist, instead of 20. */
  shortPages: boolean;
  /** Every /v2 path answers 410 naming its v3 counterpart. */
  v2Gone: boolean;
  /** A malformed or empty POST body answers an empty result instead of 400. */
  malformedBodyEmpty: boolean;
}

export const DEFAULT_FAULTS: Faults = {
  errorRate500: 0,
  burst429: null,
  emptyPageRate: 0,
  repeatCursorAfterPages: null,
  slowRate: 0,
  slowMs: 0,
};

export const DEFAULT_QUIRKS: Quirks = {
  legacyTimestamps: false,
  explicitNulls: true,
  extraFields: false,
  shortPages: false,
  v2Gone: false,
  malformedBodyEmpty: false,
};

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
  world: World;
  control: SimulatorControl;
  close(): Promise<void>;
}
