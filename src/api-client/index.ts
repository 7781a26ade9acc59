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
export { tweetLinkOf } from './input.ts';
export { quarantineOf, type Page, type Quarantined } from './page.ts';
export type { CommentCheck, DatedUser, KeyUsage, QuoteCheck, ScoredUser, Space } from './results.ts';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.ts';
export { DEFAULT_DEADLINE_MS, DEFAULT_MAX_RESPONSE_BYTES, postJson } from './http.ts';
export { createStaticGate } from './static-gate.ts';
export { parseTimestamp } from './timestamps.ts';
export type { V2Client } from './v2.ts';
export type { CheckFollowParams, CheckParams, CheckRetweetParams, FollowCheck, RetweetCheck } from './v3-checks.ts';
export type {
  CheckCommunityMemberParams,
  CommunityParams,
  CommunitySearchTweetsParams,
  CommunityTweetsParams,
} from './v3-community.ts';
export type { Article, PlaceParams, Trend, TrendsParams } from './v3-lookups.ts';
export type { About, FollowersStats, ScoreChanges } from './v3-stats.ts';
export type {
  CommentsParams,
  ListTweetsParams,
  MentionsParams,
  SearchTweetsParams,
  TweetPagedParams,
  UserTweetsParams,
} from './v3-tweets.ts';
export type {
  InfoBatchParams,
  ListIdParams,
  ListLinkParams,
  PagedUserParams,
  SearchUsersParams,
  TweetUsersParams,
  UserRef,
} from './v3-users.ts';
export type {
  V2CheckParams,
  V2CommentsParams,
  V2FollowsParams,
  V2ListTweetsParams,
  V2NewFollowingParams,
  V2UserTweetsParams,
} from './v2.ts';
