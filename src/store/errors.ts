/**
 * Store errors. Each is classified by `code`; data rides in fields.
 */
import { AppError, ErrorCode } from '../errors.ts';

/** Postgres cannot be reached: the caller reports it and stops (retrying at once rarely helps). */
export class DatabaseUnavailableError extends AppError {
  readonly target: string;
  readonly reason: string;

  constructor(target: string, reason: string, options?: { cause?: unknown }) {
    super(ErrorCode.DB_UNAVAILABLE, `cannot connect to Postgres at ${target}: ${reason}`, options);
    this.target = target;
    this.reason = reason;
  }
}

/** The migration ledger disagrees with the files: a human must reconcile; never retried. */
export class MigrationConflictError extends AppError {
  readonly migration: string;

  constructor(migration: string, message: string) {
    super(ErrorCode.DB_MIGRATION_CONFLICT, message);
    this.migration = migration;
  }
}

/**
 * A page was fetched with a cursor the slice no longer has (another worker committed first, or the
 * slice was cancelled/split). The page is dropped; the worker re-reads the slice.
 */
export class StaleSliceError extends AppError {
  readonly sliceId: string;
  readonly expectedCursor: string | null;

  constructor(sliceId: string, expectedCursor: string | null) {
    super(ErrorCode.STALE_SLICE, `slice ${sliceId} moved on: its cursor or status no longer matches the page`);
    this.sliceId = sliceId;
    this.expectedCursor = expectedCursor;
  }
}
