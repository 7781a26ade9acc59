/**
 * Timestamps are parsed once, here, into UTC Dates (ARCHITECTURE invariant 5). The service sends
 * three forms (service-notes "Shapes as they really come"):
 *   ISO 8601                     2026-08-02T13:30:00.000Z, 2026-08-02T15:30:00+02:00
 *   legacy                       Sun Aug 02 13:30:00 +0000 2026
 *   check-quoted's date          2026-08-02 13:30:00   (UTC, no zone)
 * Anything else is rejected rather than guessed: Date.parse alone accepts far too much.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const LEGACY = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) (\d{2}) (\d{2}):(\d{2}):(\d{2}) ([+-]\d{4}) (\d{4})$/;

interface Parts {
  year: number;
  month: number; // 1..12
  day: number;
  hour: number;
  minute: number;
  second: number;
  ms: number;
  offsetMinutes: number;
}

function offsetOf(zone: string | undefined): number | null {
  if (zone === undefined || zone === 'Z') return 0;
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
  if (!m) return null;
  const hours = Number(m[2]);
  const minutes = Number(m[3]);
  if (hours > 14 || minutes > 59) return null;
  return (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes);
}

/** Builds the Date, refusing out-of-range fields (Feb 30, 25:00) that Date.UTC would roll over. */
function toDate(p: Parts): Date | null {
  if (p.month < 1 || p.month > 12 || p.day < 1 || p.hour > 23 || p.minute > 59 || p.second > 59) return null;
  const local = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second, p.ms);
  const check = new Date(local);
  if (check.getUTCDate() !== p.day || check.getUTCMonth() !== p.month - 1) return null;
  if (p.year < 1970 || p.year > 9999) return null;
  return new Date(local - p.offsetMinutes * 60_000);
}

function parseIso(text: string): Date | null {
  const m = ISO.exec(text);
  if (!m) return null;
  // A zone-less time with a space separator is check-quoted's UTC form; ISO without a zone is
  // also read as UTC because the service speaks UTC throughout.
  const offset = offsetOf(m[8]);
  if (offset === null) return null;
  if (m[4] === undefined && m[8] !== undefined) return null;
  return toDate({
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    ms: m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0,
    offsetMinutes: offset,
  });
}

function parseLegacy(text: string): Date | null {
  const m = LEGACY.exec(text);
  if (!m) return null;
  const month = MONTHS.indexOf(m[1] ?? '');
  const offset = offsetOf(m[6]);
  if (month < 0 || offset === null) return null;
  return toDate({
    year: Number(m[7]),
    month: month + 1,
    day: Number(m[2]),
    hour: Number(m[3]),
    minute: Number(m[4]),
    second: Number(m[5]),
    ms: 0,
    offsetMinutes: offset,
  });
}

/** Parses any of the three forms into a UTC Date; null for anything else. */
export function parseTimestamp(text: string): Date | null {
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.length > 40) return null;
  return parseIso(trimmed) ?? parseLegacy(trimmed);
}
