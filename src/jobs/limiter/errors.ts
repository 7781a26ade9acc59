/**
 * What the limiter throws when waiting cannot help. Both steer the job, not the request: a job
 * that meets either pauses instead of retrying (the client must not retry them either).
 */
import { AppError, ErrorCode } from '../../errors.ts';

/** No configured key can grant (all parked, disabled or at their quota floor for this priority). */
export class QuotaExhaustedError extends AppError {
  /** Earliest moment a key may grant again (an unpark or quota renewal), or null when unknown. */
  readonly retryAt: Date | null;

  /**
   * Set when no key is spent, but every key the job could use has an unknown quota and asking the
   * service for it failed: why it failed (the quota sync's error). A backfill keeps the watch
   * reserve, so it does not spend a key whose quota it does not know.
   */
  readonly unknownQuota: string | null;

  constructor(retryAt: Date | null, options: { unknownQuota?: string } = {}) {
    super(
      ErrorCode.KEYS_EXHAUSTED,
      options.unknownQuota !== undefined
        ? `the quota of every usable API key is unknown and asking the service failed (${options.unknownQuota})`
        : retryAt
          ? `no API key can grant a request before ${retryAt.toISOString()}`
          : 'no API key can grant a request (quota spent or keys disabled)',
    );
    this.retryAt = retryAt;
    this.unknownQuota = options.unknownQuota ?? null;
  }
}

/** The job has taken every grant of its --max-requests budget. */
export class BudgetExhaustedError extends AppError {
  readonly jobId: string;

  constructor(jobId: string) {
    super(ErrorCode.BUDGET_EXHAUSTED, `job ${jobId} has spent its request budget`);
    this.jobId = jobId;
  }
}

/** Every configured key was refused (401): nothing will grant until the configuration changes. */
export class KeysRefusedError extends AppError {
  readonly fingerprints: readonly string[];

  constructor(fingerprints: readonly string[]) {
    super(
      ErrorCode.KEYS_REFUSED,
      `every API key was refused by the service (401): ${fingerprints.join(', ')}; check HARVEST_API_KEYS`,
    );
    this.fingerprints = fingerprints;
  }
}
