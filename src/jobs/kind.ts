/**
 * What a job kind is. A job (one row of `jobs`) is planned into slices (rows of `job_slices`); a
 * slice is one cursor walk over one endpoint. The slice runner fetches a page with the slice's
 * handler, then commits it with the slice's new cursor in one transaction (store/commit-page).
 */
import type { z } from 'zod';
import type { ApiClient } from '../api-client/client.ts';
import type { CanonicalTweet, CanonicalUser } from '../api-client/canonical.ts';
import type { RequestPriority } from '../api-client/gate.ts';
import type { Logger } from '../logger.ts';

export type EdgeKind = 'list_member' | 'list_follower' | 'community_member' | 'follows';

export interface PageEdges {
  kind: EdgeKind;
  ownerId: string;
  userIds: string[];
}

/** One fetched page, ready to commit. */
export interface FetchedPage {
  endpoint: string;
  tweets: CanonicalTweet[];
  users: CanonicalUser[];
  edges?: PageEdges[];
  /** Provenance role of `users` in job_users. */
  userRole?: string;
  nextCursor: string | null;
  quarantined: Array<{ reason: string; payload: unknown }>;
  /** Items the page carried (valid + quarantined): 0 is an empty page. */
  itemCount: number;
  /** The handler decided the walk ends after this page (bound reached, watermark met): why, for the debug log. */
  stop?: string;
  /** Something the job's owner should read in `status` (ids not returned, an empty first page). */
  note?: string;
}

export interface SliceContext {
  client: ApiClient;
  signal: AbortSignal;
  priority: RequestPriority;
  jobId: string;
  sliceId: string;
  logger: Logger;
}

/** The page handler of one slice kind: fetch the page at `cursor` (null: the first). */
export interface SliceHandler<P = unknown> {
  readonly kind: string;
  readonly params: z.ZodType<P>;
  fetchPage(params: P, cursor: string | null, ctx: SliceContext): Promise<FetchedPage>;
}

export interface SliceSpec {
  kind: string;
  params: Record<string, unknown>;
}

export interface PlanContext {
  /** Requests per second the configured keys pool to. */
  pooledRate: number;
  /** Typical response time, for choosing how many slices run at once. */
  latencyMs: number;
  now: Date;
}

/** A job kind: its validated params and how it splits into slices. */
export interface JobKind<P = unknown> {
  readonly kind: string;
  readonly params: z.ZodType<P>;
  readonly priority: RequestPriority;
  plan(params: P, ctx: PlanContext): SliceSpec[];
}
