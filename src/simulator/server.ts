/**
 * The simulator's HTTP server (node:http, no framework). Every keyed request goes through the same
 * pipeline: authenticate (401) → 429 burst fault and rate window (429) → quota (403) → v2Gone
 * (410) → one unit of quota is consumed → route (404 when unknown) → 500 fault → handler.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keyFingerprint } from '../key-fingerprint.ts';
import { silentLogger } from '../logger.ts';
import { handleAdmin } from './admin.ts';
import type { RouteDef, SimContext } from './context.ts';
import { FaultState, createRandom } from './faults.ts';
import { SimHttpError, badRequest, isLoopback, readBody, sendJson } from './http-utils.ts';
import { KeyStore } from './keys.ts';
import type { World } from './model.ts';
import {
  DEFAULT_PROFILE,
  quirksFor,
  type Quirks,
  type RequestLogEntry,
  type RunningSimulator,
  type SimulatorControl,
  type SimulatorOptions,
} from './options.ts';
import { checkRoutes } from './routes-checks.ts';
import { communityRoutes } from './routes-community.ts';
import { otherRoutes } from './routes-other.ts';
import { scoreRoutes } from './routes-scores.ts';
import { v2Routes, v3CounterpartOf } from './routes-v2.ts';
import { v3Routes } from './routes-v3.ts';
import { createWorld } from './world/index.ts';

const REQUEST_LOG_MAX = 100_000;

interface Matched {
  route: RouteDef;
  params: Record<string, string>;
}

function buildRouter(routes: readonly RouteDef[]): (method: string, path: string) => Matched | { wrongMethod: string } | null {
  const exact = new Map<string, RouteDef>();
  const patterns: Array<{ prefix: string; param: string; route: RouteDef }> = [];
  for (const route of routes) {
    const m = /^(.*\/)\{(\w+)\}$/.exec(route.path);
    if (m) patterns.push({ prefix: m[1]!, param: m[2]!, route });
    else exact.set(`${route.method} ${route.path}`, route);
  }
  const methods = new Map(routes.map((r) => [r.path, r.method]));
  return (method, path) => {
    const hit = exact.get(`${method} ${path}`);
    if (hit) return { route: hit, params: {} };
    for (const p of patterns) {
      const rest = path.slice(p.prefix.length);
      if (path.startsWith(p.prefix) && rest !== '' && !rest.includes('/')) {
        if (p.route.method !== method) return { wrongMethod: p.route.method };
        let value: string;
        try {
          value = decodeURIComponent(rest);
        } catch {
          throw badRequest(`malformed path segment ${JSON.stringify(rest)}`);
        }
        return { route: p.route, params: { [p.param]: value } };
      }
    }
    const other = methods.get(path);
    return other ? { wrongMethod: other } : null;
  };
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const logger = options.logger ?? silentLogger;
  const world: World = options.world ?? createWorld({ seed: options.seed ?? 1, scale: options.scale ?? 'small' });
  const keys = new KeyStore(options.keys ?? ['sim-key'], options.ratePerKey ?? 20);
  const random = createRandom((options.seed ?? world.seed) ^ 0x5eed);
  const faults = new FaultState(options.faults, random);
  let quirks: Quirks = quirksFor(options.profile, options.quirks);
  const [latMin, latMax] = options.latencyMs ?? [0, 0];
  const route = buildRouter([...v3Routes, ...communityRoutes, ...otherRoutes, ...checkRoutes, ...scoreRoutes, ...v2Routes]);
  let log: RequestLogEntry[] = [];
  const stats = { requests: 0, byStatus: {} as Record<string, number>, byKey: {} as Record<string, number> };

  const control: SimulatorControl = {
    addTweets: (specs) => world.addTweets(specs).map((i) => world.tweets.idString(i)),
    renameUser: (handle, newHandle) => world.renameUser(handle, newHandle),
    setQuota: (key, remaining, validUntil) => keys.setQuota(key, remaining, validUntil),
    removeKey: (key) => keys.remove(key),
    addKey: (key, quota) => keys.add(key, quota),
    setFaults: (f) => faults.set(f),
    setQuirks: (q) => {
      quirks = { ...quirks, ...q };
    },
    requestLog: () => [...log],
    clearRequestLog: () => {
      log = [];
    },
    stats: () => ({ requests: stats.requests, byStatus: { ...stats.byStatus }, byKey: { ...stats.byKey } }),
  };

  function record(entry: RequestLogEntry): void {
    if (log.length >= REQUEST_LOG_MAX) log.splice(0, REQUEST_LOG_MAX / 10);
    log.push(entry);
    stats.requests += 1;
    stats.byStatus[entry.status] = (stats.byStatus[entry.status] ?? 0) + 1;
    const k = entry.keyFingerprint ?? 'none';
    stats.byKey[k] = (stats.byKey[k] ?? 0) + 1;
  }

  type Parsed = { ok: true; body: Record<string, unknown> } | { ok: false; empty: unknown };

  function parseBody(text: string, req: IncomingMessage, matched: RouteDef): Parsed {
    const type = req.headers['content-type'] ?? '';
    const malformed = (message: string): Parsed => {
      if (quirks.malformedBodyEmpty && matched.empty) return { ok: false, empty: matched.empty() };
      throw new SimHttpError(400, message);
    };
    if (!/^application\/json\b/i.test(type)) return malformed('POST bodies need Content-Type: application/json');
    if (text.trim() === '') return malformed('request body is empty');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return malformed('request body is not valid JSON');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return malformed('request body must be a JSON object');
    return { ok: true, body: parsed as Record<string, unknown> };
  }

  async function serviceRequest(req: IncomingMessage, url: URL, bodyText: string): Promise<{ status: number; body: unknown; fp: string | null }> {
    const nowMs = Date.now();
    const presented = KeyStore.presentedKey(req.rawHeaders);
    const fp = presented === null ? null : keyFingerprint(presented);
    try {
      const key = keys.authenticate(presented);
      if (faults.inBurst429(nowMs)) throw new SimHttpError(429, 'too many requests');
      keys.admitRate(key, nowMs);
      keys.checkQuota(key, nowMs);
      if (quirks.v2Gone && url.pathname.startsWith('/v2/')) {
        throw new SimHttpError(410, `${url.pathname} is gone since 2026-05-01; use ${v3CounterpartOf(url.pathname)}`);
      }
      keys.consume(key);
      const method = req.method ?? 'GET';
      const found = route(method, url.pathname);
      if (!found || ('route' in found && found.route.when && !found.route.when(quirks))) throw new SimHttpError(404, `no such endpoint: ${url.pathname}`);
      if ('wrongMethod' in found) throw new SimHttpError(404, `no such endpoint: ${method} ${url.pathname} (it takes ${found.wrongMethod})`);
      if (faults.error500()) throw new SimHttpError(500, 'internal server error');
      let body: Record<string, unknown> = {};
      if (found.route.method === 'POST') {
        const parsed = parseBody(bodyText, req, found.route);
        if (!parsed.ok) return { status: 200, body: parsed.empty, fp };
        body = parsed.body;
      }
      const ctx: SimContext = { world, quirks, faults, keys, key, nowMs, method: found.route.method, query: url.searchParams, body, params: found.params };
      return { status: 200, body: found.route.handler(ctx), fp };
    } catch (error) {
      if (error instanceof SimHttpError) return { status: error.status, body: { message: error.message }, fp };
      logger.error({ err: error, path: url.pathname }, 'simulator route failed');
      return { status: 500, body: { message: 'internal server error' }, fp };
    }
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now();
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    let bodyText = '';
    try {
      bodyText = await readBody(req);
    } catch (error) {
      const status = error instanceof SimHttpError ? error.status : 400;
      sendJson(res, status, { message: error instanceof Error ? error.message : 'bad request body' });
      return;
    }
    if (url.pathname.startsWith('/_sim/')) {
      if (!isLoopback(req.socket.remoteAddress)) {
        sendJson(res, 403, { message: 'simulator control routes answer loopback callers only' });
        return;
      }
      try {
        const body = bodyText.trim() === '' ? {} : (JSON.parse(bodyText) as unknown);
        sendJson(res, 200, handleAdmin(req.method ?? 'GET', url.pathname, body, { world, control, faults: () => faults.current, quirks: () => quirks }));
      } catch (error) {
        const status = error instanceof SimHttpError ? error.status : 400;
        sendJson(res, status, { message: error instanceof Error ? error.message : String(error) });
      }
      return;
    }
    const result = await serviceRequest(req, url, bodyText);
    const delay = latMin + (latMax - latMin) * random() + faults.slowDelay();
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    if (!res.destroyed) sendJson(res, result.status, result.body);
    record({ method: req.method ?? 'GET', path: url.pathname, keyFingerprint: result.fp, status: result.status, at, durationMs: performance.now() - started });
  }

  const server = createServer((req, res) => {
    onRequest(req, res).catch((error: unknown) => {
      logger.error({ err: error }, 'simulator request failed');
      if (!res.headersSent) sendJson(res, 500, { message: 'internal server error' });
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info({ url, keys: keys.list().map(keyFingerprint) }, 'simulator listening');

  return {
    url,
    profile: options.profile ?? DEFAULT_PROFILE,
    world,
    control,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
