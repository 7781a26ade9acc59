/** retryIdempotentWrite: which failures are written again, and how often (accountAttempts, orphan requests). */
import { describe, expect, it } from 'vitest';
import { retryIdempotentWrite, SqlState } from '../../src/store/db.ts';

const failing = (code: string) => Object.assign(new Error(`failed with ${code}`), { code });

function counted(failures: string[]): { write: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    write: () => {
      const code = failures[calls++];
      return code === undefined ? Promise.resolve('written') : Promise.reject(failing(code));
    },
    calls: () => calls,
  };
}

describe('retryIdempotentWrite', () => {
  it.each([SqlState.DEADLOCK_DETECTED, SqlState.SERIALIZATION_FAILURE, SqlState.ADMIN_SHUTDOWN, 'ECONNRESET'])('writes again after %s', async (code) => {
    const w = counted([code]);
    await expect(retryIdempotentWrite(w.write)).resolves.toBe('written');
    expect(w.calls()).toBe(2);
  });

  it('writes again after node-postgres\' bare lost-connection error (no code)', async () => {
    let calls = 0;
    const write = () => (calls++ === 0 ? Promise.reject(new Error('Connection terminated unexpectedly')) : Promise.resolve('written'));
    await expect(retryIdempotentWrite(write)).resolves.toBe('written');
    expect(calls).toBe(2);
  });

  it('gives up after three tries with the last error', async () => {
    const w = counted([SqlState.DEADLOCK_DETECTED, SqlState.DEADLOCK_DETECTED, SqlState.CONNECTION_FAILURE, SqlState.DEADLOCK_DETECTED]);
    await expect(retryIdempotentWrite(w.write)).rejects.toMatchObject({ code: SqlState.CONNECTION_FAILURE });
    expect(w.calls()).toBe(3);
  });

  it.each([SqlState.CHECK_VIOLATION, SqlState.INVALID_PASSWORD, SqlState.INVALID_CATALOG_NAME])('does not write again after %s, which another try would meet too', async (code) => {
    const w = counted([code]);
    await expect(retryIdempotentWrite(w.write)).rejects.toMatchObject({ code });
    expect(w.calls()).toBe(1);
  });
});
