/**
 * `harvest export <job-id> --format csv|jsonl [--out FILE] [--spreadsheet]`: a job's tweets as flat, stable
 * columns (src/store/export.ts lists them). Needs Postgres only, so Redis being down does not
 * stop an export. With --out the file appears whole or not at all: rows go to a temporary file
 * beside it, which is synced and renamed over FILE only once the COPY has finished (FILE's mode
 * kept; a FIFO or a device such as /dev/stdout is written into instead).
 */
import { randomBytes } from 'node:crypto';
import { lstat, open, readlink, realpath, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { openCheckedPool } from '../../jobs/services.ts';
import { withClient, type Pool } from '../../store/db.ts';
import { exportJobTweets, type ExportFormat, type ExportOptions } from '../../store/export.ts';
import { getJob } from '../../store/jobs.ts';
import { cliRuntime, onShutdownSignal, type CliState } from '../context.ts';
import { parseFormat, parseJobId } from '../inputs.ts';

async function parseOutPath(raw: string): Promise<string> {
  if (raw.trim() === '') throw new InputError('--out: expected a file path, got ""');
  const existing = await stat(raw).catch(() => null);
  if (existing?.isDirectory()) throw new InputError(`--out: expected a file path, got the directory ${JSON.stringify(raw)}`);
  const parent = await stat(dirname(raw)).catch(() => null);
  if (!parent?.isDirectory()) throw new InputError(`--out: the directory ${JSON.stringify(dirname(raw))} does not exist`);
  return raw;
}

/** Where a process's open files show as links: `/proc/<pid>/fd/<n>` (`/dev/stdout`, `/dev/fd/<n>` lead there). */
const DESCRIPTOR = /^\/proc\/[^/]+\/fd\/\d+$/;

/**
 * Follows `path`'s symbolic links one by one: where they lead (which may not exist yet), and
 * whether they pass through a process's file descriptor. `realpath` cannot say either: it fails on
 * a dangling link and on `/proc/self/fd/1` when that is a pipe.
 */
async function followLinks(path: string): Promise<{ path: string; descriptor: boolean }> {
  let current = path;
  for (let hop = 0; hop < 40; hop++) {
    const dir = await realpath(dirname(current)).catch(() => null);
    if (dir === null) return { path: current, descriptor: false };
    current = join(dir, basename(current));
    if (DESCRIPTOR.test(current)) return { path: current, descriptor: true };
    const found = await lstat(current).catch(() => null);
    if (!found?.isSymbolicLink()) return { path: current, descriptor: false };
    current = resolve(dir, await readlink(current));
  }
  throw new InputError(`--out: too many symbolic links in ${JSON.stringify(path)}`);
}

/**
 * Where an export to `out` goes. A regular file (through any symlinks: the link stays, its file is
 * replaced, or made when the link dangles) is replaced atomically by a temporary file given its
 * permissions. Anything else (a FIFO, a device, a process substitution) is written into as it is,
 * and so is a file descriptor (`/dev/stdout`, `/dev/fd/N`) whatever it holds, appending: the shell
 * has opened it (`>` truncated it, `>>` keeps what it held). Renaming over `/dev/stdout` replaced
 * the link with a file while the pipe got nothing, and a `chmod 600` export came back 0644.
 */
async function targetOf(
  out: string,
): Promise<{ kind: 'replace'; path: string; mode: number | null } | { kind: 'into'; path: string; flags: 'a' | 'w' } | { kind: 'stream'; stream: NodeJS.WriteStream }> {
  const { path, descriptor } = await followLinks(out);
  // This process's own stdout or stderr: written as without --out (a socket, as a parent process's
  // pipe often is, cannot be opened again by its /proc name: ENXIO).
  const own = `/proc/${process.pid}/fd/`;
  if (path === `${own}1`) return { kind: 'stream', stream: process.stdout };
  if (path === `${own}2`) return { kind: 'stream', stream: process.stderr };
  if (descriptor) return { kind: 'into', path: out, flags: 'a' };
  const found = await stat(path).catch(() => null);
  if (found === null) return { kind: 'replace', path, mode: null };
  return found.isFile() ? { kind: 'replace', path, mode: found.mode & 0o7777 } : { kind: 'into', path, flags: 'w' };
}

/** Writes to `.<name>.<random>.tmp` in the target's directory (same filesystem, so rename is atomic). */
export async function exportToFile(
  pool: Pool,
  jobId: string,
  format: ExportFormat,
  out: string,
  options: Pick<ExportOptions, 'signal' | 'spreadsheet'> = {},
): Promise<{ rows: number }> {
  const target = await targetOf(out);
  if (target.kind === 'stream') return exportJobTweets(pool, jobId, format, target.stream, { ...options, end: false });
  if (target.kind === 'into') {
    const into = await open(target.path, target.flags);
    try {
      return await exportJobTweets(pool, jobId, format, into.createWriteStream(), options);
    } finally {
      await into.close().catch(() => undefined);
    }
  }
  const temp = join(dirname(target.path), `.${basename(target.path)}.${randomBytes(6).toString('hex')}.tmp`);
  // A new file as a shell redirection makes one (0666 less the umask); an existing one keeps its mode.
  const handle = await open(temp, 'wx', target.mode ?? 0o666);
  try {
    if (target.mode !== null) await handle.chmod(target.mode);
    // flush: fsync before the stream closes the file, so the rename never exposes unwritten data.
    const file = handle.createWriteStream({ flush: true });
    const result = await exportJobTweets(pool, jobId, format, file, options);
    await rename(temp, target.path);
    return result;
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

const isBrokenPipe = (error: unknown): boolean =>
  error instanceof Error && 'code' in error && (error as NodeJS.ErrnoException).code === 'EPIPE';

export function registerExportCommand(program: Command, state: CliState): void {
  program
    .command('export')
    .description("a job's tweets as flat, stable columns (docs/export.md), ordered by tweet id")
    .argument('<job-id>')
    .requiredOption('--format <format>', 'csv (with a header line) or jsonl (one JSON object per line)')
    .option('--out <file>', 'write to FILE, replaced atomically when complete (default: stdout)')
    .option('--spreadsheet', "csv for a spreadsheet: text starting with = + - @ gets a leading ', ids are written =\"…\" to keep their digits, every value quoted, a UTF-8 byte-order mark first")
    .action(async (id: string, o: { format: string; out?: string; spreadsheet?: boolean }) => {
      const jobId = parseJobId(id);
      const format = parseFormat(o.format);
      if (o.spreadsheet && format !== 'csv') throw new InputError('--spreadsheet applies to --format csv only');
      const spreadsheet = o.spreadsheet === true;
      const out = o.out === undefined ? undefined : await parseOutPath(o.out);
      const { config } = cliRuntime(state, { quiet: true });
      const pool = await openCheckedPool(config, { max: 1, applicationName: 'harvest-export' });
      const abort = new AbortController();
      const removeHandlers = onShutdownSignal(() => abort.abort());
      try {
        const job = await withClient(pool, (client) => getJob(client, jobId));
        if (!job) {
          console.error(`harvest: no job ${jobId}`);
          state.exitCode = 1;
          return;
        }
        const { rows } = out
          ? await exportToFile(pool, jobId, format, out, { signal: abort.signal, spreadsheet })
          : await exportJobTweets(pool, jobId, format, process.stdout, { end: false, signal: abort.signal, spreadsheet });
        console.error(`${rows} rows → ${out ?? 'stdout'}`);
      } catch (error) {
        // `harvest export 1 --format csv | head` closes the pipe early: that is the reader's choice
        // (a pipe or FIFO given as --out too; a regular file never answers EPIPE).
        if (isBrokenPipe(error)) return;
        if (abort.signal.aborted) {
          console.error(`harvest: export interrupted${out ? `; ${out} left untouched` : ''}`);
          state.exitCode = 130;
          return;
        }
        throw error;
      } finally {
        removeHandlers();
        await pool.end().catch(() => undefined);
      }
    });
}
