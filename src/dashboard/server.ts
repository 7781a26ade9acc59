/**
 * The dashboard over plain node:http (the worker's /metrics server already uses it; one page and
 * a stream need no framework). Read-only: GET and HEAD only, no route writes. Everything it serves
 * comes from this checkout (its own assets and uPlot from node_modules): nothing is loaded from the
 * internet, and the content-security-policy forbids the page to try.
 *
 *   /                   overview (jobs paged, keys, watches, failures, quarantine)
 *   /jobs/<id>          one job
 *   /events?page=N      server-sent events of the overview's page N (one JSON per tick)
 *   /events?job=<id>    server-sent events of one job
 *   /api/overview?page=N, /api/jobs/<id>   the same JSON once, for scripts
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { hostGuard } from '../host-guard.ts';
import type { Logger } from '../logger.ts';
import { isJobId } from '../store/job-id.ts';
import { DashboardHub, type Topic } from './hub.ts';
import { pageHtml } from './page.ts';
import { loadJobDetail, loadOverview, type DashboardDeps } from './source.ts';

const require = createRequire(import.meta.url);

interface Asset {
  type: string;
  body: Buffer;
}

function loadAssets(): Map<string, Asset> {
  const own = (name: string) => readFileSync(new URL(`./assets/${name}`, import.meta.url));
  return new Map<string, Asset>([
    ['/assets/dashboard.js', { type: 'text/javascript; charset=utf-8', body: own('dashboard.js') }],
    ['/assets/dashboard.css', { type: 'text/css; charset=utf-8', body: own('dashboard.css') }],
    ['/assets/uplot.js', { type: 'text/javascript; charset=utf-8', body: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js')) }],
    ['/assets/uplot.css', { type: 'text/css; charset=utf-8', body: readFileSync(require.resolve('uplot/dist/uPlot.min.css')) }],
  ]);
}

const pageNumber = z.coerce.number().int().min(1).max(1_000_000);
const jobId = z.string().refine(isJobId);

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export interface DashboardHandler {
  /** Answers a dashboard route; false when the path is not one (the caller answers it). */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  readonly hub: DashboardHub;
  close(): Promise<void>;
}

export interface DashboardOptions {
  /** Time between two ticks of the query loop; default 1000 ms. */
  intervalMs?: number;
  logger?: Logger;
  /**
   * The address the server listens on. On loopback (and when not given) a request must name a
   * loopback host or this address in its Host header, else 421: a page on another site that
   * rebinds its own name to 127.0.0.1 (DNS rebinding) cannot read the dashboard.
   */
  host?: string;
}

/**
 * Writes each tick's snapshot to an event stream, skipping ticks while the client has not taken
 * the last one (its write buffer past the high-water mark). Each event is a whole snapshot, so a
 * skipped one loses nothing; unskipped, a tab that stopped reading (a sleeping laptop, a stalled
 * proxy) made the server queue every tick in memory, ~370 KB a tick on a job of 2,000 slices.
 */
export function eventSender(res: Pick<ServerResponse, 'write' | 'writableNeedDrain'>): (json: string) => void {
  return (json) => {
    if (!res.writableNeedDrain) res.write(`data: ${json}\n\n`);
  };
}

export function createDashboardHandler(deps: DashboardDeps, options: DashboardOptions = {}): DashboardHandler {
  const assets = loadAssets();
  const load = (topic: Topic) => (topic.kind === 'overview' ? loadOverview(deps, topic.page) : loadJobDetail(deps, topic.id));
  const hub = new DashboardHub({ load }, { intervalMs: options.intervalMs ?? 1000, ...(options.logger ? { logger: options.logger } : {}) });
  const streams = new Set<ServerResponse>();
  const hostAllowed = hostGuard(options.host);

  const send = (res: ServerResponse, status: number, type: string, body: string | Buffer, head = false) => {
    res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(head ? undefined : body);
  };
  const notFound = (res: ServerResponse) => send(res, 404, 'text/plain; charset=utf-8', 'not found\n');

  const topicOf = (query: URLSearchParams): Topic | null => {
    const job = query.get('job');
    if (job !== null) return jobId.safeParse(job).success ? { kind: 'job', id: job } : null;
    const page = pageNumber.safeParse(query.get('page') ?? '1');
    return page.success ? { kind: 'overview', page: page.data } : null;
  };

  const stream = (req: IncomingMessage, res: ServerResponse, topic: Topic) => {
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    streams.add(res);
    const unsubscribe = hub.subscribe(topic, eventSender(res));
    const done = () => {
      unsubscribe();
      streams.delete(res);
    };
    req.once('close', done);
    res.once('close', done);
  };

  return {
    hub,
    async handle(req, res) {
      const url = new URL(req.url ?? '/', 'http://dashboard.invalid');
      const path = url.pathname;
      const route =
        path === '/' || path === '/events' || path === '/api/overview' || assets.has(path) || /^\/jobs\/[^/]+$/.test(path) || /^\/api\/jobs\/[^/]+$/.test(path);
      if (!route) return false;
      if (!hostAllowed(req)) {
        send(res, 421, 'text/plain; charset=utf-8', 'the dashboard answers only to a loopback host name\n');
        return true;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD');
        send(res, 405, 'text/plain; charset=utf-8', 'the dashboard is read-only\n');
        return true;
      }
      const head = req.method === 'HEAD';
      const asset = assets.get(path);
      if (asset) {
        send(res, 200, asset.type, asset.body, head);
        return true;
      }
      if (path === '/') {
        send(res, 200, 'text/html; charset=utf-8', pageHtml({ page: 'overview' }), head);
        return true;
      }
      const jobPage = /^\/jobs\/([^/]+)$/.exec(path);
      if (jobPage) {
        const id = jobId.safeParse(jobPage[1]);
        if (!id.success) notFound(res);
        else send(res, 200, 'text/html; charset=utf-8', pageHtml({ page: 'job', jobId: id.data }), head);
        return true;
      }
      if (path === '/events') {
        const topic = topicOf(url.searchParams);
        if (!topic) send(res, 400, 'text/plain; charset=utf-8', 'give ?page=<n> or ?job=<id>\n');
        else if (head) res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8' }).end();
        else stream(req, res, topic);
        return true;
      }
      const apiJob = /^\/api\/jobs\/([^/]+)$/.exec(path);
      const topic: Topic | null = apiJob ? (jobId.safeParse(apiJob[1]).success ? { kind: 'job', id: apiJob[1]! } : null) : topicOf(url.searchParams);
      if (!topic) {
        send(res, 400, 'text/plain; charset=utf-8', 'bad page or job id\n');
        return true;
      }
      const data = await load(topic);
      if (data === null) notFound(res);
      else send(res, 200, 'application/json; charset=utf-8', JSON.stringify(data), head);
      return true;
    },
    async close() {
      for (const res of streams) res.end();
      streams.clear();
      await hub.close();
    },
  };
}

export interface DashboardServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Serves the dashboard alone (`harvest dashboard`). */
export async function startDashboardServer(handler: DashboardHandler, port: number, host: string, logger?: Logger): Promise<DashboardServer> {
  const server = createServer((req, res) => {
    handler
      .handle(req, res)
      .then((handled) => {
        if (!handled) res.writeHead(404, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      })
      .catch((error: unknown) => {
        logger?.warn({ err: error }, 'dashboard request failed');
        if (!res.headersSent) res.writeHead(500, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
        res.end('the dashboard could not read Postgres or Redis\n');
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/`,
    port: bound,
    close: async () => {
      await handler.close();
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
