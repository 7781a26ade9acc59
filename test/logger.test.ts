import { describe, expect, it } from 'vitest';
import { throttledLog } from '../src/logger.ts';

describe('throttledLog', () => {
  it('logs the first of a repeating error, then at most once an interval with how many it left out', () => {
    const lines: Array<{ fields: object; message: string }> = [];
    let now = 0;
    const log = throttledLog((fields, message) => lines.push({ fields, message }), 'queue connection error', 30_000, () => now);
    for (let i = 0; i < 100; i++) {
      log({ attempt: i });
      now += 500; // a reconnect attempt every half second, 50 s in all
    }
    expect(lines).toEqual([
      { fields: { attempt: 0 }, message: 'queue connection error' },
      { fields: { attempt: 60, repeated: 59 }, message: 'queue connection error' },
    ]);
  });
});
