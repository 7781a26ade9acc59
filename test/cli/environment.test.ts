/**
 * The CLI reads its configuration from the environment it is handed (`main(argv, env)`), never
 * from `process.env`, so tests pass their own object and nothing leaks between them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../helpers/cli.ts';

describe('main(argv, env)', () => {
  it('takes its settings from the env argument: a bad setting there fails the command with the variable named', async () => {
    const before = { ...process.env };
    const { code, err } = await runCli(['status'], { HARVEST_RATE_PER_KEY: 'fast' });
    expect(code).toBe(1);
    expect(err).toMatch(/HARVEST_RATE_PER_KEY/);
    expect(process.env).toEqual(before);
  });

  it('connects where the env argument says, not where process.env says', async () => {
    const { code, err } = await runCli(['status'], { DATABASE_URL: 'postgres://root@127.0.0.1:1/nowhere', REDIS_URL: 'redis://127.0.0.1:1' });
    expect(code).toBe(1);
    expect(err).toMatch(/127\.0\.0\.1:1\b/);
    expect(err.split('\n')).toHaveLength(1);
  });

  it('--version prints package.json\'s version and exits 0, touching nothing', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const written: string[] = [];
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => written.push(String(chunk)) > 0);
    try {
      for (const flag of ['--version', '-V']) {
        expect((await runCli([flag], { DATABASE_URL: 'postgres://root@127.0.0.1:1/nowhere' })).code).toBe(0);
      }
    } finally {
      stdout.mockRestore();
    }
    expect(written).toEqual([`${version}\n`, `${version}\n`]);
  });
});
