/* eslint-disable no-console -- this file is the simulator's terminal front end (see brief: console in cli.ts only) */
/**
 * `harvest simulator`: serves the bundled simulator on loopback until SIGINT/SIGTERM. The lead
 * wires `registerSimulatorCommand` into src/cli/main.ts.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { InputError } from '../errors.ts';
import { SIMULATOR_PROFILES, type Quirks } from './options.ts';
import { startSimulator } from './server.ts';
import { catalog } from './world/catalog.ts';
import { createWorld, DEFAULT_END_MS, DEFAULT_START_MS } from './world/index.ts';

const intIn = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be between ${min} and ${max}`);

const optionsSchema = z.object({
  port: intIn('--port', 0, 65535).default(8787),
  key: z.array(z.string().regex(/^\S+$/, '--key must not contain whitespace')).default(['sim-key']),
  seed: intIn('--seed', 0, 2 ** 31 - 1).default(1),
  latencyMs: z
    .string()
    .regex(/^\d+-\d+$/, '--latency-ms must look like A-B, e.g. 20-80')
    .transform((v) => v.split('-').map(Number) as [number, number])
    .refine(([a, b]) => a <= b && b <= 60_000, '--latency-ms needs A <= B <= 60000')
    .optional(),
  scale: z.enum(['small', 'large'], { error: '--scale must be small or large' }).default('small'),
  quota: intIn('--quota', 0, 1_000_000_000).default(100_000),
  errorRate: z
    .string()
    .transform(Number)
    .refine((n) => Number.isFinite(n) && n >= 0 && n <= 1, '--error-rate must be a number from 0 to 1')
    .optional(),
  profile: z.enum(SIMULATOR_PROFILES, { error: '--profile must be production or spec' }).default('production'),
  // absent: the profile decides; given: overrides the profile
  legacyTimestamps: z.boolean().optional(),
  v2Gone: z.boolean().optional(),
  shortPages: z.boolean().optional(),
});

export type SimulatorCliOptions = z.infer<typeof optionsSchema>;

export function parseSimulatorOptions(raw: unknown): SimulatorCliOptions {
  const r = optionsSchema.safeParse(raw);
  if (!r.success) throw new InputError(r.error.issues[0]?.message ?? 'invalid simulator options');
  return r.data;
}

/**
 * Where the served world's tweets end: the moment the simulator starts (to the minute), or the
 * fixed end tests use when that is later. With the fixed end (2026-11-01) alone, a watch or a
 * search without --since tried against `harvest simulator` found nothing: their default lookback
 * is the last days before now.
 */
export function worldEndMs(nowMs: number): number {
  return Math.max(DEFAULT_END_MS, Math.floor(nowMs / 60_000) * 60_000);
}

/** Only the quirk flags given on the command line, so the profile decides the rest. */
export function explicitQuirks(o: SimulatorCliOptions): Partial<Quirks> {
  const out: Partial<Quirks> = {};
  if (o.legacyTimestamps !== undefined) out.legacyTimestamps = o.legacyTimestamps;
  if (o.v2Gone !== undefined) out.v2Gone = o.v2Gone;
  if (o.shortPages !== undefined) out.shortPages = o.shortPages;
  return out;
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export function registerSimulatorCommand(program: Command): void {
  program
    .command('simulator')
    .description('serve the bundled service simulator on loopback')
    .option('--port <n>', 'port to listen on (0: any free port)')
    .option('--key <key>', 'an accepted API key (repeatable; default sim-key)', collect)
    .option('--seed <n>', 'world seed')
    .option('--latency-ms <a-b>', 'uniform latency added to every response, e.g. 20-80')
    .option('--scale <scale>', 'world size: small or large')
    .option('--quota <n>', 'quota of each key')
    .option('--error-rate <r>', 'share of requests answering 500 (0..1)')
    .option('--profile <profile>', 'production (default: as production answers) or spec (service-spec.md as written)')
    .option('--legacy-timestamps', 'v3 created_at in the weekday form')
    .option('--v2-gone', 'every /v2 path answers 410')
    .option('--short-pages', 'pages of 5, 12, 18 while more exist')
    .action(async (raw: Record<string, unknown>) => {
      const o = parseSimulatorOptions(raw);
      const endMs = worldEndMs(Date.now());
      const sim = await startSimulator({
        port: o.port,
        world: createWorld({ seed: o.seed, scale: o.scale, endMs }),
        keys: o.key.map((key) => ({ key, quota: o.quota })),
        ...(o.latencyMs ? { latencyMs: o.latencyMs } : {}),
        ...(o.errorRate !== undefined ? { faults: { errorRate500: o.errorRate } } : {}),
        profile: o.profile,
        quirks: explicitQuirks(o),
      });
      console.log(`simulator listening on ${sim.url}`);
      console.log(`HARVEST_BASE_URL=${sim.url}`);
      console.log(`profile: ${o.profile}`);
      console.log(`tweets from ${new Date(DEFAULT_START_MS).toISOString()} to ${new Date(endMs).toISOString()}`);
      console.log(`accepted keys (header ApiKey): ${o.key.join(', ')}`);
      console.log(`catalog (also GET ${sim.url}/_sim/catalog):`);
      console.log(JSON.stringify(catalog(sim.world), null, 2));
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await sim.close();
      console.log('simulator stopped');
    });
}
