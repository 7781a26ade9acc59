import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNotifyUrls } from '../../src/config.ts';
import { NotifyLoop } from '../../src/jobs/notify.ts';
import { runWatchTick } from '../../src/jobs/watch.ts';
import { silentLogger } from '../../src/logger.ts';
import { failJob, finishSlice, pauseJobForQuota, rollUpJob } from '../../src/store/job-runtime.ts';
import { createJob, createSlices } from '../../src/store/jobs.ts';
import { addEvent, deliveryStates, EventType, recordKeyQuota } from '../../src/store/outbox.ts';
import { finishWatchPass } from '../../src/store/watches.ts';
import { runCli } from '../helpers/cli.ts';
import { useHarness } from '../helpers/harness.ts';
import { Receiver } from '../helpers/webhook-receiver.ts';

const waitFor = async (what: string, ok: () => Promise<boolean> | boolean, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe('notifications', () => {
  const receiver = new Receiver();
  beforeAll(async () => {
    // Reserve a port, then leave the receiver down: the harness's worker starts with a dead webhook.
    await receiver.up();
    await receiver.down();
  });
  afterAll(() => receiver.down());
  const h = useHarness(() => ({ env: { HARVEST_NOTIFY_URL: receiver.url } }));
  const pool = () => h.services.pool;
  const loop = (over: Partial<ConstructorParameters<typeof NotifyLoop>[0]> = {}) =>
    new NotifyLoop({ pool: pool(), logger: silentLogger, targets: parseNotifyUrls(receiver.url), stalledAfterMs: 3_600_000, baseBackoffMs: 50, maxBackoffMs: 200, pollMs: 50, ...over });
  const outboxIds = async (type: string) =>
    (await pool().query<{ id: string }>(`SELECT event_id::text AS id FROM outbox WHERE type = $1 ORDER BY id`, [type])).rows.map((r) => r.id);

  it('with the receiver down, jobs complete on time and their events wait; once it is back every event arrives, none lost', async () => {
    const started = Date.now();
    const a = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-01', until: '2026-10-02' } });
    expect((await h.runUntil(a)).status).toBe('completed');
    const b = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-02', until: '2026-10-03' } });
    expect((await h.runUntil(b)).status).toBe('completed');
    expect(Date.now() - started).toBeLessThan(15_000);

    const completed = await outboxIds('job.completed');
    expect(completed).toHaveLength(2);
    // The worker's loop tried and failed (connection refused), and recorded why without the URL.
    await waitFor('a failed attempt', async () => (await deliveryStates(pool())).some((d) => d.attempts > 0));
    const failed = await deliveryStates(pool());
    expect(failed.every((d) => d.deliveredAt === null)).toBe(true);
    expect(failed[0]!.lastError).toBe('ECONNREFUSED');
    expect(JSON.stringify(failed)).not.toContain('secret-part');
    expect(receiver.events).toHaveLength(0);

    await receiver.up();
    const l = loop();
    l.start();
    try {
      // Delivered AND recorded as delivered: the receiver sees an event before its answer reaches the
      // loop, and a loop stopped in between leaves it pending (delivered again later, at least once).
      await waitFor(
        'both events delivered and recorded',
        async () =>
          receiver.events.filter((e) => e.type === 'job.completed').length >= 2 && (await deliveryStates(pool())).every((d) => d.deliveredAt !== null),
      );
    } finally {
      await l.stop();
    }
    const got = receiver.events.filter((e) => e.type === 'job.completed');
    expect(got.map((e) => e.id).sort()).toEqual([...completed].sort());
    expect(new Set(got.map((e) => e.jobId))).toEqual(new Set([a, b]));
    for (const e of got) {
      expect(e.text).toMatch(new RegExp(`^harvest: job ${e.jobId} \\(search\\) completed`));
      expect(typeof e.at).toBe('string');
    }
    expect((await deliveryStates(pool())).every((d) => d.deliveredAt !== null)).toBe(true);
  });

  it('event text reaches Slack escaped (a tweet saying <!channel> pings no one); data keeps the raw text', async () => {
    const jobId = await createJob(pool(), { kind: 'search', params: { query: 'x' } });
    await addEvent(pool(), { type: EventType.WATCH_NEW_TWEETS, jobId, text: 'found 1\n• 1: <!channel> see <https://evil.example|x.com> & more', data: { tweets: [{ id: '1', text: '<!channel> & more' }] } });
    const { rows } = await pool().query<{ payload: { text: string; data: { tweets: Array<{ text: string }> } } }>('SELECT payload FROM outbox WHERE job_id = $1::bigint', [jobId]);
    expect(rows[0]!.payload.text).toBe('found 1\n• 1: &lt;!channel&gt; see &lt;https://evil.example|x.com&gt; &amp; more');
    expect(rows[0]!.payload.data.tweets[0]!.text).toBe('<!channel> & more');
    // Not left due for the tests after this one, which count what one pass sends.
    await pool().query('DELETE FROM outbox WHERE job_id = $1::bigint', [jobId]);
  });

  it("--wait sends its own job's end before it exits", async () => {
    await receiver.up();
    const run = await runCli(['search', 'lang:en', '--since', '2026-10-08', '--until', '2026-10-09', '--wait'], h.env);
    expect(run.code).toBe(0);
    const jobId = run.out.split('\n')[0]!;
    expect(receiver.events.filter((e) => e.type === 'job.completed' && e.jobId === jobId)).toHaveLength(1);
    await pool().query('DELETE FROM outbox WHERE job_id = $1::bigint', [jobId]);
  });

  it('an event the receiver refuses (422) does not hold back the events after it', async () => {
    await receiver.up();
    const l = loop();
    await l.runOnce(); // what earlier tests left
    const jobIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const jobId = await createJob(pool(), { kind: 'search', params: { query: `refuse ${i}` } });
      await failJob(pool(), jobId, 'X', `broke ${i}`);
      jobIds.push(jobId);
    }
    const refused = jobIds[0]!;
    receiver.refuse = (e) => e.jobId === refused;
    try {
      const before = receiver.events.length;
      await l.runOnce();
      expect(receiver.events.slice(before).map((e) => e.jobId)).toEqual(jobIds.slice(1));
      const { rows } = await pool().query<{ id: string }>(`SELECT event_id::text AS id FROM outbox WHERE job_id = $1::bigint`, [refused]);
      const states = await deliveryStates(pool());
      expect(states.find((d) => d.eventId === rows[0]!.id)).toMatchObject({ deliveredAt: null, attempts: 1, lastError: 'HTTP 422' });
    } finally {
      receiver.refuse = () => false;
      // Not left due for the tests after this one, which count what one pass sends.
      await pool().query('DELETE FROM outbox WHERE job_id = ANY($1::bigint[])', [jobIds]);
    }
  });

  it('a webhook that never answers costs one deadline per pass, and the event is retried later', async () => {
    await receiver.up();
    receiver.hang = true;
    try {
      const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-03', until: '2026-10-04' } });
      await failJob(pool(), jobId, 'API_BAD_REQUEST', 'the service refused the query');
      const l = loop({ deadlineMs: 200 });
      const t0 = performance.now();
      await l.runOnce();
      expect(performance.now() - t0).toBeLessThan(1500);
      const { rows } = await pool().query<{ id: string }>(`SELECT event_id::text AS id FROM outbox WHERE job_id = $1::bigint AND type = 'job.failed'`, [jobId]);
      const state = (await deliveryStates(pool())).find((d) => d.eventId === rows[0]!.id);
      expect(state).toMatchObject({ attempts: 1, deliveredAt: null, lastError: 'deadline' });
      receiver.hang = false;
      await new Promise((r) => setTimeout(r, 100));
      await l.runOnce();
      const failedEvents = receiver.events.filter((e) => e.type === 'job.failed' && e.jobId === jobId);
      expect(failedEvents).toHaveLength(1);
      expect(failedEvents[0]!.text).toContain('failed: the service refused the query');
    } finally {
      receiver.hang = false;
    }
  });

  it('a watch pass that found tweets is announced once, with its count and first tweets', async () => {
    const w = h.sim.world;
    const target = [...w.users]
      .filter((u) => !u.protected && !u.suspended && !u.deleted)
      .sort((x, y) => w.mentionsOf(y.index).length - w.mentionsOf(x.index).length)[0]!;
    const jobId = await h.submit({ kind: 'mentions', params: { handle: target.username, everySeconds: 3600, since: '2026-09-01' } });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    // New mentions arrive; the next pass finds exactly those.
    const author = w.users.find((u) => !u.protected && !u.suspended && !u.deleted && u.index !== target.index)!;
    const added = h.sim.control.addTweets(Array.from({ length: 5 }, (_, i) => ({ authorHandle: author.username, text: `ping @${target.username} ${i}` })));
    await runWatchTick(jobId, { pool: pool(), queues: h.services.queues });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    const { rows } = await pool().query<{ payload: { text: string; data: { count: number; pass: number; tweets: Array<{ id: string; text: string }> } } }>(
      // Pass 1 may find a tweet or two as well (between the backfill's seed and its start): pass 2 is the one made here.
      `SELECT payload FROM outbox WHERE type = 'watch.new_tweets' AND job_id = $1::bigint AND payload->'data'->>'pass' = '2'`,
      [jobId],
    );
    expect(rows).toHaveLength(1);
    const { data, text } = rows[0]!.payload;
    const addedIds: string[] = added;
    expect(data.count).toBe(5);
    expect(data.pass).toBe(2);
    expect(data.tweets).toHaveLength(3);
    expect(data.tweets.every((t) => addedIds.includes(t.id))).toBe(true);
    expect(data.tweets[0]!.text).toMatch(/^ping @/);
    expect(text).toContain('found 5 new tweets in pass 2');
    expect(text).toContain(data.tweets[0]!.id);
    // Recording the same pass again (a roll-up re-run) announces nothing more.
    await finishWatchPass(pool(), jobId, { pass: 2, highWatermarkId: null, newCount: 5 });
    const again = await pool().query(`SELECT 1 FROM outbox WHERE type = 'watch.new_tweets' AND job_id = $1::bigint AND payload->'data'->>'pass' = '2'`, [jobId]);
    expect(again.rows).toHaveLength(1);
    await runCli(['cancel', jobId], h.env);
  });

  it('a pass counts the tweets it found, not the authors new to the job nor older tweets its first page holds; a one-shot pass that found nothing announces nothing', { timeout: 60_000 }, async () => {
    const w = h.sim.world;
    const visible = (u: (typeof w.users)[number]) => !u.protected && !u.suspended && !u.deleted;
    const target = [...w.users].filter(visible).sort((x, y) => w.mentionsOf(x.index).length - w.mentionsOf(y.index).length).find((u) => w.mentionsOf(u.index).length >= 25)!;
    const jobId = await h.submit({ kind: 'mentions', params: { handle: target.username, everySeconds: 3600 } });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    // Five new mentions, each by an author the job has not met.
    const known = new Set((await pool().query<{ id: string }>('SELECT user_id::text AS id FROM job_users WHERE job_id = $1::bigint', [jobId])).rows.map((r) => r.id));
    const authors = w.users.filter((u) => visible(u) && u.index !== target.index && !known.has(u.id)).slice(0, 5);
    h.sim.control.addTweets(authors.map((a, i) => ({ authorHandle: a.username, text: `hello @${target.username} ${i}` })));
    await runWatchTick(jobId, { pool: pool(), queues: h.services.queues });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    const announced = async (job: string) =>
      (await pool().query<{ count: number; text: string }>(
        `SELECT (payload->'data'->>'count')::int AS count, payload->>'text' AS text FROM outbox WHERE type = 'watch.new_tweets' AND job_id = $1::bigint ORDER BY id`,
        [job],
      )).rows;
    const second = (await announced(jobId)).find((e) => e.text.includes('in pass 2'))!;
    expect(second.count).toBe(5);
    expect((await pool().query<{ n: number }>('SELECT last_pass_new AS n FROM watches WHERE job_id = $1::bigint', [jobId])).rows[0]!.n).toBe(5);
    await runCli(['cancel', jobId], h.env);
    // A one-shot pass of the same handle: nothing new since; its page of older mentions is new to
    // its job, not to the watch.
    const oneShot = await h.submit({ kind: 'mentions', params: { handle: target.username } });
    const snap = await h.runUntil(oneShot);
    expect(snap.status).toBe('completed');
    expect(snap.tweets).toBeGreaterThan(0);
    expect(await announced(oneShot)).toEqual([]);
  });

  it('while Redis does not answer (the rate waits), the loop still delivers within seconds', { timeout: 30_000 }, async () => {
    await receiver.up();
    try {
      const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-06', until: '2026-10-07' } });
      await failJob(pool(), jobId, 'API_BAD_REQUEST', 'refused while Redis was away');
      // A Redis that never answers: the workers' connection holds the command until it is back.
      const l = loop({ rateWaits: { waitingJobs: () => new Promise<string[]>(() => undefined) }, stalledCheckMs: 0 });
      const started = Date.now();
      await l.runOnce();
      expect(Date.now() - started).toBeLessThan(10_000);
      await waitFor('the job.failed event', () => receiver.events.some((e) => e.type === 'job.failed' && e.jobId === jobId));
    } finally {
      await receiver.down();
    }
  });

  it('a parked job is announced at most hourly; a key is announced once per crossing of 20% and 10%', async () => {
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-04', until: '2026-10-05' } });
    await pauseJobForQuota(pool(), jobId, 'no key can grant');
    await pool().query(`UPDATE jobs SET status = 'running' WHERE id = $1::bigint`, [jobId]);
    await pauseJobForQuota(pool(), jobId, 'no key can grant');
    expect((await pool().query(`SELECT 1 FROM outbox WHERE type = 'job.paused_quota' AND job_id = $1::bigint`, [jobId])).rows).toHaveLength(1);
    await runCli(['cancel', jobId], h.env);

    const period = new Date('2026-12-01T00:00:00Z');
    const sync = (remaining: number, validUntil = period) => recordKeyQuota(pool(), { fingerprint: 'k_0123456789ab', remaining, validUntil });
    const notified: boolean[] = [];
    for (const r of [1000, 600, 190, 150, 95, 40]) notified.push((await sync(r)).notified);
    expect(notified).toEqual([false, false, true, false, true, false]);
    // A new period re-arms both levels.
    expect((await sync(5000, new Date('2027-01-01T00:00:00Z'))).notified).toBe(false);
    expect((await sync(900, new Date('2027-01-01T00:00:00Z'))).notified).toBe(true);
    const { rows } = await pool().query<{ text: string }>(`SELECT payload->>'text' AS text FROM outbox WHERE type = 'quota.low' ORDER BY id`);
    expect(rows.map((r) => /below (\d+)%/.exec(r.text)?.[1])).toEqual(['20', '10', '20']);
  });

  it('a job that ends again after a repair reopened it announces that end too; a roll-up re-run does not', async () => {
    const jobId = await createJob(pool(), { kind: 'search', params: { query: 'x' } });
    const [first] = await createSlices(pool(), jobId, [{ kind: 'search', params: { query: 'x' } }]);
    await finishSlice(pool(), { sliceId: first!, jobId, status: 'failed', errorCode: 'X', errorMessage: 'broke' });
    await rollUpJob(pool(), jobId);
    // What audit --repair does: new slices for the gaps, the job queued again.
    await new Promise((r) => setTimeout(r, 5));
    const [second] = await createSlices(pool(), jobId, [{ kind: 'search', params: { query: 'x' } }]);
    await pool().query(`UPDATE job_slices SET status = 'done' WHERE id = $1::bigint`, [first]);
    await pool().query(`UPDATE jobs SET status = 'queued', finished_at = NULL WHERE id = $1::bigint`, [jobId]);
    await finishSlice(pool(), { sliceId: second!, jobId, status: 'done' });
    await pool().query(`UPDATE jobs SET status = 'running' WHERE id = $1::bigint`, [jobId]);
    await rollUpJob(pool(), jobId);
    const { rows } = await pool().query<{ type: string }>(`SELECT type FROM outbox WHERE job_id = $1::bigint AND type LIKE 'job.%' ORDER BY id`, [jobId]);
    expect(rows.map((r) => r.type)).toEqual(['job.failed', 'job.completed']);
  });

  it('harvest notify test sends one event to each webhook and says how it answered', async () => {
    await receiver.up();
    const before = receiver.events.length;
    const ok = await runCli(['notify', 'test'], h.env);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^n_[0-9a-f]{12} {2}delivered \(HTTP 200\)$/);
    expect(ok.out).not.toContain('secret-part');
    expect(receiver.events.slice(before).map((e) => e.type)).toEqual(['test']);

    await receiver.down();
    const down = await runCli(['notify', 'test'], h.env);
    expect(down.code).toBe(1);
    expect(down.out).toContain('failed: ECONNREFUSED');

    const none = await runCli(['notify', 'test'], { ...h.env, HARVEST_NOTIFY_URL: '' });
    expect(none.code).toBe(1);
    expect(none.err).toBe('harvest: HARVEST_NOTIFY_URL is not set: give one or more webhook URLs, comma separated');
    const plain = await runCli(['notify', 'test'], { ...h.env, HARVEST_NOTIFY_URL: 'http://hooks.example.com/x?token=abc' });
    expect(plain.code).toBe(1);
    expect(plain.err).toContain('must use https://');
    expect(plain.err).not.toContain('token=abc');
  });
});
