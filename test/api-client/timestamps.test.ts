import { describe, expect, it } from 'vitest';
import { usageSchema } from '../../src/api-client/schemas/usage.ts';
import { parseTimestamp } from '../../src/api-client/timestamps.ts';

describe('parseTimestamp', () => {
  it('reads ISO 8601 with Z, with an offset and with fractional seconds', () => {
    expect(parseTimestamp('2026-08-02T13:30:00Z')?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    expect(parseTimestamp('2026-08-02T15:30:00+02:00')?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    expect(parseTimestamp('2026-08-02T13:30:00.123456Z')?.toISOString()).toBe('2026-08-02T13:30:00.123Z');
    expect(parseTimestamp('2026-08-02T08:30:00-0500')?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    // Hours alone: ISO 8601 allows it (a `valid_until` of this form parked every backfill).
    expect(parseTimestamp('2026-12-01T00:00:00+00')?.toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(parseTimestamp('2026-12-01T02:00:00+02')?.toISOString()).toBe('2026-12-01T00:00:00.000Z');
  });

  it('a usage answer whose valid_until cannot be read keeps its remaining quota (valid_until null)', () => {
    for (const valid of ['2026-12-01T00:00:00,5Z', '20261201T000000Z', 'next month', 7]) {
      expect(usageSchema.parse({ key_requests: 1, remaining_requests: 9, total_requests: 10, valid_until: valid })).toMatchObject({ remaining_requests: 9, valid_until: null });
    }
  });

  it('reads the legacy weekday form, honouring its offset', () => {
    expect(parseTimestamp('Sun Aug 02 13:30:00 +0000 2026')?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    expect(parseTimestamp('Sun Aug 02 15:30:00 +0200 2026')?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    expect(parseTimestamp('Sun Aug 02 06:00:00 -0730 2026')?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    expect(parseTimestamp(' Tue Feb 29 23:59:59 +0000 2028\n')?.toISOString()).toBe('2028-02-29T23:59:59.000Z');
    expect(parseTimestamp('Thu Dec 31 23:30:00 -0100 2026')?.toISOString()).toBe('2027-01-01T00:30:00.000Z');
  });

  it('reads every day of a leap and a common year in the legacy form as the ISO form does', () => {
    const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
    const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    for (const year of [2024, 2026]) {
      for (let t = Date.UTC(year, 0, 1, 7, 8, 9); t < Date.UTC(year + 1, 0, 1); t += 86_400_000) {
        const d = new Date(t);
        const dd = String(d.getUTCDate()).padStart(2, '0');
        const legacy = `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${dd} 07:08:09 +0000 ${year}`;
        expect(parseTimestamp(legacy)?.getTime(), legacy).toBe(t);
        expect(parseTimestamp(d.toISOString())?.getTime()).toBe(t);
      }
    }
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
      'Sun Feb 29 13:30:00 +0000 2026',
      'Sux Aug 02 13:30:00 +0000 2026',
      'Mn\u016e Aug 02 13:30:00 +0000 2026',
      'Sun A\u0175\u0167 02 13:30:00 +0000 2026',
      'Sun aug 02 13:30:00 +0000 2026',
      'Sun Aug 02 13:30:00 +1500 2026',
      'Sun Aug 02 13:30:00 +0060 2026',
      'Sun Aug 02 13:30:00 *0000 2026',
      'Sun Aug 02 13:30:00 +0000 1969',
      'Sun Aug 2 13:30:00 +0000 2026',
      'Sun Aug 02 13:30:00  +0000 2026',
      'Sun Aug 02 13:30:0a +0000 2026',
      'Sun Aug 02 13-30:00 +0000 2026',
      'Sun Aug 02 13:30:60 +0000 2026',
      'Sun Aug 02 24:00:00 +0000 2026',
    ]) {
      expect(parseTimestamp(bad), bad).toBeNull();
    }
  });
});
