/** The local-minus-Redis clock difference a grant's send-by time is computed with (clock-offset.ts). */
import { describe, expect, it } from 'vitest';
import { ClockOffset } from '../../src/jobs/limiter/clock-offset.ts';

describe('ClockOffset', () => {
  it('keeps the least difference: a reply handled late does not move it', () => {
    const clock = new ClockOffset();
    clock.observe(1_000, 900);
    clock.observe(1_200, 1_040); // handled 60 ms late
    expect(clock.ms).toBe(100);
    clock.observe(1_300, 1_205); // a truer reading
    expect(clock.ms).toBe(95);
  });

  it('forgets a reading after one to two 30 s windows, so a moved clock is followed', () => {
    const clock = new ClockOffset();
    clock.observe(0, -100);
    expect(clock.ms).toBe(100);
    // Redis's clock now runs 50 ms further behind: the old, smaller reading still rules for a window…
    clock.observe(30_000, 29_850);
    expect(clock.ms).toBe(100);
    // …and is gone once two windows have passed since it was made.
    clock.observe(60_000, 59_850);
    expect(clock.ms).toBe(150);
  });
});
