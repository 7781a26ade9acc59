/**
 * The only importer of undici. One keep-alive Pool per origin; one attempt per `send`, no retries
 * here (retry.ts is the one retry layer). Answers the raw status and body text; classifying them is
 * the caller's job, so a 500 and a 200 come back the same way and only transport failures throw.
 *
 * Every attempt is bounded twice over (issue #11): its body may not exceed `maxResponseBytes`
 * (read chunk by chunk, so a huge body is cut off before it is held in memory) and the whole
 * attempt, headers and body, must finish within `deadlineMs` (undici's own time-outs are per
 * idle gap, so a server trickling one byte every few seconds would otherwise hold a slot forever).
 */
import { Pool, request as undiciRequest, type Dispatcher } from 'undici';
import { parseBaseUrl } from '../config.ts';
import { AbortedError } from '../errors.ts';
import { InvalidResponseError, LateGrantError, TransientError, UnsendableRequestError } from './errors.ts';
import { localNow } from './gate.ts';

export type HttpMethod = 'GET' | 'POST';
export type QueryValue = string | number | boolean | readonly string[] | null | undefined;
export type QueryParams = Readonly<Record<string, QueryValue>>;

export interface HttpRequest {
  method: HttpMethod;
  /** Path after the base address, starting with `/` (e.g. `/v3/info`). */
  path: string;
  query?: QueryParams;
  /** Sent as JSON for POST. */
  body?: unknown;
  key: string;
  keyFingerprint: string;
  /** For errors: method + route, no query. */
  endpoint: string;
  signal?: AbortSignal;
  /** The grant's send-by time (`localNow()` ms): past it when its connection is ready, nothing is sent (LateGrantError). */
  sendBy?: number;
}

export interface HttpResponse {
  status: number;
  text: string;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
export const DEFAULT_DEADLINE_MS = 60_000;

/** transportCode of a TransientError whose attempt ran past `deadlineMs`. */
export const DEADLINE_TRANSPORT_CODE = 'HARVEST_ATTEMPT_DEADLINE';

export interface HttpOptions {
  baseUrl: string;
  /** Idle time-out while waiting for headers or the next body chunk (config `requestTimeoutMs`). */
  timeoutMs?: number;
  /** Overall time one attempt may take, headers and body (default 60 000 ms). */
  deadlineMs?: number;
  /** Largest response body read, in bytes (default 32 MiB); a larger one fails the attempt. */
  maxResponseBytes?: number;
  /** Connections per origin. */
  connections?: number;
}

export interface HttpClient {
  send(request: HttpRequest): Promise<HttpResponse>;
  close(): Promise<void>;
  /** Attempts handed to undici and not settled yet (a stop waits for them: they are paid for). */
  readonly inFlight: number;
}

/** Query string with every value URL-encoded; arrays repeat the name; null/undefined are omitted. */
export function buildQuery(query: QueryParams | undefined): string {
  if (!query) return '';
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    const values = Array.isArray(value) ? (value as readonly string[]) : [String(value)];
    for (const v of values) parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(v)}`);
  }
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

/** How many ms past its grant's send-by time the request is now (≤ 0: in time, or no limit). */
function lateBy(request: HttpRequest): number {
  return request.sendBy === undefined ? 0 : localNow() - request.sendBy;
}

function transportCodeOf(error: unknown): string | null {
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string') return error.code;
  return null;
}

export function createHttpClient(options: HttpOptions): HttpClient {
  // parseBaseUrl enforces https except on loopback hosts.
  const base = new URL(parseBaseUrl(options.baseUrl));
  const basePath = base.pathname.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 30_000;
  const connections = options.connections ?? 32;
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const pools = new Map<string, Pool>();
  let closed = false;
  let inFlight = 0;

  function poolFor(origin: string): Pool {
    let pool = pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      pools.set(origin, pool);
    }
    return pool;
  }

  function send(request: HttpRequest): Promise<HttpResponse> {
    if (closed) return Promise.reject(new AbortedError('API client is closed', { sent: false }));
    if (request.signal?.aborted) return Promise.reject(new AbortedError('aborted', { sent: false }));
    // Already late: refused before undici, whose abort in onRequestStart destroys the connection.
    const lateMs = lateBy(request);
    if (lateMs > 0) return Promise.reject(new LateGrantError(lateMs));
    const headers: Record<string, string> = { ApiKey: request.key, Accept: 'application/json' };
    let body: string | undefined;
    if (request.method === 'POST') {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(request.body ?? {});
    }
    // Built before the attempt counts as in flight: a query that cannot be encoded is never sent.
    let path: string;
    try {
      path = `${basePath}${request.path}${buildQuery(request.query)}`;
    } catch (error) {
      return Promise.reject(new UnsendableRequestError(request.endpoint, error));
    }
    return new Promise<HttpResponse>((resolve, reject) => {
      inFlight++;
      let controller: Dispatcher.DispatchController | null = null;
      let settled = false;
      // Set once undici is about to write the request: a failure before it (connection refused,
      // the deadline passed while waiting for a connection) sent nothing.
      let written = false;
      let status = 0;
      const chunks: Buffer[] = [];
      let size = 0;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        inFlight--;
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        return true;
      };
      // Ends the exchange with `error` (already typed, or a transport error typed here) and drops
      // the connection unless undici reported the failure itself.
      const fail = (error: unknown, overDeadline = false): void => {
        if (!settle()) return;
        if (controller && !controller.aborted) controller.abort(error instanceof Error ? error : new Error(String(error)));
        reject(classify(error, request, overDeadline, written));
      };
      const timer = setTimeout(() => fail(new Error('deadline'), true), deadlineMs);
      const onAbort = (): void => fail(new AbortedError('aborted', { sent: written }));
      request.signal?.addEventListener('abort', onAbort, { once: true });
      const tooLarge = (): InvalidResponseError =>
        new InvalidResponseError({
          endpoint: request.endpoint,
          keyFingerprint: request.keyFingerprint,
          status,
          reason: `body larger than the ${maxBytes}-byte limit`,
        });
      // undici's dispatch API rather than request(): no body stream, abort signal or async
      // resource per attempt, only these callbacks (the worker makes 20+ attempts a second a key).
      poolFor(base.origin).dispatch(
        { method: request.method, path, headers, body },
        {
          onRequestStart(c) {
            controller = c;
            // Ended (deadline, shutdown) while it waited for a connection: never sent.
            if (settled) {
              c.abort(new AbortedError());
              return;
            }
            // Checked again here, the last moment before undici writes the request.
            const late = lateBy(request);
            if (late > 0) fail(new LateGrantError(late));
            else written = true;
          },
          onResponseStart(c, statusCode, responseHeaders) {
            status = statusCode;
            const declared = Number(responseHeaders['content-length']);
            if (Number.isFinite(declared) && declared > maxBytes) fail(tooLarge());
          },
          onResponseData(c, chunk) {
            if (settled) return;
            size += chunk.length;
            // Cut off before it is held in memory; the connection is dropped.
            if (size > maxBytes) fail(tooLarge());
            else chunks.push(chunk);
          },
          onResponseEnd() {
            if (settle()) resolve({ status, text: Buffer.concat(chunks, size).toString('utf8') });
          },
          onResponseError(c, error) {
            fail(error);
          },
        },
      );
    });
  }

  /** Any failure of an attempt as the error the caller sees: typed ones pass, transport ones become TransientError. */
  function classify(error: unknown, request: HttpRequest, overDeadline: boolean, written: boolean): unknown {
    if (error instanceof InvalidResponseError || error instanceof AbortedError || error instanceof LateGrantError) return error;
    if (request.signal?.aborted) return new AbortedError('aborted', { sent: written });
    const transportCode = overDeadline ? DEADLINE_TRANSPORT_CODE : transportCodeOf(error);
    return new TransientError({
      endpoint: request.endpoint,
      keyFingerprint: request.keyFingerprint,
      status: 0,
      transportCode,
      detail: overDeadline ? `attempt took longer than ${deadlineMs} ms` : (transportCode ?? (error instanceof Error ? error.name : 'unknown')),
      sent: written,
      cause: error,
    });
  }

  async function close(): Promise<void> {
    closed = true;
    const all = [...pools.values()];
    pools.clear();
    await Promise.all(all.map((pool) => pool.destroy()));
  }

  return {
    send,
    close,
    get inFlight() {
      return inFlight;
    },
  };
}

/**
 * One JSON POST to a webhook (notifications): no key, no redirects followed, the whole exchange
 * bounded by `deadlineMs`, the body read and dropped. Answers the status; a transport failure or
 * the deadline throws. Callers retry (src/jobs/notify.ts); nothing here does.
 */
export async function postJson(url: string, body: unknown, options: { deadlineMs: number; signal?: AbortSignal }): Promise<number> {
  const deadline = AbortSignal.timeout(options.deadlineMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  const response = await undiciRequest(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'harvest-notify' },
    body: JSON.stringify(body),
    signal,
    headersTimeout: options.deadlineMs,
    bodyTimeout: options.deadlineMs,
  });
  await response.body.dump();
  return response.statusCode;
}
