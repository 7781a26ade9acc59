/**
 * NotifyLoop against real webhooks on loopback: each webhook is delivered to on its own, so one that
 * hangs holds back only its own events, and what order a receiver sees events in.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseNotifyUrls } from '../../src/config.ts';
import { NotifyLoop } from '../../src/jobs/notify.ts';
import { silentLogger } from '../../src/logger.ts';
import { addEvent, deliveryStates, EventType } from '../../src/store/outbox.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { Receiver } from '../helpers/webhook-receiver.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const waitFor = async (what: string, ok: () => Promise<boolean> | boolean, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

const addEvents = async (n: number, tag: string) => {
  for (let i = 0; i < n; i++) await addEvent(db.pool, { type: EventType.TEST, text: `${tag} ${i}`, data: { tag, i } });
};

describe('NotifyLoop', () => {
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = new Receiver();
    await r.up();
    receivers.push(r);
    return r;
  };
  afterEach(async () => {
    for (const r of receivers.splice(0)) await r.down();
    // Nothing left due for the next test.
    await db.pool.query('DELETE FROM outbox');
  });

  it('a webhook that hangs does not hold back another: the healthy one gets every event while the first waits out its deadline', async () => {
    const [hung, healthy] = [await receiver(), await receiver()];
    hung.hang = true;
    await addEvents(30, 'hang');
    const targets = parseNotifyUrls(`${hung.url},${healthy.url}`);
    const loop = new NotifyLoop({ pool: db.pool, logger: silentLogger, targets, stalledAfterMs: 3_600_000, deadlineMs: 4000, batch: 5, pollMs: 50, baseBackoffMs: 50, maxBackoffMs: 200 });
    const started = performance.now();
    loop.start();
    try {
      // Six batches of five. Taking turns with the hanging webhook, the healthy one got its first
      // batch only after the first POST's 4 s deadline, and each later one after another deadline.
      await waitFor('30 events at the healthy webhook', () => healthy.events.length >= 30, 20_000);
      expect(performance.now() - started).toBeLessThan(2000);
      expect(hung.events).toHaveLength(0);

      // The hanging webhook keeps its own retry: the POST failed at its deadline, the event stays due.
      await waitFor('the deadline at the hanging webhook', async () => (await deliveryStates(db.pool)).some((d) => d.target === targets[0]!.fingerprint && d.attempts > 0));
      const first = (await deliveryStates(db.pool)).filter((d) => d.target === targets[0]!.fingerprint && d.attempts > 0);
      expect(first.every((d) => d.deliveredAt === null && d.lastError === 'deadline')).toBe(true);
      hung.hang = false;
      await waitFor('30 events at the webhook that came back', () => hung.events.length >= 30, 20_000);
    } finally {
      await loop.stop();
    }
    expect(new Set(hung.events.map((e) => e.id)).size).toBe(30);
    expect(new Set(healthy.events.map((e) => e.id)).size).toBe(30);
  });

  it('runOnce sends to every webhook at once: a hanging first one costs the pass one deadline, not the second its events', async () => {
    const [hung, healthy] = [await receiver(), await receiver()];
    hung.hang = true;
    await addEvents(3, 'pass');
    const loop = new NotifyLoop({ pool: db.pool, logger: silentLogger, targets: parseNotifyUrls(`${hung.url},${healthy.url}`), stalledAfterMs: 3_600_000, deadlineMs: 1000 });
    const started = performance.now();
    const pass = loop.runOnce();
    await waitFor('3 events at the healthy webhook', () => healthy.events.length >= 3, 5000);
    const healthyAt = performance.now() - started;
    await pass;
    await loop.stop();
    expect(healthyAt).toBeLessThan(900);
  });

  it('one worker tries a webhook\'s events oldest first, but a refused one is retried after later ones went out (no delivery order)', async () => {
    const r = await receiver();
    await addEvents(4, 'order');
    let refusals = 1;
    r.refuse = (e) => e.data.i === 1 && refusals-- > 0;
    const loop = new NotifyLoop({ pool: db.pool, logger: silentLogger, targets: parseNotifyUrls(r.url), stalledAfterMs: 3_600_000, baseBackoffMs: 50, maxBackoffMs: 200 });
    try {
      await loop.runOnce();
      await new Promise((resolve) => setTimeout(resolve, 100));
      await loop.runOnce();
    } finally {
      await loop.stop();
    }
    expect(r.events.map((e) => e.data.i)).toEqual([0, 2, 3, 1]);
  });
});
