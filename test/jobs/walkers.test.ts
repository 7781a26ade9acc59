/**
 * A process's walks per queue (src/jobs/walkers.ts): a walk promised to a slice split off is not
 * free again until a walk starts, the promise is taken back, or PROMISE_MS passes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PROMISE_MS, Walkers } from '../../src/jobs/walkers.ts';

describe('Walkers', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts each queue apart: capacity less walks running less walks promised', () => {
    const w = new Walkers({ backfill: 3, watch: 1 });
    w.started('backfill');
    expect(w.free('backfill')).toBe(2);
    expect(w.promise('backfill')).not.toBeNull();
    expect(w.promise('backfill')).not.toBeNull();
    expect(w.free('backfill')).toBe(0);
    expect(w.promise('backfill')).toBeNull();
    // The watch queue has its own walks.
    expect(w.free('watch')).toBe(1);
    expect(w.promise('watch')).not.toBeNull();
    expect(w.promise('watch')).toBeNull();
  });

  it('a walk that starts takes a promise; one that ends frees its walk', () => {
    const w = new Walkers({ backfill: 2, watch: 1 });
    w.promise('backfill');
    w.promise('backfill');
    w.started('backfill');
    expect(w.free('backfill')).toBe(0);
    w.started('backfill');
    expect(w.free('backfill')).toBe(0);
    w.ended('backfill');
    expect(w.free('backfill')).toBe(1);
  });

  it('a promise taken back frees its walk, once however often it is taken back', () => {
    const w = new Walkers({ backfill: 2, watch: 1 });
    const first = w.promise('backfill')!;
    w.promise('backfill');
    first();
    first();
    expect(w.free('backfill')).toBe(1);
  });

  it('a walk that ends promises itself to its remainder even when none is free', () => {
    const w = new Walkers({ backfill: 1, watch: 1 });
    w.started('backfill');
    expect(w.promise('backfill')).toBeNull();
    const back = w.promise('backfill', { always: true });
    expect(back).not.toBeNull();
    // The walk ends: its walk stays promised to the new slice, not free for another split.
    w.ended('backfill');
    expect(w.free('backfill')).toBe(0);
    back!();
    expect(w.free('backfill')).toBe(1);
  });

  it('a promise no walk of this process takes (the slice went to another) lapses after PROMISE_MS', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const w = new Walkers({ backfill: 2, watch: 1 });
    w.promise('backfill');
    vi.advanceTimersByTime(PROMISE_MS / 2);
    w.promise('backfill');
    expect(w.free('backfill')).toBe(0);
    vi.advanceTimersByTime(PROMISE_MS / 2 + 1);
    expect(w.free('backfill')).toBe(1);
    vi.advanceTimersByTime(PROMISE_MS / 2);
    expect(w.free('backfill')).toBe(2);
  });
});
