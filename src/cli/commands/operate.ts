/** migrate, worker, status, pause/resume/cancel and quota. */
import type { Command } from 'commander';
import { isLoopbackHost } from '../../config.ts';
import { createDashboardHandler, type DashboardHandler } from '../../dashboard/server.ts';
import { fromRedis } from '../../jobs/bounded-read.ts';
import { controlJob } from '../../jobs/control.ts';
import { defaultConcurrency, Harvester } from '../../jobs/harvester.ts';
import { claimPrefixForDatabase } from '../../jobs/prefix-owner.ts';
import { HarvestMetrics, startMetricsServer, type MetricSources } from '../../jobs/metrics.ts';
import type { Services } from '../../jobs/services.ts';
import { jobCountsByStatus, oldestRunnableSliceAgeSeconds } from '../../store/metrics-queries.ts';
import { migrate } from '../../store/migrate.ts';
import { claimWorkerPrefix } from '../../store/worker-prefixes.ts';
import { describeJobState, jobHealth, jobSnapshot, recentJobSnapshots, stalledJobs } from '../../store/job-status.ts';
import { cliRuntime, onShutdownSignal, withServices, type CliState } from '../context.ts';
import { parseConcurrency, parseJobId, parseNonNegativeInt } from '../inputs.ts';
import { formatCount } from '../progress.ts';
import { describeEnd, WAIT_EXIT, waitEnded, waitForJob } from '../wait.ts';

/** `harvest status --check` exits with this when any job is stalled (1 is an error, 64 bad usage). */
export const STALLED_EXIT_CODE = 6;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

/**
 * What a worker's /metrics reads at each scrape. The Redis reads are bounded (fromRedis): the
 * workers' connection holds a command until Redis is back, and a scrape that waited on one lost
 * every series for the whole outage, where only the Redis-fed gauges should go.
 */
export function workerMetricSources(
  services: Pick<Services, 'pool' | 'config'> & { gate: Pick<Services['gate'], 'keyStates'>; rateWaits: Pick<Services['rateWaits'], 'waitingJobs'> },
): MetricSources {
  const reads = {};
  return {
    keyStates: () => fromRedis(reads, 'the key states', () => services.gate.keyStates()),
    jobCounts: () => jobCountsByStatus(services.pool),
    sliceLagSeconds: () => oldestRunnableSliceAgeSeconds(services.pool),
    stalledJobs: async () => {
      const waiting = await fromRedis(reads, 'the rate waits', () => services.rateWaits.waitingJobs());
      return (await stalledJobs(services.pool, { stalledAfterMs: services.config.stalledAfterMs, waitingForRate: new Set(waiting) })).length;
    },
  };
}

/**
 * One gap of a watch as `status` lists it. A gap below the watermark is one the watermark moved
 * past (an `empty-end` the listing gave twice from the same point: where it ends); no pass reads
 * it again, and saying "the next pass reads them" promised what never came (watches.ts, passEnd).
 */
export function describeGap(g: { afterId: string; beforeId: string | null; reason: string }, watermarkId: string | null): string {
  const range = `ids after ${g.afterId} up to ${g.beforeId ?? 'the newest'} unread (${g.reason})`;
  const passed = watermarkId !== null && BigInt(g.afterId) < BigInt(watermarkId);
  return passed ? `${range}; the listing ended there twice, so no pass reads it` : `${range}; the next pass reads them`;
}

export function registerOperateCommands(program: Command, state: CliState): void {
  program
    .command('migrate')
    .description('apply the SQL migrations (creates the database when missing; safe to run again)')
    .action(async () => {
      const { config, logger } = cliRuntime(state);
      const { applied } = await migrate(config.databaseUrl, logger);
      console.log(applied.length === 0 ? 'schema is up to date' : `applied ${applied.join(', ')}`);
    });

  program
    .command('worker')
    .description('run workers until SIGINT/SIGTERM, then stop gracefully')
    .option('--concurrency <n>', 'backfill slices walked at once by this process (default: rate × latency, 16 at one key)')
    .option('--metrics-port <n>', 'serve Prometheus metrics at /metrics on this port, and the dashboard at / on loopback (0: any free port)')
    .option('--metrics-host <host>', 'address the metrics server listens on', '127.0.0.1')
    .action(async (o: { concurrency?: string; metricsPort?: string; metricsHost: string }) => {
      const chosen = o.concurrency === undefined ? undefined : parseConcurrency(o.concurrency);
      const metricsPort = o.metricsPort === undefined ? undefined : parseNonNegativeInt(o.metricsPort, '--metrics-port', { max: 65535 });
      const runtime = cliRuntime(state);
      const metrics = metricsPort === undefined ? null : new HarvestMetrics({ logger: runtime.logger });
      let redisGone = false;
      // Listened for before anything starts: a SIGTERM during the start (prefix claim, reconcile, a
      // quota sync costing a request per key) took Node's default action, exit 143 with no graceful
      // stop and a paid usage request never recorded. One that comes then stops it once start returns.
      let signalled = false;
      let shutdown: () => void = () => undefined;
      const stopAsked = new Promise<void>((resolve) => {
        shutdown = resolve;
      });
      const unlisten = onShutdownSignal(() => {
        signalled = true;
        shutdown();
      });
      try {
        await withServices(
          runtime,
          async (services) => {
            const concurrency = chosen ?? (await defaultConcurrency(services));
            const harvester = new Harvester(services, {
              concurrency,
              ...(metrics ? { onPage: (p: Parameters<HarvestMetrics['observePage']>[0]) => metrics.observePage(p) } : {}),
            });
            let server: Awaited<ReturnType<typeof startMetricsServer>> | null = null;
            let dashboard: DashboardHandler | null = null;
            try {
              if (metrics && metricsPort !== undefined) {
                metrics.bindCollectors(workerMetricSources(services));
                // The dashboard has no login: beside /metrics only on loopback (`harvest dashboard
                // --allow-remote` serves it further on purpose).
                dashboard = isLoopbackHost(o.metricsHost) ? createDashboardHandler(services, { logger: runtime.logger, host: o.metricsHost }) : null;
                server = await startMetricsServer(metricsPort, metrics, o.metricsHost, dashboard ? (req, res) => dashboard!.handle(req, res) : undefined);
                runtime.logger.info({ port: server.port, dashboard: dashboard ? '/' : 'not on a non-loopback host' }, 'metrics at /metrics');
              }
              // Asked to stop while the services opened: nothing started, nothing to stop.
              if (signalled) return;
              await harvester.start();
              if (!signalled) runtime.logger.info({ concurrency, keys: services.config.apiKeys.map((k) => k.fingerprint) }, 'worker started');
              await stopAsked;
              runtime.logger.info('stopping: in-flight pages commit first');
              redisGone = (await harvester.stop()).redisGone;
            } finally {
              // Also when the start was refused (another prefix's workers, Postgres gone): a listening
              // server kept the process alive after its one-line error.
              await dashboard?.close();
              await server?.close();
            }
          },
          metrics ? { onAttempt: (a) => metrics.observeAttempt(a), onGiveBack: (fp) => metrics.observeGiveBack(fp) } : {},
        );
      } finally {
        unlisten();
      }
      // Stopped without a Redis that is down: BullMQ's connections would keep the process alive,
      // retrying it. Postgres is closed; nothing is left to finish.
      if (redisGone) process.exit(1);
    });

  program
    .command('status')
    .description('jobs with their state, pages, tweets, users, requests and quota left')
    .argument('[job-id]')
    .option('--check', `for cron: exit ${STALLED_EXIT_CODE} when a job (this one, or any) is stalled`)
    .action(async (id: string | undefined, o: { check?: boolean }) => {
      const jobId = id === undefined ? undefined : parseJobId(id);
      await withServices(cliRuntime(state, { quiet: true }), async (services) => {
        const keys = await services.keyStates();
        const waiting = new Set(await services.rateWaits.waitingJobs());
        const health = await jobHealth(services.pool, { stalledAfterMs: services.config.stalledAfterMs, waitingForRate: waiting, ...(jobId ? { jobId } : {}) });
        const healthOf = new Map(health.map((h) => [h.jobId, h]));
        const listed = jobId ? { jobs: [await jobSnapshot(services.pool, jobId)].filter((s) => s !== null), olderEnded: 0 } : await recentJobSnapshots(services.pool);
        const snaps = listed.jobs;
        if (jobId && snaps.length === 0) {
          console.error(`no job ${jobId}`);
          state.exitCode = 1;
          return;
        }
        const rows = [['id', 'kind', 'pages', 'tweets', 'users', 'requests', 'state']];
        for (const s of snaps) {
          rows.push([s.id, s.kind, formatCount(s.pages), formatCount(s.tweets), formatCount(s.users), formatCount(s.requests), describeJobState({ status: s.status, errorMessage: s.errorMessage, nextDueAt: s.watch?.nextDueAt ?? null }, waiting.has(s.id), healthOf.get(s.id))]);
        }
        console.log(snaps.length === 0 ? 'no jobs yet' : table(rows));
        if (listed.olderEnded > 0) console.log(`… and ${formatCount(listed.olderEnded)} older ended ${listed.olderEnded === 1 ? 'job' : 'jobs'}: \`harvest status <job-id>\` shows one`);
        for (const s of jobId ? snaps : []) {
          console.log(`\nparams  ${JSON.stringify(s.params)}`);
          console.log(`slices  ${s.slices.done} done, ${s.slices.running} running, ${s.slices.pending} pending, ${s.slices.failed} failed`);
          if (s.fractionDone !== null) console.log(`range   ${(s.fractionDone * 100).toFixed(1)}% walked`);
          if (s.watch) console.log(`watch   ${s.watch.passes} passes, last found ${s.watch.lastPassNew ?? 0} new, every ${s.watch.everySeconds ?? '-'} s`);
          for (const g of s.watch?.gaps ?? []) console.log(`gap     ${describeGap(g, s.watch?.watermarkId ?? null)}`);
          if (s.note) console.log(`note    ${s.note}`);
        }
        console.log('');
        const quota = [['key', 'quota left', 'state', 'granted', '429s']];
        for (const k of keys) {
          const st = k.disabled ? `disabled (${k.reason ?? 'auth'})` : k.parkedUntil ? `parked until ${k.parkedUntil.toISOString()}` : 'active';
          quota.push([k.fingerprint, k.remaining === null ? 'unknown (run `harvest quota`)' : formatCount(k.remaining), st, formatCount(k.granted), formatCount(k.rateLimited)]);
        }
        console.log(keys.length === 0 ? 'no API key yet: none configured here (HARVEST_API_KEYS), and no worker has synced one' : table(quota));
        const stalled = health.filter((h) => h.stalled);
        if (o.check && stalled.length > 0) {
          console.error(`harvest: ${stalled.length} stalled job${stalled.length === 1 ? '' : 's'}: ${stalled.map((h) => `${h.jobId} (${h.waitsOn})`).join('; ')}`);
          state.exitCode = STALLED_EXIT_CODE;
        }
      }, { keyless: true });
    });

  program
    .command('wait')
    .description('work a queued job in this process until it ends, showing progress (exit code as --wait)')
    .argument('<job-id>')
    .option('--concurrency <n>', 'slices walked at once (default: rate × latency)')
    .option('--follow', 'only show its progress: workers elsewhere run it (no key needed, no request made)')
    .action(async (id: string, o: { concurrency?: string; follow?: boolean }) => {
      const jobId = parseJobId(id);
      const concurrency = o.concurrency === undefined ? undefined : parseConcurrency(o.concurrency);
      const follow = o.follow === true;
      await withServices(cliRuntime(state, { quiet: true }), async (services) => {
        const snap = await jobSnapshot(services.pool, jobId);
        if (!snap) {
          console.error(`no job ${jobId}`);
          state.exitCode = 1;
          return;
        }
        // Ended already: its line and exit code, without starting workers (a start syncs quota).
        if (waitEnded(snap.status)) {
          console.error(describeEnd(snap));
          state.exitCode = WAIT_EXIT[snap.status];
          return;
        }
        // Working the queue here: refused for another prefix's database, as a worker's start is.
        if (!follow) await claimWorkerPrefix(services.pool, services.config.redisPrefix);
        state.exitCode = await waitForJob(services, jobId, { concurrency, follow });
      }, { keyless: follow });
    });

  for (const action of ['pause', 'resume', 'cancel'] as const) {
    program
      .command(action)
      .description(`${action} a job`)
      .argument('<job-id>')
      .action(async (id: string) => {
        const jobId = parseJobId(id);
        // Job control calls no service: an operator without the keys can still stop a job.
        await withServices(cliRuntime(state, { quiet: true }), async (services) => {
          // A resume queues the job's slices under the prefix: refused for another database's
          // prefix, as every process that works the queue is (pause and cancel only take out).
          if (action === 'resume') await claimPrefixForDatabase(services.redis, services.pool, services.config.redisPrefix);
          const status = await controlJob({ pool: services.pool, queues: services.queues, budgets: services.gate }, jobId, action);
          console.log(`job ${jobId} ${status}`);
        }, { keyless: true });
      });
  }

  program
    .command('quota')
    .description('the quota of each key (one request each)')
    .action(async () => {
      // The table gives each key's outcome; the limiter's log lines about a refused key would
      // repeat it, with a stack.
      const runtime = cliRuntime(state, { level: 'fatal' });
      await withServices(runtime, async (services) => {
        const harvester = new Harvester(services, { concurrency: 1 });
        // Every key, one the service refused before (401) included: it may take it again now.
        const results = await harvester.syncQuota({ recheckRefused: true });
        const rows = [['key', 'remaining', 'valid until', 'note']];
        for (const r of results) {
          rows.push([r.fingerprint, r.remaining === null ? '-' : formatCount(r.remaining), r.validUntil?.toISOString() ?? '-', r.error ? String((r.error as Error).message ?? r.error) : '']);
        }
        console.log(table(rows));
        if (results.some((r) => r.error)) state.exitCode = 1;
      });
    });
}
