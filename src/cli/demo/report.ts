/**
 * The demo's closing summary and example queries, as small aligned tables. The queries are the
 * ones docs/sql.md teaches, shown with this run's job id and handle so they can be pasted into psql.
 */
import type { Services } from '../../jobs/services.ts';
import { formatCount, formatDuration } from '../progress.ts';

export interface DemoSummary {
  tweets: number;
  users: number;
  listMembers: number;
  listFollowers: number;
  communityMembers: number;
  requestsByStatus: Record<string, number>;
  /** Achieved rate of each key during the backfill: its requests ÷ (last − first request). */
  backfillRates: Array<{ key: string; requests: number; seconds: number; perSecond: number }>;
  rateLimit: number;
  received429: number;
  quotaUsed: number | null;
  quotaLeft: number | null;
  elapsedMs: number;
}

export async function collectSummary(
  services: Services,
  input: { backfillJobId: string; received429: number; quota: number; startedAt: number },
): Promise<DemoSummary> {
  const { rows: counts } = await services.pool.query<Record<string, number>>(
    `SELECT (SELECT count(*) FROM tweets)::int AS tweets, (SELECT count(*) FROM users)::int AS users,
            (SELECT count(*) FROM list_members)::int AS list_members, (SELECT count(*) FROM list_followers)::int AS list_followers,
            (SELECT count(*) FROM community_members)::int AS community_members`,
  );
  const c = counts[0] ?? {};
  const { rows: statuses } = await services.pool.query<{ status: number; n: number }>(
    'SELECT status, count(*)::int AS n FROM api_requests GROUP BY status ORDER BY status',
  );
  const { rows: rates } = await services.pool.query<{ key: string; n: number; seconds: number | null }>(
    `SELECT key_fingerprint AS key, count(*)::int AS n, extract(epoch FROM max(at) - min(at))::float8 AS seconds
       FROM api_requests WHERE job_id = $1::bigint GROUP BY key_fingerprint ORDER BY key_fingerprint`,
    [input.backfillJobId],
  );
  const states = await services.gate.keyStates();
  const known = states.filter((s) => s.remaining !== null);
  const left = known.length === 0 ? null : known.reduce((sum, s) => sum + (s.remaining ?? 0), 0);
  return {
    tweets: c.tweets ?? 0,
    users: c.users ?? 0,
    listMembers: c.list_members ?? 0,
    listFollowers: c.list_followers ?? 0,
    communityMembers: c.community_members ?? 0,
    requestsByStatus: Object.fromEntries(statuses.map((s) => [String(s.status), s.n])),
    backfillRates: rates.map((r) => {
      const seconds = r.seconds ?? 0;
      // n requests span n − 1 intervals between the first and the last
      return { key: r.key, requests: r.n, seconds, perSecond: seconds > 0 ? (r.n - 1) / seconds : 0 };
    }),
    rateLimit: services.config.ratePerKey,
    received429: input.received429,
    quotaUsed: left === null ? null : input.quota * Math.max(1, known.length) - left,
    quotaLeft: left,
    elapsedMs: Date.now() - input.startedAt,
  };
}

/** Left-aligned text, right-aligned numbers, two spaces between columns. */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => /^-?[\d,.]+%?$/.test(r[i] ?? '')));
  const line = (r: readonly string[]) =>
    r.map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatSummary(s: DemoSummary): string {
  const total = Object.values(s.requestsByStatus).reduce((a, b) => a + b, 0);
  const byStatus = Object.entries(s.requestsByStatus)
    .map(([status, n]) => `${status}: ${formatCount(n)}`)
    .join(', ');
  const lines: Array<[string, string]> = [
    ['tweets', formatCount(s.tweets)],
    ['users', formatCount(s.users)],
    ['edges', `${formatCount(s.listMembers + s.listFollowers + s.communityMembers)} (list members ${formatCount(s.listMembers)}, list followers ${formatCount(s.listFollowers)}, community members ${formatCount(s.communityMembers)})`],
    ['requests', `${formatCount(total)} (${byStatus || 'none'})`],
    ...s.backfillRates.map((r): [string, string] => [
      'backfill rate',
      `${r.perSecond.toFixed(1)} req/s on key ${r.key} (limit ${s.rateLimit}/s): ${formatCount(r.requests)} requests in ${r.seconds.toFixed(1)} s`,
    ]),
    ['429s received', formatCount(s.received429)],
    ['quota used', s.quotaUsed === null ? 'unknown' : `${formatCount(s.quotaUsed)} (${formatCount(s.quotaLeft ?? 0)} left)`],
    ['elapsed', formatDuration(s.elapsedMs / 1000)],
  ];
  const width = Math.max(...lines.map(([k]) => k.length));
  return lines.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

export interface ExampleQuery {
  title: string;
  sql: string;
  params: string[];
}

export function exampleQueries(input: { backfillJobId: string; handle: string; since: string }): ExampleQuery[] {
  return [
    {
      title: 'The most active authors of the backfill (docs/sql.md #3)',
      sql: `SELECT username, followers_count, tweets, likes
FROM job_top_authors
WHERE job_id = $1
ORDER BY tweets DESC, likes DESC
LIMIT 5;`,
      params: [input.backfillJobId],
    },
    {
      title: 'Weekly volume of the backfill (docs/sql.md #2, by week)',
      sql: `SELECT date_trunc('week', day)::date::text AS week, sum(tweets) AS tweets, sum(likes) AS likes
FROM job_daily_volume
WHERE job_id = $1
GROUP BY 1
ORDER BY 1;`,
      params: [input.backfillJobId],
    },
    {
      title: `Mentions of @${input.handle} per day (docs/sql.md #4)`,
      sql: `SELECT (created_at AT TIME ZONE 'UTC')::date::text AS day, count(*) AS tweets,
       count(DISTINCT author_id) AS authors, coalesce(sum(like_count), 0) AS likes
FROM tweets
WHERE mentions @> ARRAY[$1::text] AND created_at >= ($2::date::timestamp AT TIME ZONE 'UTC')
GROUP BY 1
ORDER BY 1;`,
      params: [input.handle.toLowerCase(), input.since],
    },
  ];
}

/** The SQL with its parameters written in, for a person to paste into psql. */
export function displaySql(q: ExampleQuery): string {
  return q.sql.replace(/\$(\d+)/g, (_, n: string) => {
    const value = q.params[Number(n) - 1] ?? '';
    return /^\d+$/.test(value) ? value : `'${value.replace(/'/g, "''")}'`;
  });
}

export async function runExampleQuery(services: Services, q: ExampleQuery): Promise<string> {
  const result = await services.pool.query<Record<string, unknown>>(q.sql, q.params);
  const header = result.fields.map((f) => f.name);
  const rows = result.rows.map((r) =>
    header.map((h) => {
      const v = r[h];
      if (v === null || v === undefined) return '';
      if (typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v))) return formatCount(Number(v));
      return v instanceof Date ? v.toISOString() : String(v);
    }),
  );
  return rows.length === 0 ? '(no rows)' : formatTable(header, rows);
}
