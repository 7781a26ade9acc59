/** The two timestamp forms the service sends. */
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

const pad = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** `Sun Aug 02 13:30:00 +0000 2026` */
export function legacyTime(ms: number): string {
  const d = new Date(ms);
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes(),
  )}:${pad(d.getUTCSeconds())} +0000 ${d.getUTCFullYear()}`;
}

/** `2026-08-02T13:30:00Z` (whole seconds, like the reference's examples). */
export function isoTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** `2026-08-02 13:30:00` (check-quoted's `date`: UTC without a zone). */
export function plainTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}
