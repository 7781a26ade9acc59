/**
 * A job command prints the job's id as soon as the job is committed, before its slices are queued
 * (one Redis call each: seconds for a million ids to hydrate). A Ctrl-C while they are queued used
 * to exit with no id printed while the job, in Postgres, ran anyway on the next worker; a user
 * who queued it again paid twice. The slices left unqueued are found by reconcile.
 */
import { describe, expect, it } from 'vitest';
import { planContext } from '../../src/jobs/harvester.ts';
import type { HarvestQueues } from '../../src/jobs/queue.ts';
import { submitJob } from '../../src/jobs/submit.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';
import { visibleTweetIds } from './ground-truth.ts';

describe('a submit interrupted while its slices are queued', () => {
  const h = useHarness();

  it('has told the job id first; the job, found by reconcile, completes with every tweet', async () => {
    const ids = visibleTweetIds(h.sim.world, 450, 3);
    const told: string[] = [];
    let queued = 0;
    // The process dies (Ctrl-C) after two of the five slices were queued.
    const queues = new Proxy(h.services.queues, {
      get(target, property, receiver) {
        if (property !== 'enqueueSlice') return Reflect.get(target, property, receiver) as unknown;
        return async (...args: Parameters<HarvestQueues['enqueueSlice']>) => {
          expect(told).toHaveLength(1);
          if (++queued > 2) throw new Error('interrupted');
          return target.enqueueSlice(...args);
        };
      },
    });
    const submitted = submitJob(
      { pool: h.services.pool, queues, budgets: h.services.gate, planContext: await planContext(h.services) },
      { kind: 'hydrate', params: { ids }, onCreated: (id) => told.push(id) },
    );
    await expect(submitted).rejects.toThrow('interrupted');
    expect(told).toHaveLength(1);
    const jobId = told[0]!;
    const snap = await h.runUntil(jobId);
    expect(snap.status).toBe('completed');
    expect((await jobTweetIds(h, jobId)).length).toBe(ids.length);
  });
});
