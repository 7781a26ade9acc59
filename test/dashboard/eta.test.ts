/**
 * The dashboard's ETA comes from the unrounded share done; the share is rounded for display only.
 * From the rounded share, a long job's ETA was "–" below 0.05% and up to half off below 1%.
 */
import { describe, expect, it } from 'vitest';
import { jobView } from '../../src/dashboard/source.ts';
import type { DashboardJobRow } from '../../src/store/dashboard.ts';

const HOUR = 3_600_000;

function running(rangeFraction: number, now: number): DashboardJobRow {
  return {
    id: '7', kind: 'search', status: 'running', params: {}, tweets: 10, requests: 10, maxRequests: null, note: null, errorMessage: null,
    createdAt: new Date(now - HOUR), startedAt: new Date(now - HOUR), finishedAt: null, heldMs: 0, recentRequests: 60,
    slices: { pending: 5, running: 5, done: 0, failed: 0, cancelled: 0 }, rangeFraction, isWatch: false, nextDueAt: null,
  };
}

describe('dashboard ETA', () => {
  it('an hour in at 0.04% and at 0.14%: the ETA from the share itself, the share shown rounded', () => {
    const now = Date.now();
    for (const share of [0.0004, 0.0014]) {
      const view = jobView(running(share, now), new Set(), new Map(), now);
      const expected = (HOUR / 1000) * (1 / share - 1);
      expect(view.etaSeconds).not.toBeNull();
      expect(Math.abs(view.etaSeconds! - expected) / expected).toBeLessThan(0.01);
      expect(view.progress).toBe(Math.round(share * 1000) / 1000);
    }
  });
});
