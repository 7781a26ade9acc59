/**
 * Which Host headers a loopback HTTP server answers. A server on loopback must answer only a
 * request that names a loopback host or its own address in its Host header: a page on another
 * site that rebinds its own name to 127.0.0.1 (DNS rebinding) could otherwise read it from the
 * user's browser. Shared by the dashboard and the worker's /metrics (which names keys by
 * fingerprint, their quota and job counts).
 */
import type { IncomingMessage } from 'node:http';
import { isLoopbackHost } from './config.ts';

const bare = (host: string) => host.toLowerCase().replace(/^\[|\]$/g, '');

/** The host a Host header names, without its port; null when it is missing or not a host. */
function hostOf(header: string | undefined): string | null {
  if (!header) return null;
  try {
    const url = new URL(`http://${header}/`);
    return url.username || url.password || url.pathname !== '/' ? null : bare(url.hostname);
  } catch {
    return null;
  }
}

/**
 * For a server listening on `boundHost` (loopback when not given): whether a request may be
 * answered. A server bound elsewhere (`--allow-remote`, 0.0.0.0 for a Prometheus in another
 * container) answers any Host, as it was asked to.
 */
export function hostGuard(boundHost?: string): (req: Pick<IncomingMessage, 'headers'>) => boolean {
  const bound = boundHost === undefined ? null : bare(boundHost);
  if (bound !== null && !isLoopbackHost(bound)) return () => true;
  return (req) => {
    const host = hostOf(req.headers.host);
    return host !== null && (isLoopbackHost(host) || host === bound);
  };
}
