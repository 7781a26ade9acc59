/** The API client's public surface. */
export { ApiClient, type ApiClientOptions } from './client.ts';
export type { AttemptRecord, CallOptions } from './executor.ts';
export type { CanonicalTweet, CanonicalUser, TweetEntity, TweetSource, UserSource } from './canonical.ts';
export type { AcquireOptions, AttemptOutcome, Grant, RequestGate, RequestPriority } from './gate.ts';
export {
  ApiError,
  AuthError,
  BadRequestError,
  GoneError,
  InvalidResponseError,
  NotFoundError,
  QuotaError,
  RateLimitedError,
  TransientError,
  UnexpectedStatusError,
  isRetryable,
  v3CounterpartOf,
} from './errors.ts';
export { InputError } from '../errors.ts';
export type { Page, Quarantined } from './page.ts';
export type { CommentCheck, KeyUsage, QuoteCheck, Space } from './results.ts';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.ts';
export { createStaticGate } from './static-gate.ts';
export { parseTimestamp } from './timestamps.ts';
export type { V2Client } from './v2.ts';
