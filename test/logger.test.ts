import { describe, expect, it } from 'vitest';
import { createLogger, throttledLog } from '../src/logger.ts';

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

describe('createLogger', () => {
  it('scrubs a configured key from every line, whole or a run of it echoed truncated or masked', () => {
    const key = 'sk_live_SECRET_7f3a9c1e2d4b';
    const lines: string[] = [];
    const log = createLogger({ secrets: [key, 'other-key-0123'], destination: { write: (line: string) => void lines.push(line) } });
    log.info(`invalid key ${key}`);
    log.warn({ serviceMessage: 'invalid key sk_live_SECRET_7f...', nested: { said: ['key ending in ...9c1e2d4b'] } }, 'refused');
    log.error({ err: new Error('key SECRET_7****9c1e2d4b rejected') }, 'call failed for %s', 'SECRET_7f3a9c');
    const out = lines.join('');
    expect(out).toContain('invalid key [REDACTED]...');
    expect(out).toContain('key ending in ...[REDACTED]');
    expect(out).toContain('key [REDACTED]****[REDACTED] rejected');
    expect(out).toContain('call failed for [REDACTED]');
    for (const part of ['SECRET_7f', '7f3a9c', '9c1e2d4b', 'SECRET_7']) expect(out).not.toContain(part);
  });
});
