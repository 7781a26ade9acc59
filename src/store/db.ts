/**
 * The one place that opens Postgres connections. Everything else in src/store takes a structural
 * `Queryable`, so a pool, a transaction client or a test double all fit.
 */
import type { Writable } from 'node:stream';
import pg from 'pg';
import { DatabaseUnavailableError } from './errors.ts';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
export type QueryResult<R extends pg.QueryResultRow = pg.QueryResultRow> = pg.QueryResult<R>;

export interface QueryResultLike<R> {
  rows: R[];
  rowCount: number | null;
}

export interface Queryable {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- matches pg's own signature
  query<R extends Record<string, any> = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResultLike<R>>;
}

/** SQLSTATE codes the store classifies by (never by message text). */
export const SqlState = {
  UNIQUE_VIOLATION: '23505',
  FOREIGN_KEY_VIOLATION: '23503',
  CHECK_VIOLATION: '23514',
  SERIALIZATION_FAILURE: '40001',
  DEADLOCK_DETECTED: '40P01',
  DUPLICATE_DATABASE: '42P04',
  INVALID_CATALOG_NAME: '3D000',
  INVALID_PASSWORD: '28P01',
  INVALID_AUTHORIZATION: '28000',
  ADMIN_SHUTDOWN: '57P01',
  CRASH_SHUTDOWN: '57P02',
  CANNOT_CONNECT_NOW: '57P03',
  CONNECTION_FAILURE: '08006',
  CONNECTION_DOES_NOT_EXIST: '08003',
  TOO_MANY_CONNECTIONS: '53300',
  IN_FAILED_TRANSACTION: '25P02',
  /** harvest_expect_advanced (migration 0009): a pipelined group commit found a page's slice moved on. */
  SLICE_GUARD_MISSED: 'ZH001',
} as const;

/** Connection failures another try may not meet: the connection broke, or the server was busy. */
const LOST_CONNECTION_CODES = new Set<string>([
  'ECONNREFUSED',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  SqlState.CANNOT_CONNECT_NOW,
  SqlState.TOO_MANY_CONNECTIONS,
  SqlState.ADMIN_SHUTDOWN,
  SqlState.CRASH_SHUTDOWN,
  SqlState.CONNECTION_FAILURE,
  SqlState.CONNECTION_DOES_NOT_EXIST,
]);

/** Every connection-level failure: the lost ones, and a setup every try would meet (no such host, database or password). */
const CONNECTION_CODES = new Set<string>([
  ...LOST_CONNECTION_CODES,
  'ENOTFOUND',
  SqlState.INVALID_CATALOG_NAME,
  SqlState.INVALID_PASSWORD,
  SqlState.INVALID_AUTHORIZATION,
]);

export function sqlState(error: unknown): string | undefined {
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string') return error.code;
  return undefined;
}

/** A conflict Postgres resolved by aborting this statement's transaction: running it again may succeed. */
export function isConflictAbort(error: unknown): boolean {
  const code = sqlState(error);
  return code === SqlState.DEADLOCK_DETECTED || code === SqlState.SERIALIZATION_FAILURE;
}

/**
 * The connection failed or went away (Postgres restarting, a network blip): another may work. An
 * error with no code at all counts too: node-postgres reports a socket closed under a query as a
 * bare `Connection terminated unexpectedly`.
 */
export function isConnectionLoss(error: unknown): boolean {
  const code = sqlState(error);
  return code === undefined ? error instanceof Error : LOST_CONNECTION_CODES.has(code);
}

/**
 * Runs an idempotent write on the pool again after a conflict abort or a lost connection, `tries`
 * times at most, waiting 50 ms, then 200 ms, … between tries. Not for a statement inside a
 * caller's transaction: that transaction is aborted with it.
 */
export async function retryIdempotentWrite<T>(write: () => Promise<T>, tries = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= tries || !(isConflictAbort(error) || isConnectionLoss(error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * 4 ** (attempt - 1)));
    }
  }
}

/** `host:port/database` of a connection string, without credentials, for messages. */
export function describeTarget(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    const host = url.hostname || url.searchParams.get('host') || 'localhost';
    return `${host}:${url.port || '5432'}${url.pathname && url.pathname !== '/' ? url.pathname : ''}`;
  } catch {
    return 'an unparsable DATABASE_URL';
  }
}

/** Turns a connection-level failure into a one-line DatabaseUnavailableError; passes others through. */
export function toConnectionError(error: unknown, databaseUrl: string): unknown {
  const code = sqlState(error);
  const aggregate = error instanceof AggregateError ? error.errors.map(sqlState).find((c) => c) : undefined;
  const effective = code ?? aggregate;
  if (effective === undefined || !CONNECTION_CODES.has(effective)) return error;
  const reason =
    effective === 'ECONNREFUSED'
      ? 'connection refused (is Postgres running?)'
      : effective === SqlState.INVALID_CATALOG_NAME
        ? 'the database does not exist (run `harvest migrate`)'
        : `${effective}${error instanceof Error && error.message ? ` ${error.message.split('\n')[0]}` : ''}`;
  return new DatabaseUnavailableError(describeTarget(databaseUrl), reason, { cause: error });
}

const PLAIN_INTEGER = /^-?\d+$/;
const NEEDS_ESCAPE = /["\\]/;

/** An element `plainArray` can write. */
export type Cell = string | number | boolean | null | undefined;

/** A text as a quoted element of a Postgres array literal, escaped as pg's escapeElement does. */
export function quotedElement(text: string): string {
  return NEEDS_ESCAPE.test(text) ? `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : `"${text}"`;
}

/**
 * A `{…}` array literal for a `$n::bigint[]`, `int[]`, `boolean[]` or `text[]` parameter, built in
 * one pass. pg encodes a JS array element by element (prepareValue, then escapeElement's two regex
 * replaces and a concatenation each); a group commit sends ~3,000 id, count and flag elements and
 * ~2,000 texts per 8 pages, and a text without a quote or backslash needs no replace at all.
 * Decimal integers, finite numbers, booleans and null need no quoting; any other element is quoted
 * exactly as pg would, so a malformed id still fails its cast instead of splitting into two elements.
 */
export function plainArray(values: readonly Cell[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else if (typeof v === 'boolean') out += v ? 't' : 'f';
    else if (typeof v === 'number' && Number.isFinite(v)) out += String(v);
    else {
      const text = String(v);
      out += PLAIN_INTEGER.test(text) ? text : quotedElement(text);
    }
  }
  return `${out}}`;
}

/**
 * One `plainArray` per picker, each picker applied to every row, in the pickers' order. Pickers
 * belong at module scope, never in the function that writes a page: V8 holds a function's
 * optimized code weakly, so a closure made afresh on every page loses its code at each major GC
 * and is compiled again: a 2,000-page backfill recompiled ~50 such column arrows about 20 times
 * each, 1.5 s of its 3.3 s of TurboFan time (docs/architecture.md, "Worker CPU").
 */
export function plainColumns<T>(rows: readonly T[], picks: ReadonlyArray<(row: T) => Cell>): string[] {
  const out = new Array<string>(picks.length);
  const cells = new Array<Cell>(rows.length);
  for (let c = 0; c < picks.length; c++) {
    const pick = picks[c]!;
    for (let r = 0; r < rows.length; r++) cells[r] = pick(rows[r]!);
    out[c] = plainArray(cells);
  }
  return out;
}

const targets = new WeakMap<pg.Pool, string>();

/**
 * pg connection options for a URL. The store reads no environment: config's `resolveDatabaseUrl`
 * has already put libpq's default user and host into the URL.
 */
export function connectionOptions(databaseUrl: string): { connectionString: string } {
  return { connectionString: databaseUrl };
}

export function createPool(databaseUrl: string, options: { max?: number; applicationName?: string } = {}): Pool {
  const pool = new pg.Pool({
    ...connectionOptions(databaseUrl),
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'harvest',
    connectionTimeoutMillis: 10_000,
  });
  // An idle client losing its server must not crash the process; the next checkout reconnects.
  pool.on('error', () => undefined);
  targets.set(pool, databaseUrl);
  return pool;
}

/** Clients whose connection state pg no longer knows (see withPipelinedTransaction): destroyed on release. */
const discarded = new WeakSet<PoolClient>();

/** Checks out a client (with a clear error when Postgres is unreachable), runs fn, releases it. */
export async function withClient<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw toConnectionError(error, targets.get(pool) ?? '');
  }
  let broken = false;
  // A connection terminated while checked out but between queries (pg_terminate_backend, a
  // server restart) is reported as an 'error' event on the client; unheard, it would crash the
  // process. The next query on it fails and rolls the transaction back; the client is destroyed.
  const onError = () => {
    broken = true;
  };
  client.on('error', onError);
  try {
    return await fn(client);
  } catch (error) {
    broken = broken || sqlState(error) === undefined || CONNECTION_CODES.has(sqlState(error) ?? '');
    throw error;
  } finally {
    client.off('error', onError);
    // A client whose connection failed mid-query is destroyed rather than handed to the next caller.
    client.release(broken || discarded.has(client) ? true : undefined);
  }
}

/**
 * Runs fn in one transaction on one client: COMMIT when it resolves, ROLLBACK when it throws.
 * `asyncCommit` begins it with `SET LOCAL synchronous_commit = off` in the same round trip: the
 * commit does not wait for the WAL flush, so a Postgres crash may lose it whole (never half).
 */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
  options: { asyncCommit?: boolean } = {},
): Promise<T> {
  return withClient(pool, async (client) => {
    await client.query(options.asyncCommit ? 'BEGIN; SET LOCAL synchronous_commit = off' : 'BEGIN');
    try {
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}

/** A transaction whose statements are written without waiting for each other's answers. */
export interface PipelinedTransaction {
  /** The checked-out client (pipeline mode), for a test hook; its queries go behind those queued so far. */
  readonly client: PoolClient;
  /** Queues a statement behind the ones before it; nothing is written until `flush` or `commit`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- matches pg's own signature
  query<R extends Record<string, any> = Record<string, unknown>>(config: pg.QueryConfig | string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  /** Watches a promise that queues statements itself: its failure fails the transaction. */
  track<T>(promise: Promise<T>): Promise<T>;
  /**
   * Writes what is queued now; the client's own queries go straight out until the next `query`
   * (a test hook that awaits its own answers needs it: call the hook, then flush, then await).
   */
  flush(): void;
  /**
   * Ends the transaction: once pg has reported any statement it refused (the next turn of the
   * event loop), writes everything still queued with COMMIT, or ROLLBACK if a statement or the
   * body failed by then. Await the statements' answers after it.
   */
  commit(): void;
}

interface PipelinedClient {
  pipeline: boolean;
  connection: { stream: Writable };
}

/**
 * One transaction in one socket write: BEGIN (asynchronous commit, as `withTransaction`'s
 * `asyncCommit`), every statement `body` queues, COMMIT. Each write costs ~0.2 ms of CPU here and
 * a batch had six; the answers are read as they come.
 *
 * Statements behind a failed one are refused by Postgres (25P02) and the COMMIT behind them
 * answers ROLLBACK: the whole batch is undone, and the first failure in queue order (the cause)
 * is thrown, never a 25P02 the body met after it. `body` queues its statements synchronously (or
 * flushes before it awaits), calls `commit()` and only then awaits answers; if it throws before
 * `commit()`, ROLLBACK is queued.
 *
 * A statement pg refuses before sending it (a parameter whose `toPostgres` or JSON encoding
 * throws, a name reused for other text, the `rows` option) never reaches Postgres, so nothing
 * aborts the transaction there: a COMMIT behind it would commit the other statements while the
 * caller gets the error. pg reports such a refusal one microtask (a failed bind) or one tick (the
 * others) after the statement is queued, so `commit()` holds the corked write until the event
 * loop's check phase (setImmediate), when every refusal is in, and writes ROLLBACK instead of
 * COMMIT if any statement (or the body) failed by then. Still one write; the wait is one turn
 * of the event loop. A refused named statement has had its server-side statement closed while pg
 * still counts it as prepared, so the connection is destroyed rather than returned to the pool.
 *
 * Pipeline mode is switched on for this checkout only, on an idle client, and off once every
 * answer is in, so the pool's other callers (cursors, COPY, LISTEN, `withTransaction`) never
 * see it; a client whose pipeline broke is destroyed by `withClient`.
 */
export async function withPipelinedTransaction<T>(pool: Pool, body: (tx: PipelinedTransaction) => Promise<T>): Promise<T> {
  return withClient(pool, async (client) => {
    const raw = client as unknown as PipelinedClient;
    const stream = raw.connection.stream;
    // The statements and tracked promises in the order they were queued. The body's own promise
    // is not one of them: made before what it queues after an await (a hook's, say), it fails
    // last, with whatever it awaited, often the 25P02 of a statement behind the cause.
    const sent: Array<Promise<unknown>> = [];
    let failed = false;
    let refused = false;
    const watch = <P>(promise: Promise<P>): Promise<P> => {
      sent.push(promise);
      // Answered later, in order; a rejection is read below, never left unhandled.
      promise.catch(() => {
        failed = true;
      });
      return promise;
    };
    let corked = false;
    const cork = (): void => {
      if (!corked) stream.cork();
      corked = true;
    };
    const uncork = (): void => {
      if (corked) stream.uncork();
      corked = false;
    };
    let ending: Promise<void> | undefined;
    let end: Promise<pg.QueryResult> | undefined;
    let bodyFailed = false;
    const finish = (commit: boolean): void => {
      end ??= watch(client.query(commit && !failed && !bodyFailed ? 'COMMIT' : 'ROLLBACK'));
      uncork();
    };
    const tx: PipelinedTransaction = {
      client,
      query: (config, values) => {
        // Behind COMMIT it would be corked and never sent: the transaction would never settle.
        if (ending !== undefined) throw new Error('a statement was queued after COMMIT');
        cork();
        let statement: Promise<pg.QueryResult>;
        try {
          statement = client.query(config, values);
        } catch (error) {
          failed = true;
          throw error;
        }
        statement.catch((error: unknown) => {
          refused ||= !(error instanceof pg.DatabaseError);
        });
        return watch(statement);
      },
      track: watch,
      flush: uncork,
      commit: () => {
        // Every refusal pg reports for a queued statement comes in a microtask or a tick: both
        // run before the check phase.
        ending ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => finish(true));
      },
    };
    raw.pipeline = true;
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      cork();
      // Generic plans: the commit's statements are named, prepared once per connection and run
      // with arrays of every size, and the planner, shown the arrays, kept re-planning the slice
      // advance (custom plans on all 400 of 400 runs, ~0.6 ms each) for no better a plan.
      // No sequential scans: a generic plan is kept for the connection's life, and one made while
      // the tables were small read users, tweets and job_tweets whole by hash join on every later
      // batch (seen at 30k rows in bench/store.ts: Postgres CPU per 16 pages grew 20.5 -> 30.6 ms
      // from 1000 to 4000 pages; 18.9 and 20.5 ms with this). Every statement here reads by key.
      tx.query({ text: 'BEGIN; SET LOCAL synchronous_commit = off; SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL enable_seqscan = off' });
      const result = body(tx);
      // A body that fails after commit() but before the write (a statement queued after it) rolls back.
      result.catch(() => {
        bodyFailed = true;
      });
      outcome = { ok: true, value: await result };
    } catch (error) {
      bodyFailed = true;
      outcome = { ok: false, error };
    }
    if (ending === undefined) finish(false);
    else await ending;
    const settled = await Promise.allSettled(sent);
    raw.pipeline = false;
    if (refused) discarded.add(client);
    const first = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (first) throw first.reason;
    if (!outcome.ok) throw outcome.error;
    const committed = await end;
    if (committed?.command !== 'COMMIT') throw new Error(`the pipelined transaction ended with ${committed?.command ?? 'ROLLBACK'}`);
    return outcome.value;
  });
}
