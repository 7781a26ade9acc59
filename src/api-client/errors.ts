/**
 * One error class per way a call to the service can fail, named by what the caller does about it
 * (STYLE: bullmq's error-steers-the-job). Data lives in readonly fields; messages are for people.
 *
 * No field or message ever holds the API key: keys are named by fingerprint, and a service message
 * that echoes the key back, whole or in part, is scrubbed before it is stored (see `scrubKey`).
 */
import { AbortedError, AppError, ErrorCode, InputError, type ErrorCodeValue } from '../errors.ts';
import { prepareSecrets, scrubSecretRuns } from '../secret-scrub.ts';

export interface ApiErrorContext {
  /** Method and route, no query: `POST /v3/search-tweets`, `GET /v2/info/{user_handle}`. */
  endpoint: string;
  keyFingerprint: string;
  /** HTTP status; 0 when no response arrived. */
  status: number;
  serviceMessage?: string | null;
  cause?: unknown;
}

export abstract class ApiError extends AppError {
  readonly status: number;
  readonly endpoint: string;
  readonly keyFingerprint: string;
  /** The `message` of the service's JSON error body, when it sent one. */
  readonly serviceMessage: string | null;

  protected constructor(code: ErrorCodeValue, message: string, context: ApiErrorContext) {
    super(code, message, context.cause === undefined ? undefined : { cause: context.cause });
    this.status = context.status;
    this.endpoint = context.endpoint;
    this.keyFingerprint = context.keyFingerprint;
    this.serviceMessage = context.serviceMessage ?? null;
  }
}

function describe(context: ApiErrorContext, what: string): string {
  const said = context.serviceMessage ? `: ${context.serviceMessage}` : '';
  return `${context.endpoint} ${what} (key ${context.keyFingerprint})${said}`;
}

/** 400: the request is wrong; the same request can never succeed. */
export class BadRequestError extends ApiError {
  constructor(context: ApiErrorContext) {
    super(ErrorCode.API_BAD_REQUEST, describe(context, 'rejected the request (400)'), context);
  }
}

/** 401: the key is missing, wrong or deleted; the key should be disabled. */
export class AuthError extends ApiError {
  constructor(context: ApiErrorContext) {
    super(ErrorCode.API_AUTH_FAILED, describe(context, 'refused the key (401)'), context);
  }
}

/** 403 or 402: quota exhausted or subscription expired; the key is parked until topped up. */
export class QuotaError extends ApiError {
  constructor(context: ApiErrorContext) {
    super(ErrorCode.API_QUOTA_EXHAUSTED, describe(context, `refused: quota or subscription (${context.status})`), context);
  }
}

/** 404: protected, suspended, deleted, renamed or unknown target. */
export class NotFoundError extends ApiError {
  constructor(context: ApiErrorContext) {
    super(ErrorCode.API_NOT_FOUND, describe(context, 'found nothing (404)'), context);
  }
}

/** The v3 counterparts of the v2 endpoints (service-production.md "v2-only endpoints of the spec"). */
const V3_COUNTERPART: Record<string, string> = {
  'POST /v2/comments': 'POST /v3/comments',
  'GET /v2/list-tweets': 'GET /v3/list-tweets',
  'POST /v2/user-tweets': 'POST /v3/user-tweets',
  'GET /v2/check-comment': 'GET /v3/check-comment',
  'POST /v2/tweet-info': 'POST /v3/tweet-info',
  'POST /v2/tweet-info-bulk': 'POST /v3/tweet-info-bulk',
  'GET /v2/info/{user_handle}': 'GET /v3/info',
  'GET /v2/follows': 'GET /v3/follows',
  'GET /v2/new-following-7d': 'GET /v3/new-following-7d',
  'POST /v2/check-quoted': 'POST /v3/check-quoted',
};

export function v3CounterpartOf(endpoint: string): string | null {
  return V3_COUNTERPART[endpoint] ?? null;
}

/** 410: a retired (v2) endpoint; permanent, switch to the v3 counterpart. */
export class GoneError extends ApiError {
  /** The v3 endpoint to use instead, when one exists. */
  readonly replacement: string | null;

  constructor(context: ApiErrorContext) {
    const replacement = v3CounterpartOf(context.endpoint);
    const path = context.endpoint.replace(/^[A-Z]+ /, '');
    const use = replacement ? `; use ${replacement}` : '';
    super(ErrorCode.API_GONE, `${path} is retired (410)${use} (key ${context.keyFingerprint})`, context);
    this.replacement = replacement;
  }
}

/** 429: too many requests on this key in the current one-second window. */
export class RateLimitedError extends ApiError {
  constructor(context: ApiErrorContext) {
    super(ErrorCode.API_RATE_LIMITED, describe(context, 'rate-limited the key (429)'), context);
  }
}

/** 5xx, time-outs, connection resets: the same request may succeed later. */
export class TransientError extends ApiError {
  /** undici / socket error code for transport failures (`UND_ERR_HEADERS_TIMEOUT`, `ECONNRESET`…). */
  readonly transportCode: string | null;
  /**
   * False when the request was never written: the connection could not be opened (refused,
   * unreachable) or the attempt ended while it waited for one. Nothing reached the service, so
   * the attempt is not recorded and its grant goes back to the gate (retry.ts).
   */
  readonly sent: boolean;

  constructor(context: ApiErrorContext & { transportCode?: string | null; detail?: string; sent?: boolean }) {
    const what = context.status === 0 ? `failed in transport (${context.detail ?? context.transportCode ?? 'no response'})` : `failed (${context.status})`;
    super(ErrorCode.API_TRANSIENT, describe(context, what), context);
    this.transportCode = context.transportCode ?? null;
    this.sent = context.sent ?? true;
  }
}

/** Whether an attempt's failure means its request never left this process (late grant, no connection, closed client). */
export function neverSent(error: unknown): boolean {
  return error instanceof LateGrantError || error instanceof UnsendableRequestError || ((error instanceof TransientError || error instanceof AbortedError) && !error.sent);
}

/** 2xx whose body is not JSON or does not have the documented shape. */
export class InvalidResponseError extends ApiError {
  /** What was wrong, e.g. `empty body`, `HTML page`, `truncated JSON`, a schema issue. */
  readonly reason: string;
  /** JSON of the wrong shape: the same request answers the same, so fetching it again cannot help. */
  readonly permanent: boolean;

  constructor(context: ApiErrorContext & { reason: string; permanent?: boolean }) {
    super(ErrorCode.API_INVALID_RESPONSE, describe(context, `answered an invalid body: ${context.reason}`), context);
    this.reason = context.reason;
    this.permanent = context.permanent ?? false;
  }
}

/** A status the spec does not list (other 3xx/4xx). */
export class UnexpectedStatusError extends ApiError {
  constructor(context: ApiErrorContext) {
    super(ErrorCode.API_UNEXPECTED_STATUS, describe(context, `answered an unexpected status ${context.status}`), context);
  }
}

/**
 * The attempt's grant came too late to be used: its request would have reached the service later
 * than its rate slot allows (the process stalled between grant and send), so it was not sent. The
 * retry layer gives the grant back and asks for another; nothing was spent at the service.
 */
export class LateGrantError extends AppError {
  readonly lateMs: number;

  constructor(lateMs: number) {
    super(ErrorCode.GRANT_LATE, `grant used ${Math.round(lateMs)} ms past its send-by time: not sent`);
    this.lateMs = lateMs;
  }
}

/**
 * A request that cannot be written: a parameter URL-encoding refuses (a lone UTF-16 surrogate).
 * Nothing reached the service, so it is not an attempt and its grant goes back; the same
 * parameters fail the same way every time, so the job fails (an input error).
 */
export class UnsendableRequestError extends InputError {
  constructor(endpoint: string, cause: unknown) {
    super(`${endpoint}: a request parameter cannot be encoded (${cause instanceof Error ? cause.message : String(cause)}); nothing was sent`, { cause });
  }
}

/**
 * Replaces the key (a service may echo it) with its fingerprint, and so any part of it the
 * service echoes truncated or masked: every run of `MIN_SCRUBBED_RUN` characters or more.
 */
export function scrubKey(text: string, key: string, fingerprint: string): string {
  return scrubSecretRuns(text, prepareSecrets([key]), fingerprint);
}

/** The error for a non-2xx status. */
export function errorForStatus(context: ApiErrorContext): ApiError {
  const s = context.status;
  if (s === 400) return new BadRequestError(context);
  if (s === 401) return new AuthError(context);
  if (s === 402 || s === 403) return new QuotaError(context);
  if (s === 404) return new NotFoundError(context);
  if (s === 410) return new GoneError(context);
  if (s === 429) return new RateLimitedError(context);
  if (s >= 500 && s <= 599) return new TransientError(context);
  return new UnexpectedStatusError(context);
}

/** Whether the retry layer may send the same request again. */
export function isRetryable(error: unknown): error is RateLimitedError | TransientError {
  return error instanceof RateLimitedError || error instanceof TransientError;
}
