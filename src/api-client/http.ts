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
import type { Readable } from 'node:stream';
import { Pool, request as undiciRequest, type Dispatcher } from 'undici';
import { parseBaseUrl } from '../config.ts';
import { AbortedError } from '../errors.ts';
import { InvalidResponseError, TransientError } from './errors.ts';

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
}

export interface HttpResponse {
  status: number;
  text: string;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
export const DEFAULT_DEADLINE_MS = 60_000;

/** transportCode of a TransientError whose attempt ran past `deadlineMs`. */
export const DEADLINE_TRANSPORT_CODE = 'HARVEST_ATTEMPT_DEADLINE';
/** transportCode of a TransientError whose response body closed before its end with no error. */
export const BODY_CLOSED_TRANSPORT_CODE = 'HARVEST_BODY_CLOSED';

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

  async function send(request: HttpRequest): Promise<HttpResponse> {
    if (closed) throw new AbortedError('API client is closed');
    if (request.signal?.aborted) throw new AbortedError();
    const headers: Record<string, string> = { ApiKey: request.key, Accept: 'application/json' };
    let body: string | undefined;
    if (request.method === 'POST') {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(request.body ?? {});
    }
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), deadlineMs);
    const signal = request.signal ? AbortSignal.any([request.signal, deadline.signal]) : deadline.signal;
    try {
      const response = await poolFor(base.origin).request({
        method: request.method,
        path: `${basePath}${request.path}${buildQuery(request.query)}`,
        headers,
        body,
        signal,
      });
      const text = await readBody(response, request, maxBytes);
      return { status: response.statusCode, text };
    } catch (error) {
      if (error instanceof InvalidResponseError) throw error;
      if (request.signal?.aborted) throw new AbortedError();
      const overDeadline = deadline.signal.aborted;
      // Already typed by readBody (a body closed early); the deadline, when it passed, says more.
      if (error instanceof TransientError && !overDeadline) throw error;
      const transportCode = overDeadline ? DEADLINE_TRANSPORT_CODE : transportCodeOf(error);
      throw new TransientError({
        endpoint: request.endpoint,
        keyFingerprint: request.keyFingerprint,
        status: 0,
        transportCode,
        detail: overDeadline
          ? `attempt took longer than ${deadlineMs} ms`
          : (transportCode ?? (error instanceof Error ? error.name : 'unknown')),
        cause: error,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  async function close(): Promise<void> {
    closed = true;
    const all = [...pools.values()];
    pools.clear();
    await Promise.all(all.map((pool) => pool.destroy()));
  }

  return { send, close };
}

/** What readBody needs of an undici response; its own type so a test can hand it any Readable. */
export interface ResponseBody {
  statusCode: number;
  headers: Dispatcher.ResponseData['headers'];
  body: Readable;
}

/**
 * The body as UTF-8 text, refused (and the connection dropped) once it passes `maxBytes`. Exported
 * for its tests only: the close-without-error guard below is a path undici 7 never takes (its body
 * turns an error-less destroy before the end into RequestAbortedError), so only a plain Readable
 * reaches it.
 */
export function readBody(response: ResponseBody, request: Pick<HttpRequest, 'endpoint' | 'keyFingerprint'>, maxBytes: number): Promise<string> {
  const tooLarge = (): InvalidResponseError => {
    response.body.destroy();
    return new InvalidResponseError({
      endpoint: request.endpoint,
      keyFingerprint: request.keyFingerprint,
      status: response.statusCode,
      reason: `body larger than the ${maxBytes}-byte limit`,
    });
  };
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.reject(tooLarge());
  // 'data' events rather than `for await`: the stream's async iterator made promises per chunk
  // and per body (promise hooks, microtasks) for nothing a listener does not do as well.
  const body = response.body;
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        body.off('data', onData);
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    body.on('data', onData);
    body.once('end', () => resolve(Buffer.concat(chunks, size).toString('utf8')));
    // A destroyed body (deadline, shutdown, lost connection) ends here; after tooLarge the
    // promise is already settled and this is a no-op.
    body.once('error', reject);
    // 'close' after 'end' or 'error' is a no-op; alone it is a body cut short, a transport failure
    // like any other lost connection (retried), with a code to classify it by.
    body.once('close', () =>
      reject(
        new TransientError({
          endpoint: request.endpoint,
          keyFingerprint: request.keyFingerprint,
          status: 0,
          transportCode: BODY_CLOSED_TRANSPORT_CODE,
          detail: 'response body closed before its end',
        }),
      ),
    );
  });
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
