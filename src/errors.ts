/**
 * The error registry. Every error the harvester raises on purpose is an AppError with a stable
 * `code`; callers classify by `code` (or by HTTP status / SQLSTATE below it), never by message
 * or by class. Each code belongs to exactly one class, so a caller that has matched a code may
 * read that class's fields. Subclasses are named by what the caller does about them.
 */
export const ErrorCode = {
  /** Configuration (environment, .env) is missing or malformed. */
  CONFIG_INVALID: 'CONFIG_INVALID',
  /** Input from a person (CLI arguments, files) is malformed. */
  INPUT_INVALID: 'INPUT_INVALID',
  /** 400: the request was wrong; retrying the same request cannot help. */
  API_BAD_REQUEST: 'API_BAD_REQUEST',
  /** 401 on one key: that key is missing, wrong or deleted; the gate disables it, other keys carry on. */
  API_AUTH_FAILED: 'API_AUTH_FAILED',
  /** Every configured key was refused (401): nothing will grant until the configuration changes. */
  KEYS_REFUSED: 'KEYS_REFUSED',
  /** 403 (or 402) on one key: its quota is spent or its subscription expired; the gate parks it. */
  API_QUOTA_EXHAUSTED: 'API_QUOTA_EXHAUSTED',
  /** No configured key can grant (all parked, disabled or at their quota floor): the job waits. */
  KEYS_EXHAUSTED: 'KEYS_EXHAUSTED',
  /** 404: protected, suspended, deleted, renamed or unknown target. */
  API_NOT_FOUND: 'API_NOT_FOUND',
  /** 410: the endpoint (a /v2 path) is retired; use its v3 counterpart. */
  API_GONE: 'API_GONE',
  /** 429: too many requests on this key in the current one-second window. */
  API_RATE_LIMITED: 'API_RATE_LIMITED',
  /** 5xx, time-outs, resets: the same request may succeed later. */
  API_TRANSIENT: 'API_TRANSIENT',
  /** 200 with a body that is not JSON or does not have the documented shape. */
  API_INVALID_RESPONSE: 'API_INVALID_RESPONSE',
  /** A status the spec does not list (other 4xx). */
  API_UNEXPECTED_STATUS: 'API_UNEXPECTED_STATUS',
  /** A job's request budget (--max-requests) is spent. */
  BUDGET_EXHAUSTED: 'BUDGET_EXHAUSTED',
  /** A grant's send-by time passed before its request went out: it was never sent, and is given back. */
  GRANT_LATE: 'GRANT_LATE',
  /** The operation was aborted (shutdown, cancel). */
  ABORTED: 'ABORTED',
  /** Postgres cannot be reached (refused, unknown host, bad credentials, time-out). */
  DB_UNAVAILABLE: 'DB_UNAVAILABLE',
  /** Redis cannot be reached (refused, unknown host, time-out). */
  REDIS_UNAVAILABLE: 'REDIS_UNAVAILABLE',
  /** A landed migration file was edited (checksum differs from the ledger), or the ledger is ahead of the code. */
  DB_MIGRATION_CONFLICT: 'DB_MIGRATION_CONFLICT',
  /** A page commit lost its optimistic guard: the slice's cursor or status moved on; drop the page. */
  STALE_SLICE: 'STALE_SLICE',
  /** Redis lost the schedule (no reconcile epoch, or a job's budget is missing): the limiter refused until a reconcile; re-queue the work. */
  LIMITER_STATE_LOST: 'LIMITER_STATE_LOST',
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

export class AppError extends Error {
  readonly code: ErrorCodeValue;

  constructor(code: ErrorCodeValue, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

export class ConfigError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.CONFIG_INVALID, message, options);
  }
}

export class InputError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.INPUT_INVALID, message, options);
  }
}

export class AbortedError extends AppError {
  /**
   * False when the request it ended was never written (the client was closed, or the abort came
   * while it waited for a connection): nothing reached the service. True, the default, when it may
   * have: an abort mid-exchange is an attempt like any transport end.
   */
  readonly sent: boolean;

  constructor(message = 'aborted', options: { sent?: boolean } = {}) {
    super(ErrorCode.ABORTED, message);
    this.sent = options.sent ?? true;
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
