/**
 * Sends one logical request: gate grant → HTTP attempt → classification → parse, repeated by the
 * retry layer. Every attempt is logged at debug and handed to `onAttempt` (request accounting),
 * named by key fingerprint only.
 */
import type { Logger } from '../logger.ts';
import type { AcquireOptions, RequestGate } from './gate.ts';
import { ApiError, InvalidResponseError, TransientError, errorForStatus, neverSent, scrubKey } from './errors.ts';
import type { HttpClient, HttpMethod, QueryParams } from './http.ts';
import { parseJsonBody } from './json-body.ts';
import { EnvelopeError } from './page.ts';
import { retryPolicyOf, withRetry, type RetryPolicy } from './retry.ts';
import { errorBodySchema } from './schemas/common.ts';

export type CallOptions = AcquireOptions & {
  /** Use this gate instead of the client's for this call (a quota sync that must use one given key). */
  gate?: RequestGate;
  /**
   * Each attempt of this call (retries included) is appended here: the caller that accounts for
   * its requests (a page, committed with them) passes its own list. Passed explicitly rather than
   * found through AsyncLocalStorage, which on Node 20 makes V8 run a hook on every promise of the
   * process (pg, undici, ioredis included).
   */
  attempts?: AttemptRecord[];
  /**
   * Tries of this call whose connection never opened (refused, unreachable, or the deadline passed
   * while waiting for one) are counted here. They are not requests (not in `attempts`, their grants
   * go back), but a caller that bounds a page's tries counts them: an unreachable service must
   * still end in a failure, not in refetching the page for as long as the outage lasts.
   */
  unsent?: { tries: number };
  /** This call's retry policy over the client's (a quota sync on one given grant tries once). */
  retryPolicy?: Partial<RetryPolicy>;
};

export interface AttemptRecord {
  /** Method and route, no query (e.g. `GET /v2/info/{user_handle}`). */
  endpoint: string;
  keyFingerprint: string;
  /** HTTP status, 0 when no response arrived. */
  status: number;
  durationMs: number;
  at: Date;
  /** 1 for the first attempt of a call, 2 for its first retry… */
  attempt: number;
}

export interface RequestSpec<T> {
  method: HttpMethod;
  /** The route as documented, with placeholders: `/v2/info/{user_handle}`. */
  route: string;
  /** The concrete path sent; defaults to `route`. */
  path?: string;
  query?: QueryParams;
  body?: unknown;
  /** Turns the parsed JSON into the result; throws EnvelopeError when the shape is wrong. */
  read: (json: unknown) => T;
}

export interface ExecutorDeps {
  http: HttpClient;
  gate: RequestGate;
  logger: Logger;
  retry?: Partial<RetryPolicy>;
  /** Told of every attempt; `collected` says whether the call's own `attempts` list took it. */
  onAttempt?: (record: AttemptRecord, collected: boolean) => void;
}

export type Execute = <T>(spec: RequestSpec<T>, options?: CallOptions) => Promise<T>;

const MAX_SERVICE_MESSAGE = 500;

/** C0 and C1 controls (ESC, CSI, newlines…) and white space: a run of them becomes one space. */
// eslint-disable-next-line no-control-regex -- control characters are what it removes
const CONTROLS = /[\s\u0000-\u001f\u007f-\u009f]+/g;

/**
 * The `message` of the service's error body as we keep it: without the key, on one line, and
 * without control characters. It ends up in errors, job notes and `jobs.error_message`, which
 * `status` and `--wait` print to a terminal: an escape sequence from the service must not reach it.
 */
function serviceMessageOf(text: string, key: string, fingerprint: string): string | null {
  const parsed = parseJsonBody(text);
  if (!('json' in parsed)) return null;
  const body = errorBodySchema.safeParse(parsed.json);
  if (!body.success) return null;
  return scrubKey(body.data.message, key, fingerprint).replace(CONTROLS, ' ').trim().slice(0, MAX_SERVICE_MESSAGE);
}

export function createExecutor(deps: ExecutorDeps): Execute {
  const clientPolicy = retryPolicyOf(deps.retry);
  return async function execute<T>(spec: RequestSpec<T>, options: CallOptions = {}): Promise<T> {
    const endpoint = `${spec.method} ${spec.route}`;
    const policy = options.retryPolicy ? retryPolicyOf(clientPolicy, options.retryPolicy) : clientPolicy;
    return withRetry({ gate: options.gate ?? deps.gate, policy, acquire: options }, async (grant, attempt) => {
      const at = new Date();
      const started = performance.now();
      let status = 0;
      let sent = true;
      const context = { endpoint, keyFingerprint: grant.fingerprint };
      try {
        const response = await deps.http.send({
          method: spec.method,
          path: spec.path ?? spec.route,
          query: spec.query,
          body: spec.body,
          key: grant.key,
          keyFingerprint: grant.fingerprint,
          endpoint,
          ...(grant.sendBy !== undefined ? { sendBy: grant.sendBy } : {}),
          // No abort signal here: a request granted and sent is seen through (bounded by the
          // time-outs), so shutdown commits the page in flight instead of wasting its request.
        });
        status = response.status;
        if (status < 200 || status > 299) {
          throw errorForStatus({ ...context, status, serviceMessage: serviceMessageOf(response.text, grant.key, grant.fingerprint) });
        }
        const parsed = parseJsonBody(response.text);
        if (!('json' in parsed)) throw new InvalidResponseError({ ...context, status, reason: parsed.reason });
        try {
          return { value: spec.read(parsed.json), status };
        } catch (error) {
          if (error instanceof EnvelopeError) throw new InvalidResponseError({ ...context, status, reason: error.reason, permanent: true });
          throw error;
        }
      } catch (error) {
        if (error instanceof ApiError) status = error.status;
        // Never sent (late grant, no connection): no request to account for; the retry layer
        // gives the grant back.
        if (neverSent(error)) {
          sent = false;
          if (error instanceof TransientError && options.unsent) options.unsent.tries++;
        }
        throw error;
      } finally {
        if (sent) {
          const durationMs = Math.round(performance.now() - started);
          const record: AttemptRecord = { endpoint, keyFingerprint: grant.fingerprint, status, durationMs, at, attempt };
          // Checked first: the line's object would be built for every attempt even when debug is off.
          if (deps.logger.isLevelEnabled('debug')) {
            deps.logger.debug({ endpoint, status, ms: durationMs, keyFingerprint: grant.fingerprint, attempt }, 'api attempt');
          }
          options.attempts?.push(record);
          try {
            deps.onAttempt?.(record, options.attempts !== undefined);
          } catch (error) {
            // Accounting must not turn a successful call into a failed one.
            deps.logger.warn({ err: error, endpoint }, 'onAttempt callback failed');
          }
        }
      }
    });
  };
}
