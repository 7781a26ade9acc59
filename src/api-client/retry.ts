/**
 * The one retry layer (STYLE: retry in one layer only). Every attempt, the first and each retry,
 * takes its own grant from the gate and reports its outcome to it (ARCHITECTURE invariant 2).
 *
 * 429: the service counts a fixed one-second window with no Retry-After, so the earliest useful
 * moment is the next wall-clock second; a 0–50 ms jitter keeps a crowd of workers from landing
 * on the boundary together. 5xx and transport failures: the spec says retry after 1–2 s.
 *
 * A grant found past its send-by time (LateGrantError: the process stalled between grant and
 * send) sent nothing: it is given back and another is taken at once, ahead of first attempts, and
 * it is not an attempt. After MAX_LATE_GRANTS in a row the next grant is used however late, so a
 * process too loaded to ever send on time still makes progress (the service answers 429 at worst,
 * which is retried as above).
 *
 * A transport failure before the request was written (connection refused or unreachable, the
 * deadline passed while it waited for a connection) also sent nothing: its grant is given back
 * too, so an outage of the service does not eat a job's budget or the key's counted quota, but it
 * is retried, and counted against maxAttemptsTransient, as any transport failure.
 */
import { AbortedError } from '../errors.ts';
import { sleep } from '../sleep.ts';
import { withoutSendBy, type AcquireOptions, type Grant, type RequestGate } from './gate.ts';
import { ApiError, AuthError, LateGrantError, QuotaError, RateLimitedError, isRetryable, neverSent } from './errors.ts';

/** Late grants given back in a row before the next one is used however late. */
export const MAX_LATE_GRANTS = 3;

export interface RetryPolicy {
  /** Attempts in all when every answer is 429 (default 6). */
  maxAttemptsRateLimited: number;
  /** Attempts in all when every answer is 5xx or a transport failure (default 4). */
  maxAttemptsTransient: number;
  /**
   * Attempts in all, whatever mix of 429s and 5xx/transport failures (default 6): the two bounds
   * above count apart, and a service answering 429 five times and then 500s took 11 requests for
   * a page bounded at 6.
   */
  maxAttempts: number;
  /** Wait after a 5xx/transport failure: uniformly between min and max ms (default 1000–2000). */
  transientDelayMinMs: number;
  transientDelayMaxMs: number;
  /** Extra random wait after the next second boundary on 429 (default 50). */
  rateLimitJitterMs: number;
  /**
   * Times a call goes on with another grant after the service refused its key (401) or found it
   * spent (402/403) (default 0): the report of that answer has set the key aside, so the next
   * grant is another key's, or the gate refuses (every key refused or spent). A client with n
   * keys allows n - 1: a probe before a job exists (the spending gate's, --estimate) ended the
   * command at one bad key of two, where a job's page would have gone on.
   */
  otherKeyOnRefusal: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttemptsRateLimited: 6,
  maxAttemptsTransient: 4,
  maxAttempts: 6,
  transientDelayMinMs: 1000,
  transientDelayMaxMs: 2000,
  rateLimitJitterMs: 50,
  otherKeyOnRefusal: 0,
};

/**
 * The defaults, then each layer's fields in order. A field given as undefined keeps what is below
 * it: spread as is, it would replace it, and `transient >= undefined` never stops retrying.
 */
export function retryPolicyOf(...layers: ReadonlyArray<Partial<RetryPolicy> | undefined>): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY };
  for (const layer of layers) {
    for (const [name, value] of Object.entries(layer ?? {}) as Array<[keyof RetryPolicy, number | undefined]>) {
      if (value !== undefined) policy[name] = value;
    }
  }
  return policy;
}

export interface RetryDeps {
  gate: RequestGate;
  policy?: Partial<RetryPolicy>;
  acquire?: AcquireOptions;
  /** Injected for tests; default Date.now and Math.random. */
  now?: () => number;
  random?: () => number;
}


/**
 * Node's timers may fire a millisecond or two before Date.now() says they are due (the loop's
 * cached clock): a wait that ends exactly on the second could retry inside the second that met
 * the 429.
 */
const TIMER_SLACK_MS = 3;

/** Milliseconds until the next wall-clock second (and a little past it), plus jitter. */
export function delayAfterRateLimit(now: number, jitterMs: number, random: () => number): number {
  return 1000 - (now % 1000) + TIMER_SLACK_MS + Math.floor(random() * (jitterMs + 1));
}

export function delayAfterTransient(policy: RetryPolicy, random: () => number): number {
  const span = Math.max(0, policy.transientDelayMaxMs - policy.transientDelayMinMs);
  return policy.transientDelayMinMs + Math.floor(random() * (span + 1));
}

const jobOf = (acquire: AcquireOptions | undefined): { jobId?: string } => (acquire?.jobId === undefined ? {} : { jobId: acquire.jobId });

function statusOf(error: unknown): number {
  return error instanceof ApiError ? error.status : 0;
}

/**
 * Runs `attempt` with a fresh grant until it succeeds, fails with a non-retryable error, or the
 * policy's bound for its kind of failure is reached; then throws the last error.
 * `attempt` resolves on 2xx and throws an ApiError otherwise; the status it reports to the gate
 * is the response's (0 for transport failures, 200 for a 2xx with an invalid body).
 */
export async function withRetry<T>(
  deps: RetryDeps,
  attempt: (grant: Grant, attemptNumber: number) => Promise<{ value: T; status: number }>,
): Promise<T> {
  const policy = retryPolicyOf(deps.policy);
  const now = deps.now ?? Date.now;
  const random = deps.random ?? Math.random;
  const signal = deps.acquire?.signal;
  let rateLimited = 0;
  let transient = 0;
  let refused = 0;
  let late = 0;
  // Tries whose connection never opened: not attempts, so the next attempt keeps their number.
  let unsent = 0;
  for (let n = 1; ; n++) {
    if (signal?.aborted) throw new AbortedError();
    const grant = await deps.gate.acquire(n === 1 && late === 0 ? deps.acquire : { ...deps.acquire, retry: true });
    // Aborted while its grant was on the way (the wait line hands out a grant whose call was out
    // when the abort came): a page fetched ahead and dropped, or a stopping worker. Nothing is sent
    // and the grant goes back, its quota and budget units with it.
    if (signal?.aborted) {
      await deps.gate.giveBack(grant, jobOf(deps.acquire));
      throw new AbortedError('aborted', { sent: false });
    }
    let outcome: { value: T; status: number };
    try {
      outcome = await attempt(late < MAX_LATE_GRANTS ? grant : withoutSendBy(grant), n - unsent);
    } catch (error) {
      if (error instanceof LateGrantError) {
        late++;
        n--; // not an attempt: the next grant keeps this attempt's number
        await deps.gate.giveBack(grant, jobOf(deps.acquire));
        continue;
      }
      late = 0;
      // An aborted attempt may still have reached the service, so it is reported as a transport end.
      await deps.gate.report(grant, { status: statusOf(error) });
      if (neverSent(error)) {
        unsent++;
        await deps.gate.giveBack(grant, jobOf(deps.acquire));
      }
      if (!isRetryable(error)) {
        // The report above set the refused key aside: the next grant is another key's.
        // Within the call's bound of attempts (a quota sync on one given grant tries once).
        const refusal = error instanceof AuthError || error instanceof QuotaError;
        if (refusal && refused < policy.otherKeyOnRefusal && rateLimited + transient + refused + 1 < policy.maxAttempts) {
          refused++;
          continue;
        }
        throw error;
      }
      if (rateLimited + transient + refused + 1 >= policy.maxAttempts) throw error;
      if (error instanceof RateLimitedError) {
        rateLimited++;
        if (rateLimited >= policy.maxAttemptsRateLimited) throw error;
        await sleep(delayAfterRateLimit(now(), policy.rateLimitJitterMs, random), signal);
      } else {
        transient++;
        if (transient >= policy.maxAttemptsTransient) throw error;
        await sleep(delayAfterTransient(policy, random), signal);
      }
      continue;
    }
    // A clean answer only takes a strike away (a Redis call when the key had one): the page does
    // not wait for it, so a Redis that is slow or down holds no paid page from its commit, and a
    // failed report does not fail a page the service answered.
    void deps.gate.report(grant, { status: outcome.status }).catch(() => undefined);
    return outcome.value;
  }
}
