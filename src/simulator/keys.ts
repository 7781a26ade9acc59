/**
 * Accepted keys, their quota and the per-key rate limit.
 *
 * Order of checks for a keyed request (server.ts): authenticate (401), rate window (429), quota
 * (403). A 429, 401 or 403 costs nothing; every request that reaches a route costs one unit,
 * whatever it answers (200, 400, 404, 500), which is what the spec's "every call consumes exactly
 * 1 request" means for failed calls.
 */
import { SimHttpError } from './http-utils.ts';

export const DEFAULT_QUOTA = 100_000;
const DEFAULT_VALIDITY_MS = 30 * 24 * 3600 * 1000;

interface KeyState {
  total: number;
  remaining: number;
  used: number;
  validUntil: string;
  /** Wall-clock second of the current rate window and the requests counted in it. */
  window: number;
  inWindow: number;
}

export interface KeyUsage {
  key_requests: number;
  remaining_requests: number;
  total_requests: number;
  valid_until: string;
}

export type KeySpec = string | { key: string; quota?: number; validUntil?: string };

export class KeyStore {
  readonly #keys = new Map<string, KeyState>();
  #ratePerKey: number;

  constructor(specs: readonly KeySpec[], ratePerKey: number) {
    this.#ratePerKey = ratePerKey;
    for (const spec of specs) {
      if (typeof spec === 'string') this.add(spec);
      else this.add(spec.key, spec.quota, spec.validUntil);
    }
  }

  add(key: string, quota = DEFAULT_QUOTA, validUntil?: string): void {
    this.#keys.set(key, {
      total: quota,
      remaining: quota,
      used: 0,
      validUntil: validUntil ?? new Date(Date.now() + DEFAULT_VALIDITY_MS).toISOString(),
      window: 0,
      inWindow: 0,
    });
  }

  remove(key: string): void {
    this.#keys.delete(key);
  }

  list(): string[] {
    return [...this.#keys.keys()];
  }

  /** Sets what is left; the plan total becomes used + remaining so the usage record stays consistent. */
  setQuota(key: string, remaining: number, validUntil?: string): void {
    const state = this.#keys.get(key);
    if (!state) {
      this.add(key, remaining, validUntil);
      return;
    }
    state.remaining = Math.max(0, Math.floor(remaining));
    state.total = state.used + state.remaining;
    if (validUntil !== undefined) state.validUntil = validUntil;
  }

  /**
   * The raw header list is searched for the exact name `ApiKey`: node lower-cases
   * `req.headers`, and the service rejects `apikey`, `Api-Key` and `Authorization`.
   */
  static presentedKey(rawHeaders: readonly string[]): string | null {
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      if (rawHeaders[i] === 'ApiKey') return rawHeaders[i + 1] ?? '';
    }
    return null;
  }

  /** 401 unless the exact key is accepted (no trimming: a key with whitespace is wrong). */
  authenticate(presented: string | null): string {
    if (presented === null) throw new SimHttpError(401, 'missing ApiKey header');
    if (!this.#keys.has(presented)) throw new SimHttpError(401, 'invalid API key');
    return presented;
  }

  /** Counts the request in its fixed one-second window; 429 beyond the limit. */
  admitRate(key: string, nowMs: number): void {
    const state = this.#keys.get(key);
    if (!state) throw new SimHttpError(401, 'invalid API key');
    const second = Math.floor(nowMs / 1000);
    if (state.window !== second) {
      state.window = second;
      state.inWindow = 0;
    }
    state.inWindow += 1;
    if (state.inWindow > this.#ratePerKey) throw new SimHttpError(429, `rate limit of ${this.#ratePerKey} requests per second exceeded`);
  }

  /** 403 when the quota is spent or the billing period has ended. */
  checkQuota(key: string, nowMs: number): void {
    const state = this.#keys.get(key);
    if (!state) throw new SimHttpError(401, 'invalid API key');
    if (Date.parse(state.validUntil) <= nowMs) throw new SimHttpError(403, 'subscription expired');
    if (state.remaining <= 0) throw new SimHttpError(403, 'request quota exhausted');
  }

  consume(key: string): void {
    const state = this.#keys.get(key);
    if (!state) return;
    state.used += 1;
    state.remaining = Math.max(0, state.remaining - 1);
  }

  usage(key: string): KeyUsage {
    const state = this.#keys.get(key);
    if (!state) throw new SimHttpError(401, 'invalid API key');
    return {
      key_requests: state.used,
      remaining_requests: state.remaining,
      total_requests: state.total,
      valid_until: state.validUntil,
    };
  }
}
