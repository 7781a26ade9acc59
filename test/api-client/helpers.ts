/** Test doubles: a gate that records every acquire/report, and a raw HTTP server on 127.0.0.1:0. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AcquireOptions, AttemptOutcome, Grant, RequestGate } from '../../src/api-client/gate.ts';
import { keyFingerprint } from '../../src/key-fingerprint.ts';

export interface RecordingGate extends RequestGate {
  acquired: AcquireOptions[];
  reported: Array<{ fingerprint: string; status: number }>;
}

export function recordingGate(key: string): RecordingGate {
  const grant: Grant = { key, fingerprint: keyFingerprint(key) };
  const gate: RecordingGate = {
    acquired: [],
    reported: [],
    acquire(options: AcquireOptions = {}) {
      gate.acquired.push(options);
      return Promise.resolve(grant);
    },
    report(g: Grant, outcome: AttemptOutcome) {
      gate.reported.push({ fingerprint: g.fingerprint, status: outcome.status });
      return Promise.resolve();
    },
    giveBack: () => Promise.resolve(),
  };
  return gate;
}

export interface RawServer {
  url: string;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; rawHeaders: string[]; body: string }>;
  close(): Promise<void>;
}

export type RawHandler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

export async function startRawServer(handler: RawHandler): Promise<RawServer> {
  const requests: RawServer['requests'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Every string reachable from a value (own props, cause, message, stack), to search for secrets. */
export function allStrings(value: unknown, seen = new Set<unknown>()): string[] {
  if (typeof value === 'string') return [value];
  if (value === null || typeof value !== 'object' || seen.has(value)) return [];
  seen.add(value);
  const out: string[] = [];
  if (value instanceof Error) out.push(value.message, value.stack ?? '', ...allStrings(value.cause, seen));
  for (const key of Object.getOwnPropertyNames(value)) {
    out.push(key, ...allStrings((value as Record<string, unknown>)[key], seen));
  }
  return out;
}
