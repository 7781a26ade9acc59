import { describe, expect, it } from 'vitest';
import { parseTimestamp } from '../../src/api-client/timestamps.ts';

describe('parseTimestamp', () => {
  it('reads ISO 8601 with Z, with an offset and with fractional seconds', () => {
    expect(parseTimestamp('2026-08-02T13:30:00Z')?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    expect(parseTimestamp('2026-08-02T15:30:00+02:00')?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    expect(parseTimestamp('2026-08-02T13:30:00.123456Z')?.toISOString()).toBe('2026-08-02T13:30:00.123Z');
    expect(parseTimestamp('2026-08-02T08:30:00-0500')?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
  });

  it('reads the legacy weekday form, honouring its offset', () => {
    expect(parseTimestamp('Sun Aug 02 13:30:00 +0000 2026')?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    expect(parseTimestamp('Sun Aug 02 15:30:00 +0200 2026')?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
  });

  it("reads check-quoted's zone-less form as UTC", () => {
    expect(parseTimestamp('2026-08-02 13:30:00')?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
  });

  it('rejects garbage and impossible dates instead of rolling them over', () => {
    for (const bad of [
      '',
      'yesterday',
      '2026-02-30T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-08-02T25:00:00Z',
      'Sun Foo 02 13:30:00 +0000 2026',
      'Sun Aug 32 13:30:00 +0000 2026',
      '1785677400',
      '2026-08-02T13:30:00+99:00',
      'Aug 02 2026',
    ]) {
      expect(parseTimestamp(bad), bad).toBeNull();
    }
  });
});
