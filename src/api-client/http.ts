/**
 * The only importer of undici. One keep-alive Pool per origin; one attempt per `send`, no retries
 * here (retry.ts is the one retry layer). Answers the raw status and body text; classifying them is
 * the caller's job, so a 500 and a 200 come back the same way and only transport failures throw.
 */
import { Pool } from 'undici';
import { parseBaseUrl } from '../config.ts';
import { AbortedError } from '../errors.ts';
import { TransientError } from './errors.ts';

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

export interface HttpOptions {
  baseUrl: string;
  /** Header and body time-out per attempt (config `requestTimeoutMs`). */
  timeoutMs?: number;
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
    try {
      const response = await poolFor(base.origin).request({
        method: request.method,
        path: `${basePath}${request.path}${buildQuery(request.query)}`,
        headers,
        body,
        signal: request.signal,
      });
      const text = await response.body.text();
      return { status: response.statusCode, text };
    } catch (error) {
      if (request.signal?.aborted) throw new AbortedError();
      const transportCode = transportCodeOf(error);
      throw new TransientError({
        endpoint: request.endpoint,
        keyFingerprint: request.keyFingerprint,
        status: 0,
        transportCode,
        detail: transportCode ?? (error instanceof Error ? error.name : 'unknown'),
        cause: error,
      });
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
