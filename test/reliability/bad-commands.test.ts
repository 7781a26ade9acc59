/**
 * Malformed command lines beyond test/cli/bad-input.test.ts: calendar and format errors in dates,
 * handles, x.com addresses, ids, numbers, intervals, options a command does not take, missing and
 * excess arguments, hydrate files of junk. Each one: a clear message naming what is wrong, a
 * non-zero exit, no stack trace, and nothing in Postgres or Redis.
 */
import { runCli } from '../helpers/cli.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'harvest-bad-'));
const junkFile = join(dir, 'junk.txt');
const emptyFile = join(dir, 'empty.txt');
writeFileSync(junkFile, '1234567890123456789\nnot-an-id\nhttps://x.com/jack/likes\n');
writeFileSync(emptyFile, '\n\n   \n');

/** [argv, what the message must mention] */
const BAD: Array<[string[], RegExp]> = [
  // dates
  [['search', 'btc', '--since', '2026-13-01'], /--since/],
  [['search', 'btc', '--since', '2026-00-10'], /--since/],
  [['search', 'btc', '--since', '26-01-01'], /--since.*YYYY-MM-DD/],
  [['search', 'btc', '--until', '2026-1-5'], /--until/],
  [['search', 'btc', '--since', '2026-02-29'], /--since.*calendar/],
  [['search', 'btc', '--since', '2026-01-01T00:00:00Z'], /--since/],
  [['search', 'btc', '--since', ''], /--since/],
  [['mentions', 'jack', '--since', '2026-04-31'], /--since.*calendar/],
  // handles
  [['mentions', ''], /handle/],
  [['mentions', '@'], /handle/],
  [['mentions', 'jack!'], /handle/],
  [['mentions', 'jäck'], /handle/],
  [['mentions', '@@jack'], /handle/],
  [['user', '@bad-handle'], /handle/],
  // addresses
  [['user', 'https://x.com/jack/status/20'], /profile URL/],
  [['user', 'ftp://x.com/jack'], /<user>: expected a handle/],
  [['user', 'https://x.com:8443/jack'], /profile URL/],
  [['replies', 'https://x.com/jack/status/abc'], /tweet/],
  [['replies', 'https://x.com/jack/status/0123'], /tweet/],
  [['list', 'https://x.com/i/lists/'], /list/],
  [['community', 'https://twitter.com/i/communities/12x'], /community/],
  [['list', 'https://evil.example/i/lists/123'], /list/],
  // ids
  [['replies', '0'], /tweet id/],
  [['list', '-5'], /<list>: expected a list id/],
  [['community', '1e9'], /community/],
  [['replies', ' '], /tweet/],
  // numbers and intervals
  [['search', 'btc', '--max-tweets', '1.5'], /--max-tweets/],
  [['search', 'btc', '--max-tweets', ''], /--max-tweets/],
  [['search', 'btc', '--max-requests', '0'], /--max-requests/],
  [['mentions', 'jack', '--min-replies', '3.0'], /--min-replies/],
  [['mentions', 'jack', '--every', '0m'], /--every/],
  [['mentions', 'jack', '--every', '31d'], /--every/],
  [['worker', '--concurrency', 'abc'], /--concurrency/],
  // options a command does not take, missing and excess arguments
  [['user', 'jack', '--since', '2026-01-01'], /unknown option/],
  [['list', '123', '--max-tweets', '5'], /unknown option/],
  [['search', 'btc', '-x'], /unknown option/],
  [['mentions', 'jack', '--every'], /--every.*argument missing/],
  [['hydrate'], /missing required argument/],
  [['search', 'btc', 'eth'], /too many arguments/],
  [['pause'], /missing required argument/],
  // hydrate files
  [['hydrate', junkFile], /nothing was queued/],
  [['hydrate', emptyFile], /no tweet ids/],
];

describe('malformed command lines (reliability)', () => {
  const h = useHarness();
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('covers at least 30 lines', () => {
    expect(BAD.length).toBeGreaterThanOrEqual(30);
  });

  it.each(BAD.map(([argv, why]) => [JSON.stringify(argv), argv, why] as const))('%s → a clear message, non-zero exit, nothing enqueued', async (_name, argv, why) => {
    const { code, err: text } = await runCli(argv, h.env);
    expect(code).not.toBe(0);
    expect(text).toMatch(why);
    expect(text).not.toMatch(/\n\s+at /);
    const { rows } = await h.services.pool.query<{ n: number }>('SELECT (SELECT count(*) FROM jobs)::int + (SELECT count(*) FROM job_slices)::int AS n');
    expect(rows[0]!.n).toBe(0);
    const counts = await h.services.queues.counts();
    expect([...Object.values(counts.backfill), ...Object.values(counts.watch)].reduce((a, b) => a + b, 0)).toBe(0);
  });
});
