import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { confirmSpend, terminalIo, type ConfirmIo } from '../../src/cli/confirm.ts';
import { InputError } from '../../src/errors.ts';
import { runCli } from '../helpers/cli.ts';
import { useHarness } from '../helpers/harness.ts';

describe('the spending gate (HARVEST_CONFIRM_ABOVE, --yes)', () => {
  const h = useHarness();
  const jobs = async () => (await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n;
  const ids = Array.from({ length: 250 }, (_, i) => String(1_800_000_000_000_000_000n + BigInt(i)));
  const file = join(tmpdir(), `confirm-${process.pid}.txt`);
  const low = () => ({ ...h.env, HARVEST_CONFIRM_ABOVE: '2' });

  it('off a terminal, a job over the threshold is refused with one line and nothing is queued', async () => {
    await writeFile(file, ids.join('\n'));
    const before = await jobs();
    const run = await runCli(['hydrate', file], low());
    expect(run.code).not.toBe(0);
    expect(run.err.split('\n')).toHaveLength(1);
    expect(run.err).toMatch(/expected to spend ~3 requests \(250 distinct ids, 100 a request\), more than HARVEST_CONFIRM_ABOVE=2: add --yes/);
    expect(run.out).toBe('');
    expect(await jobs()).toBe(before);
  });

  it('--yes queues it', async () => {
    await writeFile(file, ids.join('\n'));
    const before = await jobs();
    const run = await runCli(['hydrate', file, '--yes'], low());
    expect(run.code, run.err).toBe(0);
    expect(run.out.split('\n')[0]).toMatch(/^\d+$/);
    expect(await jobs()).toBe(before + 1);
  });

  it('--max-requests within the threshold needs no --yes (the job never spends more)', async () => {
    await writeFile(file, ids.join('\n'));
    const run = await runCli(['hydrate', file, '--max-requests', '2'], low());
    expect(run.code, run.err).toBe(0);
  });

  it('a watch weighs its first month: mentions --every 2m is 21,600 passes, over the default 10,000; every 5m (the interface\'s example) is not', async () => {
    const before = await jobs();
    const refused = await runCli(['mentions', 'jack', '--every', '2m'], h.env);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toMatch(/~21,600 requests \(its first month: a pass every 2m, one request each at least\), more than HARVEST_CONFIRM_ABOVE=10000/);
    expect(await jobs()).toBe(before);
    const documented = await runCli(['mentions', 'jack', '--every', '5m'], h.env); // 8,640 a month
    expect(documented.code, documented.err).toBe(0);
    // (another handle: one identity has one schedule)
    const yes = await runCli(['mentions', 'jill', '--every', '2m', '--yes'], h.env);
    expect(yes.code, yes.err).toBe(0);
    expect(await jobs()).toBe(before + 2);
  });

  it('a bounded search weighs its 4-request probe', async () => {
    const before = await jobs();
    const run = await runCli(['search', 'lang:en', '--since', '2026-09-01', '--until', '2026-10-31'], low());
    expect(run.code).not.toBe(0);
    expect(run.err).toMatch(/the backfill, from a 4-request probe: ~?[\d,]+ tweets\), more than HARVEST_CONFIRM_ABOVE=2: add --yes/);
    expect(await jobs()).toBe(before);
  });

  it('conversations weighs the missing parents and roots it counts in Postgres', async () => {
    const source = await h.submit({ kind: 'search', params: { query: 'filter:replies', since: '2026-10-01', until: '2026-10-03' } });
    await h.runUntil(source);
    const before = await jobs();
    const run = await runCli(['conversations', source], { ...h.env, HARVEST_CONFIRM_ABOVE: '1' });
    expect(run.code).not.toBe(0);
    expect(run.err).toMatch(/missing parents one level up.*add --yes/);
    expect(await jobs()).toBe(before);
  });

  it('on a terminal it asks, and only y or yes goes ahead', async () => {
    const asked: string[] = [];
    const io = (answer: string): ConfirmIo => ({ interactive: true, ask: async (q) => (asked.push(q), answer) });
    const spend = { requests: 9000, basis: 'a test' };
    await expect(confirmSpend(spend, { threshold: 5000, yes: false, io: io('y') })).resolves.toBeUndefined();
    await expect(confirmSpend(spend, { threshold: 5000, yes: false, io: io('YES') })).resolves.toBeUndefined();
    await expect(confirmSpend(spend, { threshold: 5000, yes: false, io: io('') })).rejects.toThrow(InputError);
    await expect(confirmSpend(spend, { threshold: 5000, yes: false, io: io('n') })).rejects.toThrow(/not confirmed; nothing was queued/);
    expect(asked[0]).toBe('This job is expected to spend ~9,000 requests (a test). Queue it? [y/N] ');
    // Within the threshold, or with --yes, nothing is asked.
    await confirmSpend({ requests: 5000, basis: 'x' }, { threshold: 5000, yes: false, io: io('n') });
    await confirmSpend(spend, { threshold: 5000, yes: true, io: io('n') });
    expect(asked).toHaveLength(4);
  });

  it('a terminal whose stdin was read to its end (`hydrate -` typed in) cannot answer: refused at once, not hung', async () => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const stderr = Object.assign(new PassThrough(), { isTTY: true });
    expect(terminalIo(stdin, stderr).interactive).toBe(true);
    stdin.end('1234567890123456789\n');
    for await (const chunk of stdin) void chunk;
    const io = terminalIo(stdin, stderr);
    expect(io.interactive).toBe(false);
    await expect(confirmSpend({ requests: 9000, basis: 'a test' }, { threshold: 5000, yes: false, io })).rejects.toThrow(/add --yes to queue it; nothing was queued/);
  });
});
