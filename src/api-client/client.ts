/**
 * The typed client: one method per documented endpoint (v3 here, v2 under `client.v2`), each
 * validating its parameters before spending a request, then going through the gate and the one
 * retry layer, and answering canonical Tweets/Users or typed records.
 */
import type { Logger } from '../logger.ts';
import { silentLogger } from '../logger.ts';
import type { CanonicalTweet, CanonicalUser } from './canonical.ts';
import { createExecutor, type AttemptRecord, type CallOptions, type Execute } from './executor.ts';
import type { RequestGate } from './gate.ts';
import { createHttpClient, type HttpClient, type HttpMethod, type QueryParams } from './http.ts';
import { InputError } from '../errors.ts';
import type { Page } from './page.ts';
import type { CommentCheck, KeyUsage, QuoteCheck, Space } from './results.ts';
import type { RetryPolicy } from './retry.ts';
import { checkQuoted as checkQuotedV2, createV2Client, type V2CheckParams, type V2Client } from './v2.ts';
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
  /** Called after every attempt (request accounting). */
  onAttempt?: (attempt: AttemptRecord) => void;
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

  /** Replies to a tweet (v3 counterpart of POST /v2/comments). */
  comments(params: t.CommentsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
    return t.comments(this.#execute, params, options);
  }

  quotes(params: t.TweetPagedParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
    return t.quotes(this.#execute, params, options);
  }

  tweetInfo(tweetLink: string, options?: CallOptions): Promise<CanonicalTweet> {
    return t.tweetInfo(this.#execute, tweetLink, options);
  }

  /** 1–100 tweet ids or links; more is an InputError before anything is sent. */
  tweetInfoBulk(ids: readonly string[], options?: CallOptions): Promise<Page<CanonicalTweet>> {
    return t.tweetInfoBulk(this.#execute, ids, options);
  }

  checkComment(params: t.CheckParams, options?: CallOptions): Promise<CommentCheck> {
    return t.checkComment(this.#execute, params, options);
  }

  /**
   * Whether a user quoted or retweeted a tweet. Only /v2 documents this check (no v3 route is
   * known), so this is POST /v2/check-quoted; once /v2 is retired it fails with GoneError.
   */
  checkQuoted(params: V2CheckParams, options?: CallOptions): Promise<QuoteCheck> {
    return checkQuotedV2(this.#execute, params, options);
  }

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

  communityMembers(params: u.CommunityParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
    return u.communityMembers(this.#execute, params, options);
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

  /** Accounts that retweeted a tweet. */
  retweets(params: u.TweetUsersParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
    return u.retweets(this.#execute, params, options);
  }

  searchUsers(params: u.SearchUsersParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
    return u.searchUsers(this.#execute, params, options);
  }

  /** An audio space by id or link. */
  place(params: u.PlaceParams, options?: CallOptions): Promise<Space> {
    return u.place(this.#execute, params, options);
  }

  /** Costs one request like every call, and goes through the gate like every call. */
  keyUsageInfo(options?: CallOptions): Promise<KeyUsage> {
    return u.keyUsageInfo(this.#execute, options);
  }

  usernameToId(handle: string, options?: CallOptions): Promise<string> {
    return u.usernameToId(this.#execute, handle, options);
  }

  idToUsername(userId: string, options?: CallOptions): Promise<string> {
    return u.idToUsername(this.#execute, userId, options);
  }

  linkToId(link: string, options?: CallOptions): Promise<string> {
    return u.linkToId(this.#execute, link, options);
  }

  /**
   * Any other path (`/v3/about`, `/v3/score`…), answered as parsed JSON. Gate, retries, errors and
   * accounting are the same as for the typed methods; the shape is the caller's to validate.
   */
  async raw(method: HttpMethod, path: string, request: { query?: QueryParams; body?: unknown } = {}, options?: CallOptions): Promise<unknown> {
    if (!/^\/v[23]\/[A-Za-z0-9_\-/.%]+$/.test(path)) {
      throw new InputError(`raw path must look like /v3/<endpoint>: ${JSON.stringify(path)}`);
    }
    return this.#execute({ method, route: path, query: request.query, body: request.body, read: (json) => json }, options);
  }

  /** Destroys the connection pools; calls in flight fail. */
  close(): Promise<void> {
    return this.#http.close();
  }
}
