/** `harvest dashboard [--port 8080] [--host 127.0.0.1] [--allow-remote]`: the live read-only page. */
import type { Command } from 'commander';
import { z } from 'zod';
import { isLoopbackHost } from '../../config.ts';
import { createDashboardHandler, startDashboardServer } from '../../dashboard/server.ts';
import { InputError } from '../../errors.ts';
import { cliRuntime, onShutdownSignal, withServices, type CliState } from '../context.ts';
import { parseNonNegativeInt } from '../inputs.ts';

// A host name or an IPv4/IPv6 address: letters, digits, dots, colons, hyphens, brackets.
const hostSchema = z.string().regex(/^[A-Za-z0-9.:[\]-]{1,253}$/, 'a host name or an IP address');

export function parseDashboardHost(host: string, allowRemote: boolean): { host: string; warning: string | null } {
  const parsed = hostSchema.safeParse(host);
  if (!parsed.success) throw new InputError(`--host: a host name or an IP address, got ${JSON.stringify(host)}`);
  const bare = host.replace(/^\[|\]$/g, '');
  if (isLoopbackHost(bare)) return { host: bare, warning: null };
  if (!allowRemote) {
    throw new InputError(`--host ${host} is not a loopback address: the dashboard has no login, so add --allow-remote to serve it beyond this machine on purpose`);
  }
  return { host: bare, warning: `warning: the dashboard on ${host} has no login: anyone who can reach this port sees every job, watch and key fingerprint` };
}

export function registerDashboardCommand(program: Command, state: CliState): void {
  program
    .command('dashboard')
    .description('a live read-only web page of jobs, keys and watches (loopback by default)')
    .option('--port <n>', 'port to listen on (0: any free port)', '8080')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--allow-remote', 'allow a --host that is not loopback (the page has no login)', false)
    .action(async (o: { port: string; host: string; allowRemote: boolean }) => {
      const port = parseNonNegativeInt(o.port, '--port', { max: 65535 });
      const { host, warning } = parseDashboardHost(o.host, o.allowRemote);
      // No keys needed: without HARVEST_API_KEYS it shows every key the workers have synced, by
      // fingerprint (Services.keyStates). It sends no request.
      const runtime = cliRuntime(state, { quiet: true });
      await withServices(runtime, async (services) => {
        const handler = createDashboardHandler(services, { logger: runtime.logger, host });
        const server = await startDashboardServer(handler, port, host, runtime.logger);
        try {
          if (warning) console.error(warning);
          console.log(`dashboard at ${server.url} (read-only; Ctrl-C stops it)`);
          await new Promise<void>((resolve) => onShutdownSignal(() => resolve()));
        } finally {
          await server.close();
        }
      }, { keyless: true });
    });
}
