/** What a route handler sees of one request and of the simulator's state. */
import type { FaultState } from './faults.ts';
import type { KeyStore } from './keys.ts';
import type { World } from './model.ts';
import type { Quirks } from './options.ts';

export interface SimContext {
  readonly world: World;
  readonly quirks: Quirks;
  readonly faults: FaultState;
  readonly keys: KeyStore;
  /** The caller's key (already authenticated). */
  readonly key: string;
  readonly nowMs: number;
  readonly method: 'GET' | 'POST';
  readonly query: URLSearchParams;
  /** Parsed JSON object of a POST body; {} for GET. */
  readonly body: Record<string, unknown>;
  /** Path parameters of pattern routes, e.g. {handle}. */
  readonly params: Record<string, string>;
}

export type RouteHandler = (ctx: SimContext) => unknown;

export interface RouteDef {
  method: 'GET' | 'POST';
  path: string;
  handler: RouteHandler;
  /** What a malformed body answers under the malformedBodyEmpty quirk. */
  empty?: () => unknown;
  /** Served only while this holds (otherwise 404 like an unknown path). */
  when?: (quirks: Quirks) => boolean;
}
