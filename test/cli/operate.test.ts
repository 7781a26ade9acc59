import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/cli.ts';
import { describe, expect, it } from 'vitest';
import type { RequestGate } from '../../src/api-client/gate.ts';
import { RateWaitTracker } from '../../src/jobs/rate-wait.ts';
import { jobSnapshot } from '../../src/store/job-status.ts';
import { createJob } from '../../src/store/jobs.ts';
import { useHarness } from '../helpers/harness.ts';
import { closedPort } from '../helpers/net.ts';

describe('operating commands', () => {
  const h = useHarness();
  /** Runs a command in the harness environment (never by mutating process.env). */
  const run = (argv: string[]) => runCli(argv, h.env);

  it('a job command prints the job id on its first line; status, pause, resume and cancel steer it', async () => {
    const created = await run(['search', 'coffee', '--since', '2026-10-01', '--until', '2026-10-20']);
    expect(created.code).toBe(0);
    const jobId = created.out.split('\n')[0]!;
    expect(jobId).toMatch(/^\d+$/);
    // Not "re-run with --wait": that would queue the job a second time, every request paid twice.
    expect(created.err).toContain('a worker runs it: `harvest worker`');
    expect(created.err).not.toMatch(/re-run/);

    const status = await run(['status']);
    expect(status.code).toBe(0);
    expect(status.out).toMatch(new RegExp(`^${jobId}\\s+search\\s.*queued$`, 'm'));
    expect(status.out).toContain('k_'); // keys named by fingerprint only
    expect(status.out).not.toContain('test-key-1');

    expect((await run(['pause', jobId])).out).toBe(`job ${jobId} paused`);
    expect((await jobSnapshot(h.services.pool, jobId))?.status).toBe('paused');
    expect((await run(['pause', jobId])).code).not.toBe(0); // already paused: a clear refusal
    expect((await run(['resume', jobId])).out).toBe(`job ${jobId} queued`);
    const detail = await run(['status', jobId]);
    expect(detail.out).toMatch(/params\s+\{.*"query":"coffee"/);
    expect(detail.out).toMatch(/slices\s+\d+ done, \d+ running, \d+ pending, 0 failed/);
    // Job control calls no service: it needs no key (an operator without them can still stop a job).
    const keyless = { ...h.env, HARVEST_API_KEYS: '' };
    expect((await runCli(['pause', jobId], keyless)).out).toBe(`job ${jobId} paused`);
    expect((await runCli(['resume', jobId], keyless)).out).toBe(`job ${jobId} queued`);
    expect((await runCli(['cancel', jobId], keyless)).out).toBe(`job ${jobId} cancelled`);
    const cancelled = await jobSnapshot(h.services.pool, jobId);
    // Cancelled before any page: nothing of its range was walked (it read 100% walked).
    expect([cancelled?.status, cancelled?.fractionDone]).toEqual(['cancelled', 0]);
    expect((await run(['status', jobId])).out).toMatch(/range\s+0\.0% walked/);
    expect((await run(['status', '999999'])).code).toBe(1);
  });

  it('a Redis that refuses the password says so in one line, not "start it"', { timeout: 20_000 }, async () => {
    const port = await closedPort();
    const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--requirepass', 'sekret', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    try {
      for (let i = 0; i < 100 && (await runCli(['status'], { ...h.env, REDIS_URL: `redis://:sekret@127.0.0.1:${port}` })).code !== 0; i++) await new Promise((r) => setTimeout(r, 100));
      for (const url of [`redis://127.0.0.1:${port}`, `redis://:wrong@127.0.0.1:${port}`]) {
        const r = await runCli(['status'], { ...h.env, REDIS_URL: url });
        expect(r.code).toBe(1);
        expect(r.err.split('\n')).toHaveLength(1);
        expect(r.err).toMatch(new RegExp(`Redis at 127\\.0\\.0\\.1:${port} refused the credentials \\((NOAUTH|WRONGPASS)[^)]*\\): check the user and password in REDIS_URL`));
        expect(r.err).not.toContain('wrong');
      }
    } finally {
      server.kill();
    }
  });

  it('quota shows each key by fingerprint with its remaining quota (one request each)', async () => {
    const before = h.sim.control.requestLog().filter((r) => r.path === '/v3/key-usage-info').length;
    const q = await run(['quota']);
    expect(q.code).toBe(0);
    expect(q.out).toMatch(/k_[0-9a-f]{12}\s+[\d,]+\s+20\d\d-/);
    expect(h.sim.control.requestLog().filter((r) => r.path === '/v3/key-usage-info').length - before).toBe(1);
  });

  it('quota asks again about a key the service refused: once it takes the key again, the key grants again', async () => {
    const key = `revoked-${Date.now()}`;
    const env = { ...h.env, HARVEST_API_KEYS: key };
    const usage = () => h.sim.control.requestLog().filter((r) => r.path === '/v3/key-usage-info').length;
    // Refused: the key is disabled, in Redis, for every process.
    const refused = await runCli(['quota'], env);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/refused the key \(401\)/);
    // The service takes it now (the account was fixed): `quota` asks again and the key is live.
    h.sim.control.addKey(key);
    const before = usage();
    const back = await runCli(['quota'], env);
    expect(usage() - before).toBe(1);
    expect(back.code).toBe(0);
    expect(back.out).toMatch(/^k_[0-9a-f]{12}\s+[\d,]+\s+20\d\d-/m);
    const status = await runCli(['status'], env);
    expect(status.out).toMatch(/^k_[0-9a-f]{12}\s+[\d,]+\s+active/m);
  });

  it('quota with a refused key says so in its table alone: no log line, no stack; exit 1', async () => {
    // Its own process: the logger writes to file descriptor 2, which runCli does not see.
    const bin = fileURLToPath(new URL('../../bin/harvest.js', import.meta.url));
    const env: NodeJS.ProcessEnv = { ...process.env, ...h.env, HARVEST_API_KEYS: `${h.env.HARVEST_API_KEYS},refused-key` };
    delete env.HARVEST_LOG_LEVEL;
    const result = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = execFile(process.execPath, [bin, 'quota'], { env }, (_error, out, err) => resolve({ code: child.exitCode, out, err }));
    });
    expect(result.err).toBe('');
    expect(result.out).toMatch(/^k_[0-9a-f]{12}\s+-\s+-\s+.*refused the key \(401\)/m);
    expect(result.out).toMatch(/^k_[0-9a-f]{12}\s+[\d,]+\s+20\d\d-/m);
    expect(result.out).not.toContain('refused-key');
    expect(result.code).toBe(1);
  });

  it('a reader that closes the pipe early (status | head) ends the output quietly: no stack, the exit code stands', async () => {
    const bin = fileURLToPath(new URL('../../bin/harvest.js', import.meta.url));
    const env: NodeJS.ProcessEnv = { ...process.env, ...h.env };
    for (const argv of [['status'], ['--help']]) {
      const result = await new Promise<{ code: number | null; err: string }>((resolve) => {
        const child = spawn(process.execPath, [bin, ...argv], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let err = '';
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        // The reader is gone before the first line: every write meets EPIPE.
        child.stdout.destroy();
        child.on('close', (code) => resolve({ code, err }));
      });
      expect(result.err, argv.join(' ')).not.toMatch(/EPIPE|\n\s+at /);
      expect(result.code, argv.join(' ')).toBe(0);
    }
  });

  it('status lists every live job however old, and says how many older ended jobs it leaves out', async () => {
    const watch = await createJob(h.services.pool, { kind: 'mentions', params: { handle: 'jack' }, status: 'scheduled' });
    for (let i = 0; i < 55; i++) await createJob(h.services.pool, { kind: 'search', params: { query: `q${i}` }, status: 'completed' });
    const { rows } = await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs');
    const r = await run(['status']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^${watch}\\s+mentions`, 'm'));
    // Shown: the 50 newest and the old watch; left out: the rest, all ended.
    expect(r.out).toContain(`… and ${rows[0]!.n - 51} older ended jobs`);
  });

  it('status tells a job waiting for rate apart from one merely running', async () => {
    const slow: RequestGate = {
      acquire: () => new Promise((resolve) => setTimeout(() => resolve({ key: 'k', fingerprint: 'k_x' }), 2000)),
      report: async () => undefined,
      giveBack: async () => undefined,
    };
    const tracker = new RateWaitTracker(h.services.redis, h.prefix);
    const pending = tracker.wrap(slow).acquire({ jobId: '77' });
    // Stamped by a sweep every 250 ms once it has waited 250 ms: on a loaded machine a sweep comes
    // late, so the check polls (a fixed 450 ms failed once under the full suite).
    let waiting: string[] = [];
    for (let i = 0; i < 30 && !waiting.includes('77'); i++) {
      await new Promise((r) => setTimeout(r, 50));
      waiting = await tracker.waitingJobs();
    }
    expect(waiting).toContain('77');
    await pending;
    const fast = tracker.wrap({ acquire: async () => ({ key: 'k', fingerprint: 'k_x' }), report: async () => undefined, giveBack: async () => undefined });
    await fast.acquire({ jobId: '78' });
    expect(await tracker.waitingJobs()).not.toContain('78');
  });
});
