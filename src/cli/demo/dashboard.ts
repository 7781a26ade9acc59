/**
 * The demo's dashboard: on a terminal, `harvest demo` serves the live page while it runs and
 * after it ends, until Ctrl-C; elsewhere (CI, tests, a pipe) it serves nothing and ends on its
 * own, printing how to open the page later with `harvest dashboard`.
 */
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
 * The command that shows this demo's database in the dashboard after the demo has ended. No key:
 * the dashboard lists the keys the demo's worker synced, by fingerprint (Services.keyStates), from
 * the limiter state kept for the demo's simulator address (nothing is sent there).
 */
export function laterDashboardCommand(databaseUrl: string, redisPrefix: string, baseUrl: string): string {
  const url = new URL(databaseUrl);
  url.password = '';
  return `DATABASE_URL='${url.toString()}' HARVEST_REDIS_PREFIX=${redisPrefix} HARVEST_BASE_URL=${baseUrl} npx harvest dashboard   # then open http://127.0.0.1:${DEMO_DASHBOARD_PORT}/`;
}
