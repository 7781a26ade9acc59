/**
 * What a failed page means for its slice and job: a pure function from the error's `code` (and
 * the run's context) to a decision the slice runner carries out. Classified by code only: each
 * code belongs to one error class (src/errors.ts), so once the code matches, that class's fields
 * may be read.
 */
import { z } from 'zod';
import type { InvalidResponseError } from '../api-client/errors.ts';
import { AppError, ErrorCode } from '../errors.ts';
import type { QuotaExhaustedError } from './limiter/errors.ts';

export type ErrorDecision =
  /** The job cannot succeed as asked: it fails now, its other slices stop. */
  | { kind: 'fail-job'; code: string; message: string }
  /** This slice is over (its target is gone); the job goes on and reads the note. */
  | { kind: 'finish-slice'; note: string }
  /** This slice failed for good (its page's requests are spent, or the answer is wrong for good); the job goes on and fails at its roll-up. */
  | { kind: 'fail-slice'; code: string; message: string }
  /** Fetch the same page again at `atMs`, in this run: the page has requests left. */
  | { kind: 'refetch'; atMs: number }
  /** No key can grant: the job is parked and the slice re-queued for `atMs`. */
  | { kind: 'park'; atMs: number; note: string }
  /** The gate has already steered around the cause (a key disabled or parked): ask again now. */
  | { kind: 'continue' }
  /** Back to the queue for `atMs`, without counting an attempt. */
  | { kind: 'retry-later'; atMs: number }
  /** The job ends successfully, early (its budget is spent). */
  | { kind: 'end-job'; note: string }
  /** Not a request's failure (database, a bug), with no progress in this run: the queue's backoff counts the attempt. */
  | { kind: 'rethrow' };

export interface ErrorContext {
  nowMs: number;
  /** Whether this run committed a page before the error: a failure after progress is a new problem. */
  progressed: boolean;
  /** How long to park a job when no key says when it can grant again (HARVEST_QUOTA_RECHECK_MS). */
  quotaRecheckMs: number;
  /** Delay before a slice that made progress tries again, and before a page is fetched again. */
  transientRetryMs: number;
  /** Tries of this page in this run so far: its requests (the failed call's attempts included) and tries that never connected. */
  pageRequests: number;
  /** Tries one page may cost before its slice fails (HARVEST_MAX_ATTEMPTS_PER_PAGE): requests, and tries that never connected. */
  maxAttemptsPerPage: number;
}

/** Tries one page may cost by default before its slice fails (HARVEST_MAX_ATTEMPTS_PER_PAGE). */
export const DEFAULT_MAX_ATTEMPTS_PER_PAGE = 6;

/** A parked job never asks again sooner than this (a retryAt in the past or just now). */
export const MIN_PARK_MS = 1000;

export function decideOnError(error: unknown, ctx: ErrorContext): ErrorDecision {
  const code = error instanceof AppError ? error.code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case ErrorCode.API_NOT_FOUND:
      return { kind: 'finish-slice', note: `target missing (404: protected, suspended, deleted or unknown): ${message}` };
    case ErrorCode.API_AUTH_FAILED:
    case ErrorCode.API_QUOTA_EXHAUSTED:
      // One key refused (401) or spent (403/402): the gate has disabled or parked it, so the next
      // page goes out on another key, or the limiter answers KEYS_REFUSED / KEYS_EXHAUSTED.
      return { kind: 'continue' };
    case ErrorCode.KEYS_REFUSED:
    case ErrorCode.API_BAD_REQUEST:
    case ErrorCode.API_GONE:
    case ErrorCode.INPUT_INVALID:
    case ErrorCode.API_UNEXPECTED_STATUS:
      return { kind: 'fail-job', code, message };
    case ErrorCode.API_INVALID_RESPONSE:
      if ((error as InvalidResponseError).permanent) return { kind: 'fail-slice', code, message };
      return pageRetry(code, message, ctx);
    case ErrorCode.API_TRANSIENT:
    case ErrorCode.API_RATE_LIMITED:
      // The one retry layer: the client already retried this call within the page's bound
      // (HARVEST_MAX_ATTEMPTS_PER_PAGE); the queue never runs the page again on top of it.
      return pageRetry(code, message, ctx);
    case ErrorCode.KEYS_EXHAUSTED: {
      const { retryAt, unknownQuota } = error as QuotaExhaustedError;
      const atMs = Math.max(ctx.nowMs + MIN_PARK_MS, retryAt ? retryAt.getTime() : ctx.nowMs + ctx.quotaRecheckMs);
      const until = new Date(atMs).toISOString();
      const note = unknownQuota
        ? `paused: quota unknown (asking the service for it failed: ${unknownQuota}; asking again at ${until})`
        : `paused: quota (no key can grant until ${until})`;
      return { kind: 'park', atMs, note };
    }
    case ErrorCode.BUDGET_EXHAUSTED:
      return { kind: 'end-job', note: 'stopped: the --max-requests budget is spent' };
    case ErrorCode.ABORTED:
      return { kind: 'retry-later', atMs: ctx.nowMs };
    case ErrorCode.LIMITER_STATE_LOST:
      // Redis lost the schedule: nothing is wrong with the slice, and a reconcile restores the
      // limiter's state; counting this as a failed attempt could fail a healthy slice.
      return { kind: 'retry-later', atMs: ctx.nowMs + ctx.transientRetryMs };
    default:
      // Not a request's failure (database, a bug): no request to bound; the queue's backoff.
      return ctx.progressed ? { kind: 'retry-later', atMs: ctx.nowMs + ctx.transientRetryMs } : { kind: 'rethrow' };
  }
}

/** A failure the same request may not repeat: fetched again while the page has requests left, else the slice fails. */
function pageRetry(code: string, message: string, ctx: ErrorContext): ErrorDecision {
  if (ctx.pageRequests < ctx.maxAttemptsPerPage) return { kind: 'refetch', atMs: ctx.nowMs + ctx.transientRetryMs };
  return { kind: 'fail-slice', code, message: `gave up on a page after ${ctx.pageRequests} tries: ${message}` };
}

/** Codes no retry can fix: a slice run that throws one fails at once (BullMQ UnrecoverableError). */
const PERMANENT_CODES: ReadonlySet<string> = new Set([
  ErrorCode.INPUT_INVALID,
  ErrorCode.API_BAD_REQUEST,
  ErrorCode.API_GONE,
  ErrorCode.API_UNEXPECTED_STATUS,
  ErrorCode.KEYS_REFUSED,
  ErrorCode.CONFIG_INVALID,
]);

/**
 * Whether an error that escaped a slice run is permanent: a stored definition that no longer
 * parses (zod), an unknown kind (InputError), a request the service refuses for good. Such a run
 * fails at once instead of spending the queue's attempts on it.
 */
export function isPermanentError(error: unknown): boolean {
  if (error instanceof z.ZodError) return true;
  if (!(error instanceof AppError)) return false;
  if (error.code === ErrorCode.API_INVALID_RESPONSE) return (error as InvalidResponseError).permanent;
  return PERMANENT_CODES.has(error.code);
}
