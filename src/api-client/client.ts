/**
 * The typed client: one method per endpoint of production's v3 reference (all 40, with production's
 * methods, paths and field names; service-production.md) and the spec's v2 endpoints under
 * `client.v2`. Each validates its parameters before spending a request, then goes through the gate
 * and the one retry layer, and answers canonical Tweets/Users or typed records.
 */
import type { Logger } from '../logger.ts';
import { silentLogger } from '../logger.ts';
import type { CanonicalTweet, CanonicalUser } from './canonical.ts';
import { createExecutor, type AttemptRecord, type CallOptions, type Execute } from './executor.ts';
import type { RequestGate } from './gate.ts';
import { createHttpClient, type HttpClient, type HttpMethod, type QueryParams } from './http.ts';
import { InputError } from '../errors.ts';
import type { Page } from './page.ts';
import type { CommentCheck, DatedUser, KeyUsage, QuoteCheck, ScoredUser, Space } from './results.ts';
import type { RetryPolicy } from './retry.ts';
import { createV2Client, type V2Client } from './v2.ts';
import * as ck from './v3-checks.ts';
import * as cm from './v3-community.ts';
import * as lk from './v3-lookups.ts';
import * as st from './v3-stats.ts';
import * as t from './v3-tweets.ts';
import * as u from './v3-users.ts';

export interface ApiClientOptions {
  /** Service address without the version segment; https unless loopback. */
  baseUrl: string;
  gate: RequestGate;
  /** Idle time-out of one attempt, for the headers and each body chunk (default 30 000 ms). */
  timeoutMs?: number;
  /** Overall deadline of one attempt, headers and body together (default 60 000 ms). */
  deadlineMs?: number;
  /** Largest response body accepted, in bytes (default 32 MiB); larger is an InvalidResponseError. */
  maxResponseBytes?: number;
  /** Keep-alive connections per origin (default 32). */
  connections?: number;
  logger?: Logger;
  retry?: Partial<RetryPolicy>;
  /**
   * Called after every attempt (metrics, and request accounting of calls that pass no
   * `attempts` list: `collected` is false for those).
   */
  onAttempt?: (attempt: AttemptRecord, collected: boolean) => void;
}

export class ApiClient {
  readonly v2: V2Client;
  readonly #http: HttpClient;
  readonly #execute: Execute;

  constructor(options: ApiClientOptions) {
    this.#http = createHttpClient({
      baseUrl: options.baseUrl,
      timeoutMs: options.timeoutMs,
      deadlineMs: options.deadlineMs,
      maxResponseBytes: options.maxResponseBytes,
      connections: options.connections,
    });
    this.#execute = createExecutor({
      http: this.#http,
      gate: options.gate,
      logger: (options.logger ?? silentLogger).child({ component: 'api-client' }),
      retry: options.retry,
      onAttempt: options.onAttempt,
    });
    this.v2 = createV2Client(this.#execute);
  }

  // Tweets: POST /v3/search-tweets, /mentions, /user-tweets, /comments, /quotes, /tweet-info,
  // /tweet-info-bulk; GET /v3/list-tweets.

  searchTweets(params: t.SearchTweetsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
    return t.searchTweets(this.#execute, params, options);
  }

  mentions(params: t.MentionsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
    return t.mentions(this.#execute, params, options);
  }

  userTweets(params: t.UserTweetsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
    return t.userTweets(this.#execute, params, options);
  }

  listTweets(params: t.ListTweetsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
    return t.listTweets(this.#execute, params, options);
  }

  /** Replies to a tweet (v3 counterpart of POST /v2/comments; answers `tweets`). */
  comments(params: t.CommentsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
    return t.comments(this.#execute, params, options);
  }

  quotes(params: t.TweetPagedParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
    return t.quotes(this.#execute, params, options);
  }

  tweetInfo(tweetLink: string, options?: CallOptions): Promise<CanonicalTweet> {
    return t.tweetInfo(this.#execute, tweetLink, options);
  }

  /** 1–100 tweet ids or links, posted as `tweet_links`; more is an InputError before anything is sent. */
  tweetInfoBulk(ids: readonly string[], options?: CallOptions): Promise<Page<CanonicalTweet>> {
    return t.tweetInfoBulk(this.#execute, ids, options);
  }

  // Communities: POST /v3/community-members, /community-tweets, /community-search-tweets,
  // /check-community-member.

  communityMembers(params: cm.CommunityParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
    return cm.communityMembers(this.#execute, params, options);
  }

  communityTweets(params: cm.CommunityTweetsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
    return cm.communityTweets(this.#execute, params, options);
  }

  communitySearchTweets(params: cm.CommunitySearchTweetsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
    return cm.communitySearchTweets(this.#execute, params, options);
  }

  checkCommunityMember(params: cm.CheckCommunityMemberParams, options?: CallOptions): Promise<boolean> {
    return cm.checkCommunityMember(this.#execute, params, options);
  }

  // Checks: GET /v3/check-comment; POST /v3/check-quoted, /check-retweet, /check-follow.

  checkComment(params: ck.CheckParams, options?: CallOptions): Promise<CommentCheck> {
    return ck.checkComment(this.#execute, params, options);
  }

  /** Whether a user quoted or retweeted a tweet (`status`: quoted, retweet or not_found). */
  checkQuoted(params: ck.CheckParams, options?: CallOptions): Promise<QuoteCheck> {
    return ck.checkQuoted(this.#execute, params, options);
  }

  checkRetweet(params: ck.CheckRetweetParams, options?: CallOptions): Promise<ck.RetweetCheck> {
    return ck.checkRetweet(this.#execute, params, options);
  }

  checkFollow(params: ck.CheckFollowParams, options?: CallOptions): Promise<ck.FollowCheck> {
    return ck.checkFollow(this.#execute, params, options);
  }

  // Users: GET /v3/info, /info-batch, /followers, /follows, /verified-followers, /list-members,
  // /list-followers; POST /v3/search-users, /retweeters.

  info(user: u.UserRef, options?: CallOptions): Promise<CanonicalUser> {
    return u.info(this.#execute, user, options);
  }

  infoBatch(params: u.InfoBatchParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
    return u.infoBatch(this.#execute, params, options);
  }

  listFollowers(params: u.ListLinkParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
    return u.listFollowers(this.#execute, params, options);
  }

  listMembers(params: u.ListIdParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
    return u.listMembers(this.#execute, params, options);
  }

  follows(params: u.PagedUserParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
    return u.follows(this.#execute, params, options);
  }

  followers(params: u.PagedUserParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
    return u.followers(this.#execute, params, options);
  }

  verifiedFollowers(params: u.PagedUserParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
    return u.verifiedFollowers(this.#execute, params, options);
  }

  /** Accounts that retweeted a tweet, newest first. */
  retweeters(params: u.TweetUsersParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
    return u.retweeters(this.#execute, params, options);
  }

  searchUsers(params: u.SearchUsersParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
    return u.searchUsers(this.#execute, params, options);
  }

  // The service's index: GET /v3/about, /score, /score-changes, /followers-stats, /top-followers,
  // /top-following, /new-followers-7d, /new-following-7d.

  about(user: u.UserRef, options?: CallOptions): Promise<st.About> {
    return st.about(this.#execute, user, options);
  }

  score(user: u.UserRef, options?: CallOptions): Promise<number> {
    return st.score(this.#execute, user, options);
  }

  scoreChanges(user: u.UserRef, options?: CallOptions): Promise<st.ScoreChanges> {
    return st.scoreChanges(this.#execute, user, options);
  }

  followersStats(user: u.UserRef, options?: CallOptions): Promise<st.FollowersStats> {
    return st.followersStats(this.#execute, user, options);
  }

  topFollowers(user: u.UserRef, options?: CallOptions): Promise<Page<ScoredUser>> {
    return st.topFollowers(this.#execute, user, options);
  }

  topFollowing(user: u.UserRef, options?: CallOptions): Promise<Page<ScoredUser>> {
    return st.topFollowing(this.#execute, user, options);
  }

  newFollowers7d(user: u.UserRef, options?: CallOptions): Promise<Page<DatedUser>> {
    return st.newFollowers7d(this.#execute, user, options);
  }

  newFollowing7d(user: u.UserRef, options?: CallOptions): Promise<Page<DatedUser>> {
    return st.newFollowing7d(this.#execute, user, options);
  }

  // Lookups: POST /v3/article; GET /v3/trends, /place, /key-usage-info, /username-to-id/{user_handle},
  // /id-to-username/{user_id}, /link-to-id.

  article(tweetLink: string, options?: CallOptions): Promise<lk.Article> {
    return lk.article(this.#execute, tweetLink, options);
  }

  trends(params: lk.TrendsParams, options?: CallOptions): Promise<Page<lk.Trend>> {
    return lk.trends(this.#execute, params, options);
  }

  /** An audio Space by id or link. */
  place(params: lk.PlaceParams, options?: CallOptions): Promise<Space> {
    return lk.place(this.#execute, params, options);
  }

  /** Costs one request like every call, and goes through the gate like every call. */
  keyUsageInfo(options?: CallOptions): Promise<KeyUsage> {
    return lk.keyUsageInfo(this.#execute, options);
  }

  usernameToId(handle: string, options?: CallOptions): Promise<string> {
    return lk.usernameToId(this.#execute, handle, options);
  }

  idToUsername(userId: string, options?: CallOptions): Promise<string> {
    return lk.idToUsername(this.#execute, userId, options);
  }

  linkToId(link: string, options?: CallOptions): Promise<string> {
    return lk.linkToId(this.#execute, link, options);
  }

  /**
   * A path no typed method covers (every documented endpoint has one), answered as parsed JSON.
   * Gate, retries, errors and accounting are the same as for the typed methods; the shape is the
   * caller's to validate.
   */
  async raw(method: HttpMethod, path: string, request: { query?: QueryParams; body?: unknown } = {}, options?: CallOptions): Promise<unknown> {
    if (!/^\/v[23]\/[A-Za-z0-9_\-/.%]+$/.test(path)) {
      throw new InputError(`raw path must look like /v3/<endpoint>: ${JSON.stringify(path)}`);
    }
    return this.#execute({ method, route: path, query: request.query, body: request.body, read: (json) => json }, options);
  }

  /** Attempts sent and not answered yet. */
  get inFlight(): number {
    return this.#http.inFlight;
  }

  /** Destroys the connection pools; calls in flight fail. */
  close(): Promise<void> {
    return this.#http.close();
  }
}
