/**
 * The demo's dashboard: on a terminal, `harvest demo` serves the live page while it runs and
 * after it ends, until Ctrl-C; elsewhere (CI, tests, a pipe) it serves nothing and ends on its
 * own, printing how to open the page later with `harvest dashboard`.
 */
import { fileURLToPath } from 'node:url';
import { createDashboardHandler, startDashboardServer, type DashboardServer } from '../../dashboard/server.ts';
import type { Services } from '../../jobs/services.ts';
import type { Logger } from '../../logger.ts';

export const DEMO_DASHBOARD_PORT = 8080;

/** Serves the dashboard on 127.0.0.1:8080, or on any free port when 8080 is taken. */
export async function startDemoDashboard(services: Services, logger: Logger): Promise<DashboardServer> {
  try {
    return await startDashboardServer(createDashboardHandler(services, { logger }), DEMO_DASHBOARD_PORT, '127.0.0.1', logger);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    return startDashboardServer(createDashboardHandler(services, { logger }), 0, '127.0.0.1', logger);
  }
}

/**
 * A database address fit to print: without its password, which goes no further than the process.
 * `psql` and `harvest` (pg) both read the password from PGPASSWORD when the address has none; the
 * hint says so when there was one to drop.
 */
export function printableDatabaseUrl(databaseUrl: string): { url: string; hint: string } {
  const url = new URL(databaseUrl);
  // libpq and pg also take the password as a query parameter (and sslpassword, a key's).
  const secrets = ['password', 'sslpassword'].filter((name) => url.searchParams.has(name));
  if (url.password === '' && secrets.length === 0) return { url: url.toString(), hint: '' };
  url.password = '';
  for (const name of secrets) url.searchParams.delete(name);
  return { url: url.toString(), hint: ' (with PGPASSWORD set to the password of your DATABASE_URL)' };
}

/** This checkout's command, by path: `npx harvest` outside it would offer the registry's unrelated `harvest` package. */
const HARVEST_BIN = fileURLToPath(new URL('../../../bin/harvest.js', import.meta.url));

/** `text` as one word of a POSIX shell command line. */
const shellWord = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * The command that shows this demo's database in the dashboard after the demo has ended, to be
 * pasted into a shell anywhere: the password hint is part of the comment, not of the command. No
 * key: the dashboard lists the keys the demo's worker synced, by fingerprint (Services.keyStates),
 * from the limiter state kept for the demo's simulator address (nothing is sent there).
 */
export function laterDashboardCommand(databaseUrl: string, redisPrefix: string, baseUrl: string): string {
  const { url, hint } = printableDatabaseUrl(databaseUrl);
  const env = `DATABASE_URL=${shellWord(url)} HARVEST_REDIS_PREFIX=${shellWord(redisPrefix)} HARVEST_BASE_URL=${shellWord(baseUrl)}`;
  return `${env} node ${shellWord(HARVEST_BIN)} dashboard   # then open http://127.0.0.1:${DEMO_DASHBOARD_PORT}/${hint}`;
}
