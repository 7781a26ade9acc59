/**
 * Pieces the reliability files share: `harvest worker` child processes (with their output kept),
 * polling a job through connection failures, a private redis-server, and an HTTP proxy that
 * corrupts chosen responses of the simulator.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import type { Pool } from '../../src/store/db.ts';
import { jobSnapshot, type JobSnapshot } from '../../src/store/job-status.ts';

export const BIN = fileURLToPath(new URL('../../bin/harvest.js', import.meta.url));

export interface WorkerProcess {
  proc: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
}

export function startWorker(env: Record<string, string>, concurrency: number): WorkerProcess {
  const proc = spawn(process.execPath, [BIN, 'worker', '--concurrency', String(concurrency)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: Buffer[] = [];
  proc.stdout?.on('data', (c: Buffer) => chunks.push(c));
  proc.stderr?.on('data', (c: Buffer) => chunks.push(c));
  return { proc, output: () => Buffer.concat(chunks).toString('utf8') };
}

/** Why a worker that should be running is not (with the last lines it wrote), or null. */
export function deadWorker(w: WorkerProcess): string | null {
  if (w.proc.exitCode === null && w.proc.signalCode === null) return null;
  const tail = w.output().trim().split('\n').slice(-60).join('\n');
  return `the worker process exited (${w.proc.exitCode ?? w.proc.signalCode}); its last output:\n${tail}`;
}

export function exited(p: ChildProcess): Promise<number | null> {
  return p.exitCode !== null || p.signalCode !== null
    ? Promise.resolve(p.exitCode)
    : new Promise((resolve) => p.once('exit', (code) => resolve(code)));
}

export async function stopWorker(w: WorkerProcess): Promise<number | null> {
  if (w.proc.exitCode !== null || w.proc.signalCode !== null) return w.proc.exitCode;
  w.proc.kill('SIGTERM');
  // A graceful stop sees its requests through and closes BullMQ's blocking reads; on a loaded
  // 2-core machine (the whole suite at once) one took over 15 s once. Killed (null) only past 30 s.
  const timer = setTimeout(() => w.proc.kill('SIGKILL'), 30_000);
  try {
    return await exited(w.proc);
  } finally {
    clearTimeout(timer);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Sends SIGTERM and waits up to 30 s for the process to exit: its exit code (or 'still running') and how long that took. */
export async function terminate(w: WorkerProcess): Promise<{ code: number | null | 'still running'; ms: number }> {
  const asked = Date.now();
  w.proc.kill('SIGTERM');
  const code = await Promise.race([exited(w.proc), sleep(30_000).then(() => 'still running' as const)]);
  return { code, ms: Date.now() - asked };
}

export const isEnd = (s: JobSnapshot) => ['completed', 'failed', 'cancelled'].includes(s.status);

/**
 * Polls a job until `ok`; query errors (a terminated connection, a Redis restart under the
 * harness) are retried, so the poller never becomes the thing that fails.
 */
export async function waitForJob(
  pool: Pool,
  jobId: string,
  ok: (s: JobSnapshot) => boolean,
  timeoutMs: number,
  options: { giveUp?: () => string | null } = {},
): Promise<JobSnapshot> {
  const deadline = Date.now() + timeoutMs;
  let last: JobSnapshot | null = null;
  for (;;) {
    const reason = options.giveUp?.();
    if (reason) throw new Error(reason);
    try {
      last = await jobSnapshot(pool, jobId);
      if (last && ok(last)) return last;
    } catch {
      // retried below
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms; job is ${JSON.stringify(last && { status: last.status, pages: last.pages, note: last.note })}`);
    }
    await sleep(100);
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface OwnRedis {
  url: string;
  port: number;
  /** Starts redis-server (empty: no persistence) on this instance's port. */
  start(): Promise<void>;
  /** SIGKILL: everything in it is gone. */
  kill(): Promise<void>;
}

/** A redis-server owned by one test file, on its own port, keeping nothing on disk. */
export async function ownRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let proc: ChildProcess | null = null;
  const url = `redis://127.0.0.1:${port}`;
  const self: OwnRedis = {
    url,
    port,
    async start() {
      const p = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', '/tmp'], {
        stdio: 'ignore',
      });
      proc = p;
      const deadline = Date.now() + 10_000;
      for (;;) {
        const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        probe.on('error', () => undefined);
        try {
          await probe.connect();
          if ((await probe.ping()) === 'PONG') return;
        } catch {
          if (p.exitCode !== null) throw new Error(`redis-server on port ${port} exited with ${p.exitCode}`);
          if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer`);
        } finally {
          probe.disconnect();
        }
        await sleep(50);
      }
    },
    async kill() {
      const p = proc;
      proc = null;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      p.kill('SIGKILL');
      await exited(p);
    },
  };
  await self.start();
  return self;
}

export interface CorruptContext {
  method: string;
  /** Path without the query. */
  path: string;
  /** 1 for the first response on this path, 2 for the second… */
  n: number;
  status: number;
  body: string;
}

/** What to send instead: a new body (and optionally content type); undefined passes the answer through. */
export type Corrupter = (ctx: CorruptContext) => { body: string | Buffer; contentType?: string } | undefined;

export interface CorruptingProxy {
  url: string;
  /** Where requests go (settable: the proxy may start before the simulator). */
  target: string;
  /** Picks and rewrites responses; passes everything through by default. */
  corrupt: Corrupter;
  /** 2xx responses per path so far. */
  counts: Map<string, number>;
  close(): Promise<void>;
}

/** A loopback proxy in front of the simulator that rewrites the responses `corrupt` picks. */
export async function corruptingProxy(): Promise<CorruptingProxy> {
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const base = new URL(self.target);
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      const upstream = http.request(
        // Raw headers keep their case: the service (and the simulator) accept only `ApiKey`.
        { host: base.hostname, port: base.port, method: req.method, path: req.url, headers: req.rawHeaders },
        (up) => {
          const chunks: Buffer[] = [];
          up.on('data', (c: Buffer) => chunks.push(c));
          up.on('end', () => {
            const path = (req.url ?? '/').split('?')[0] ?? '/';
            const status = up.statusCode ?? 502;
            const text = Buffer.concat(chunks).toString('utf8');
            let n = counts.get(path) ?? 0;
            if (status >= 200 && status < 300) counts.set(path, ++n);
            const replacement = status >= 200 && status < 300 ? self.corrupt({ method: req.method ?? 'GET', path, n, status, body: text }) : undefined;
            const out = replacement ? replacement.body : text;
            res.writeHead(status, {
              'content-type': replacement?.contentType ?? up.headers['content-type'] ?? 'application/json',
              'content-length': Buffer.byteLength(out),
            });
            res.end(out);
          });
        },
      );
      upstream.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      upstream.end(Buffer.concat(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const self: CorruptingProxy = {
    url: `http://127.0.0.1:${port}`,
    target: '',
    corrupt: () => undefined,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return self;
}
