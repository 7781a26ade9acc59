import { execFile, execFileSync, spawn } from 'node:child_process';
import { closeSync, createReadStream, openSync } from 'node:fs';
import { chmod, lstat, mkdtemp, readdir, readFile, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CanonicalTweet } from '../src/api-client/canonical.ts';
import { exportToFile, registerExportCommand } from '../src/cli/commands/export.ts';
import { commitPage } from '../src/store/commit-page.ts';
import { EXPORT_COLUMNS, exportJobTweets, type ExportFormat } from '../src/store/export.ts';
import { createJob, createSlices } from '../src/store/jobs.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { makeTweet, makeUser } from './store/fixtures.ts';

let db: TestDatabase;
let dir: string;
const OBSERVED = new Date('2026-09-01T10:20:30.456Z');
const TRICKY = 'back\\slash \\n \\\\ "quoted", tab\there\nnew line\r\nCRLF ünïcödé 日本語 🎉 \u0001 ;|,';

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'harvest-export-'));
});
afterAll(async () => {
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Commits tweets as pages of one slice, as a worker would. */
async function seedJob(tweets: CanonicalTweet[], pageSize = 500): Promise<string> {
  const jobId = await createJob(db.pool, { kind: 'search', params: { query: 'x' } });
  const [sliceId] = await createSlices(db.pool, jobId, [{ kind: 'search-window', params: {} }]);
  let cursor: string | null = null;
  for (let i = 0; i < tweets.length; i += pageSize) {
    const next = `c${i}`;
    await commitPage(db.pool, {
      jobId,
      sliceId: sliceId!,
      expectedCursor: cursor,
      nextCursor: next,
      sliceDone: false,
      tweets: tweets.slice(i, i + pageSize),
      users: [],
      emptyPage: false,
      observedAt: OBSERVED,
    });
    cursor = next;
  }
  return jobId;
}

/** RFC 4180 reader: quoted fields may hold commas, quotes ("") and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n') {
      rows.push([...row, field]);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

class Collect extends Writable {
  chunks: Buffer[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.chunks.push(chunk);
    cb();
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

async function exportText(jobId: string, format: ExportFormat, options: { spreadsheet?: boolean } = {}): Promise<{ rows: number; text: string }> {
  const sink = new Collect();
  const { rows } = await exportJobTweets(db.pool, jobId, format, sink, options);
  return { rows, text: sink.text() };
}

type Expected = Record<(typeof EXPORT_COLUMNS)[number], string | number | null>;

function expected(t: CanonicalTweet): Expected {
  return {
    tweet_id: t.id,
    created_at: t.createdAt.toISOString(),
    author_id: t.authorId,
    author_username: t.author?.username ?? null,
    author_display_name: t.author?.displayName ?? null,
    author_followers_count: t.author?.followersCount ?? null,
    full_text: t.fullText,
    lang: t.lang,
    conversation_id: t.conversationId,
    in_reply_to_tweet_id: t.inReplyToTweetId,
    quoted_tweet_id: t.quotedTweetId,
    retweeted_tweet_id: t.retweetedTweetId,
    like_count: t.likeCount,
    retweet_count: t.retweetCount,
    reply_count: t.replyCount,
    quote_count: t.quoteCount,
    view_count: t.viewCount,
    bookmark_count: t.bookmarkCount,
    hashtags: t.hashtags.join(' '),
    mentions: t.mentions.join(' '),
    urls: t.urls.join(' '),
    first_seen_at: OBSERVED.toISOString(),
  };
}

/** The same record as CSV shows it: everything text, missing values empty. */
const asCsv = (e: Expected): string[] => EXPORT_COLUMNS.map((c) => (e[c] === null ? '' : String(e[c])));

describe('exportJobTweets', () => {
  // Ids above 2^53 that a JS number would round; out of order to prove the sort.
  const author = makeUser('1234567890123456789', { displayName: 'Zoë "the" \\Author\\\t,' });
  const tricky = makeTweet('1900000000000000003', author, {
    fullText: TRICKY,
    createdAt: new Date('2026-08-02T13:30:00.123Z'),
    conversationId: '1900000000000000001',
    inReplyToTweetId: '1900000000000000001',
    isReply: true,
    hashtags: ['Bitcoin', 'ÉtéCrypto'],
    mentions: ['jack', 'zoë'],
    urls: ['https://t.example/a?x=1,2', 'https://t.example/b'],
    viewCount: null,
    lang: null,
  });
  const plain = makeTweet('1900000000000000001', makeUser('9007199254740993'), { quotedTweetId: '1900000000000000999', isQuoteStatus: true });
  const noAuthor = makeTweet('1900000000000000002', null, { hashtags: [], mentions: [], urls: [] });
  const all = [tricky, noAuthor, plain];
  const sorted = [plain, noAuthor, tricky];

  it('writes CSV with a header and values that parse back exactly, ids as text, ordered by tweet id', async () => {
    const jobId = await seedJob(all);
    const { rows, text } = await exportText(jobId, 'csv');
    expect(rows).toBe(3);
    const parsed = parseCsv(text);
    expect(parsed[0]).toEqual([...EXPORT_COLUMNS]);
    // Postgres writes CRLF inside quoted fields as is; the reader keeps it.
    expect(parsed.slice(1)).toEqual(sorted.map((t) => asCsv(expected(t))));
    expect(parsed[3]![EXPORT_COLUMNS.indexOf('full_text')]).toBe(TRICKY);
  });

  it('writes one JSON object per line whose values equal the stored tweet, text verbatim', async () => {
    const jobId = await seedJob(all);
    const { rows, text } = await exportText(jobId, 'jsonl');
    expect(rows).toBe(3);
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.slice(0, -1).split('\n');
    expect(lines).toHaveLength(3);
    const objects = lines.map((l) => JSON.parse(l) as Expected);
    expect(objects).toEqual(sorted.map(expected));
    expect(objects.map((o) => Object.keys(o))).toEqual(sorted.map(() => [...EXPORT_COLUMNS]));
    expect(objects[2]!.full_text).toBe(TRICKY);
    // ids are JSON strings, never numbers that would round
    expect(lines[0]).toContain('"author_id":"9007199254740993"');
  });

  it('--spreadsheet: text that would open as a formula gets a leading quote in CSV; verbatim otherwise', async () => {
    const formulas = ['=HYPERLINK("http://x.example","hi")', '+1 agreed', '-2 points', '@jack hello', '\tindented', '\rreturn'];
    const tweets = formulas.map((text, i) => makeTweet(`19200000000000000${10 + i}`, makeUser(`98765432100${i}`, { displayName: text }), { fullText: text }));
    const safe = [...tweets, makeTweet('1920000000000000099', makeUser('987654321099', { displayName: 'Zoë = fine' }), { fullText: 'a=b, c@d' })];
    const jobId = await seedJob(safe);
    const column = (rows: string[][], name: string) => rows.slice(1).map((r) => r[EXPORT_COLUMNS.indexOf(name as (typeof EXPORT_COLUMNS)[number])]);
    const plain = parseCsv((await exportText(jobId, 'csv')).text);
    expect(column(plain, 'full_text')).toEqual([...formulas, 'a=b, c@d']);
    const sheet = (await exportText(jobId, 'csv', { spreadsheet: true })).text;
    // A UTF-8 byte-order mark first (Excel reads a CSV without one in the legacy code page).
    expect(sheet.startsWith('\uFEFF')).toBe(true);
    const guarded = parseCsv(sheet.slice(1));
    expect(column(guarded, 'full_text')).toEqual([...formulas.map((f) => `'${f}`), 'a=b, c@d']);
    expect(column(guarded, 'author_display_name')).toEqual([...formulas.map((f) => `'${f}`), 'Zoë = fine']);
    // Ids open as text with every digit (a bare 19-digit cell opens as 1.92E+18); counts stay numbers.
    expect(column(guarded, 'tweet_id')).toEqual(column(plain, 'tweet_id').map((id) => `="${id}"`));
    expect(column(guarded, 'author_id')).toEqual(column(plain, 'author_id').map((id) => `="${id}"`));
    expect(column(guarded, 'like_count')).toEqual(column(plain, 'like_count'));
    for (const row of guarded.slice(1)) for (const cell of row) expect(cell).not.toMatch(/^\d{16,}$/);
    // A missing id stays an empty cell.
    expect(column(guarded, 'quoted_tweet_id')).toEqual(column(plain, 'quoted_tweet_id').map((id) => (id === '' ? '' : `="${id}"`)));
    const jsonl = (await exportText(jobId, 'jsonl', { spreadsheet: true })).text.trim().split('\n').map((l) => (JSON.parse(l) as Expected).full_text);
    expect(jsonl).toEqual([...formulas, 'a=b, c@d']);
  });

  it('--spreadsheet quotes every value, so a program that splits on ; or tab never starts a cell at a formula', async () => {
    const jobId = await seedJob([makeTweet('1920000000000000201', makeUser('987654321201', { displayName: 'x;=1+1' }), { fullText: 'lol;=cmd|calc\t=2+2' })]);
    const sheet = (await exportText(jobId, 'csv', { spreadsheet: true })).text;
    const row = sheet.split('\n')[1]!;
    expect(row).toContain('"lol;=cmd|calc\t=2+2"');
    expect(row).toContain('"x;=1+1"');
    // Without --spreadsheet, only what CSV needs is quoted.
    expect((await exportText(jobId, 'csv')).text.split('\n')[1]).toContain(',lol;=cmd|calc\t=2+2,');
  });

  it('exports only the tweets of the job asked for (a tweet shared by two jobs appears in both)', async () => {
    const a = await seedJob([makeTweet('1910000000000000001', null), makeTweet('1910000000000000002', null)]);
    const b = await seedJob([makeTweet('1910000000000000002', null)]);
    const { text } = await exportText(b, 'jsonl');
    expect(text.trim().split('\n').map((l) => (JSON.parse(l) as Expected).tweet_id)).toEqual(['1910000000000000002']);
    expect((await exportText(a, 'csv')).rows).toBe(2);
    const none = await createJob(db.pool, { kind: 'search', params: {} });
    expect(await exportText(none, 'csv')).toEqual({ rows: 0, text: `${EXPORT_COLUMNS.join(',')}\n` });
  });

  it('streams 20,000 tweets with bounded memory into a slow reader', async () => {
    const text = 'x'.repeat(3000);
    const tweets = Array.from({ length: 20_000 }, (_, i) => makeTweet((1920000000000000000n + BigInt(i)).toString(), null, { fullText: `${i} ${text}` }));
    const jobId = await seedJob(tweets, 2000);
    // Buffers live outside the JS heap: count external memory too, or buffering would go unseen.
    const used = (): number => {
      const m = process.memoryUsage();
      return m.heapUsed + m.external;
    };
    const before = used();
    let peak = 0;
    let bytes = 0;
    let lines = 0;
    const sink = new Writable({
      highWaterMark: 64 * 1024,
      write(chunk: Buffer, _enc, cb) {
        bytes += chunk.length;
        for (const b of chunk) if (b === 10) lines++;
        peak = Math.max(peak, used() - before);
        setImmediate(cb);
      },
    });
    const { rows } = await exportJobTweets(db.pool, jobId, 'jsonl', sink);
    expect(rows).toBe(20_000);
    expect(lines).toBe(20_000);
    // ~62 MB went through; holding it would show far more than 50 MB of heap
    expect(bytes).toBeGreaterThan(60_000_000);
    expect(peak).toBeLessThan(50 * 1024 * 1024);
  });

  it('rejects a job id that is not a positive integer before building any SQL', async () => {
    await expect(exportJobTweets(db.pool, '1; DROP TABLE tweets', 'csv', new Collect())).rejects.toThrow(RangeError);
  });
});

describe('exportToFile and the export command', () => {
  it('replaces the target atomically and leaves no temporary file behind', async () => {
    const jobId = await seedJob([makeTweet('1930000000000000001', null)]);
    const out = join(dir, 'one.csv');
    await writeFile(out, 'old content');
    expect(await exportToFile(db.pool, jobId, 'csv', out)).toEqual({ rows: 1 });
    expect(parseCsv(await readFile(out, 'utf8'))[1]![0]).toBe('1930000000000000001');
    expect(await readdir(dir)).toEqual(['one.csv']);
  });

  it('--out keeps what FILE is: a symlink stays a link (its file replaced), a private file stays private, a FIFO is written into', async () => {
    const jobId = await seedJob([makeTweet('1930000000000000002', null)]);
    // A link to a regular file: the link stays, the file it names gets the export.
    const real = join(dir, 'real.csv');
    const link = join(dir, 'link.csv');
    await writeFile(real, 'old');
    await symlink(real, link);
    await exportToFile(db.pool, jobId, 'csv', link);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(parseCsv(await readFile(real, 'utf8'))[1]![0]).toBe('1930000000000000002');
    // A file made private stays private.
    const secret = join(dir, 'secret.csv');
    await writeFile(secret, 'old');
    await chmod(secret, 0o600);
    await exportToFile(db.pool, jobId, 'csv', secret);
    expect((await stat(secret)).mode & 0o777).toBe(0o600);
    // A FIFO (as `--out >(gzip > x.gz)` or /dev/stdout would be): written into, still a FIFO.
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const read = new Promise<string>((resolve, reject) => {
      let text = '';
      createReadStream(fifo, 'utf8').on('data', (c) => (text += String(c))).on('end', () => resolve(text)).on('error', reject);
    });
    await exportToFile(db.pool, jobId, 'csv', fifo);
    expect(parseCsv(await read)[1]![0]).toBe('1930000000000000002');
    expect((await lstat(fifo)).isFIFO()).toBe(true);
    await Promise.all([link, real, secret, fifo].map((f) => unlink(f)));
  });

  it('--out through a file descriptor writes into what the shell opened: a pipe gets the rows, `>>` keeps what the file held', async () => {
    const jobId = await seedJob([makeTweet('1930000000000000003', null)]);
    const bin = fileURLToPath(new URL('../bin/harvest.js', import.meta.url));
    const env = { ...process.env, DATABASE_URL: db.url, HARVEST_API_KEYS: '' };
    // `/dev/fd/1` as `/dev/stdout` would be (a link into /proc/<pid>/fd), without touching the machine's /dev/stdout.
    const args = [bin, 'export', jobId, '--format', 'csv', '--out', '/dev/fd/1'];
    const piped = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = execFile(process.execPath, args, { env }, (_error, out) => resolve({ code: child.exitCode, out }));
    });
    expect(piped.code).toBe(0);
    expect(parseCsv(piped.out)[1]![0]).toBe('1930000000000000003');
    // stdout appended to a file (`>> file`): the rows follow what it held.
    const log = join(dir, 'appended.csv');
    await writeFile(log, 'kept\n');
    const fd = openSync(log, 'a');
    try {
      const code = await new Promise<number | null>((resolve) => spawn(process.execPath, args, { env, stdio: ['ignore', fd, 'ignore'] }).on('exit', resolve));
      expect(code).toBe(0);
    } finally {
      closeSync(fd);
    }
    const appended = await readFile(log, 'utf8');
    expect(appended.startsWith('kept\n')).toBe(true);
    expect(parseCsv(appended.slice('kept\n'.length))[1]![0]).toBe('1930000000000000003');
    // A dangling link stays a link; the file it names is made.
    const later = join(dir, 'later.csv');
    const dangling = join(dir, 'dangling.csv');
    await symlink(later, dangling);
    await exportToFile(db.pool, jobId, 'csv', dangling);
    expect((await lstat(dangling)).isSymbolicLink()).toBe(true);
    expect(parseCsv(await readFile(later, 'utf8'))[1]![0]).toBe('1930000000000000003');
    await Promise.all([log, later, dangling].map((f) => unlink(f)));
  });

  it('leaves neither a partial file nor the old one damaged when the export fails', async () => {
    const out = join(dir, 'broken.csv');
    await writeFile(out, 'previous export');
    const other = await createTestDatabase();
    await other.pool.query('DROP TABLE job_tweets CASCADE');
    await expect(exportToFile(other.pool, '1', 'csv', out)).rejects.toMatchObject({ code: '42P01' });
    await other.drop();
    expect(await readFile(out, 'utf8')).toBe('previous export');
    expect((await readdir(dir)).filter((f) => f.includes('broken'))).toEqual(['broken.csv']);
  });

  async function run(args: string[], env: Record<string, string>): Promise<{ exitCode: number; stderr: string }> {
    const state = { exitCode: 0, env };
    const program = new Command('harvest').exitOverride();
    registerExportCommand(program, state);
    const writes: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((s: string) => {
      writes.push(String(s));
      return true;
    }) as typeof process.stderr.write;
    const consoleError = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => {
      writes.push(`${parts.join(' ')}\n`);
    });
    try {
      await program.parseAsync(args, { from: 'user' });
    } catch (error) {
      writes.push(error instanceof Error ? error.message : String(error));
      state.exitCode = state.exitCode || 1;
    } finally {
      process.stderr.write = original;
      consoleError.mockRestore();
    }
    return { exitCode: state.exitCode, stderr: writes.join('') };
  }

  it('writes FILE and reports the row count; an unknown job is one line and exit 1 with no file', async () => {
    const jobId = await seedJob([makeTweet('1940000000000000001', null), makeTweet('1940000000000000002', null)]);
    const out = join(dir, 'cmd.jsonl');
    const ok = await run(['export', jobId, '--format', 'JSONL', '--out', out], { DATABASE_URL: db.url, HARVEST_API_KEYS: '' });
    expect(ok).toEqual({ exitCode: 0, stderr: `2 rows → ${out}\n` });
    expect((await readFile(out, 'utf8')).trim().split('\n')).toHaveLength(2);

    const missing = join(dir, 'missing.csv');
    const unknown = await run(['export', '987654321', '--format', 'csv', '--out', missing], { DATABASE_URL: db.url });
    expect(unknown).toEqual({ exitCode: 1, stderr: 'harvest: no job 987654321\n' });
    expect((await readdir(dir)).some((f) => f.includes('missing'))).toBe(false);
  });

  it('validates the job id and the format before touching the database', async () => {
    const unreachable = { DATABASE_URL: 'postgres://root@127.0.0.1:1/none' };
    const badId = await run(['export', 'abc', '--format', 'csv'], unreachable);
    expect(badId.stderr).toContain('<job-id>: expected a job id');
    const badFormat = await run(['export', '1', '--format', 'xml'], unreachable);
    expect(badFormat.stderr).toContain('--format: expected csv or jsonl, got "xml"');
  });
});
