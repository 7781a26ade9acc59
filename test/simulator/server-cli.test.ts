import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { InputError } from '../../src/errors.ts';
import { explicitQuirks, parseSimulatorOptions, registerSimulatorCommand, worldEndMs } from '../../src/simulator/cli.ts';
import { createWorld, DEFAULT_END_MS } from '../../src/simulator/world/index.ts';

describe('harvest simulator options', () => {
  it('parses every option with defaults', () => {
    expect(parseSimulatorOptions({})).toMatchObject({ port: 8787, key: ['sim-key'], seed: 1, scale: 'small', quota: 100_000, profile: 'production' });
    expect(parseSimulatorOptions({ profile: 'spec' }).profile).toBe('spec');
    const o = parseSimulatorOptions({ port: '0', key: ['a', 'b'], seed: '9', latencyMs: '10-20', scale: 'large', quota: '5', errorRate: '0.25', v2Gone: true });
    expect(o).toMatchObject({ port: 0, key: ['a', 'b'], seed: 9, latencyMs: [10, 20], scale: 'large', quota: 5, errorRate: 0.25, v2Gone: true });
  });

  it('refuses bad values with a one-line InputError', () => {
    for (const raw of [{ port: '70000' }, { port: 'x' }, { latencyMs: '20-10' }, { latencyMs: '5' }, { scale: 'huge' }, { errorRate: '2' }, { key: ['a b'] }, { quota: '-1' }, { profile: 'staging' }]) {
      let caught: unknown;
      try {
        parseSimulatorOptions(raw);
      } catch (error) {
        caught = error;
      }
      expect(caught, JSON.stringify(raw)).toBeInstanceOf(InputError);
      expect((caught as Error).message).not.toContain('\n');
    }
  });

  it('passes only the quirk flags given, so the profile decides the rest', () => {
    expect(explicitQuirks(parseSimulatorOptions({ profile: 'spec' }))).toEqual({});
    expect(explicitQuirks(parseSimulatorOptions({ v2Gone: true, shortPages: false }))).toEqual({ v2Gone: true, shortPages: false });
  });

  it('serves tweets up to the moment it starts, so a watch\'s default lookback finds some', () => {
    const now = Date.UTC(2026, 10, 29, 12, 40, 31);
    expect(worldEndMs(now)).toBe(Date.UTC(2026, 10, 29, 12, 40));
    expect(worldEndMs(Date.UTC(2026, 9, 1))).toBe(DEFAULT_END_MS);
    const world = createWorld({ seed: 1, scale: 'small', endMs: worldEndMs(now) });
    const lastWeek = Array.from({ length: world.tweets.count }, (_, i) => world.tweets.createdAtMs(i)).filter((ms) => ms >= now - 7 * 86_400_000 && ms <= now);
    expect(lastWeek.length).toBeGreaterThan(100);
  });

  it('registers the simulator command with its options', () => {
    const program = new Command('harvest');
    registerSimulatorCommand(program);
    const cmd = program.commands.find((c) => c.name() === 'simulator');
    expect(cmd?.options.map((o) => o.long)).toEqual([
      '--port', '--key', '--seed', '--latency-ms', '--scale', '--quota', '--error-rate', '--profile', '--legacy-timestamps', '--v2-gone', '--short-pages',
    ]);
  });
});
