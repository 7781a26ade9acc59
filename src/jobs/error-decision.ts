/**
 * What a failed page means for its slice and job: a pure function from the error's `code` (and
 * the run's context) to a decision the slice runner carries out. Classified by code only: each
 * code belongs to one error class (src/errors.ts), so once the code matches, that class's fields
 * may be read.
 */
import { AppError, ErrorCode } from '../errors.ts';
import type { QuotaExhaustedError } from './limiter/errors.ts';

export type ErrorDecision =
  /** The job cannot succeed as asked: it fails now, its other slices stop. */
  | { kind: 'fail-job'; code: string; message: string }
  /** This slice is over (its target is gone); the job goes on and reads the note. */
  | { kind: 'finish-slice'; note: string }
  /** No key can grant: the job is parked and the slice re-queued for `atMs`. */
  | { kind: 'park'; atMs: number; note: string }
  /** The gate has already steered around the cause (a key disabled or parked): ask again now. */
  | { kind: 'continue' }
  /** Back to the queue for `atMs`, without counting an attempt. */
  | { kind: 'retry-later'; atMs: number }
  /** The job ends successfully, early (its budget is spent). */
  | { kind: 'end-job'; note: string }
  /** A transient failure with no progress in this run: the queue's backoff counts the attempt. */
  | { kind: 'rethrow' };

export interface ErrorContext {
  nowMs: number;
  /** Whether this run committed a page before the error: a failure after progress is a new problem. */
  progressed: boolean;
  /** How long to park a job when no key says when it can grant again (HARVEST_QUOTA_RECHECK_MS). */
  quotaRecheckMs: number;
  /** Delay before a slice that made progress tries again (the client already retried). */
  transientRetryMs: number;
}

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
    case ErrorCode.KEYS_EXHAUSTED: {
      const retryAt = (error as QuotaExhaustedError).retryAt;
      const atMs = Math.max(ctx.nowMs + MIN_PARK_MS, retryAt ? retryAt.getTime() : ctx.nowMs + ctx.quotaRecheckMs);
      return { kind: 'park', atMs, note: `paused: quota (no key can grant until ${new Date(atMs).toISOString()})` };
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
      // Transient (5xx, 429 after the client's retries, transport, invalid body, database).
      return ctx.progressed ? { kind: 'retry-later', atMs: ctx.nowMs + ctx.transientRetryMs } : { kind: 'rethrow' };
  }
}
