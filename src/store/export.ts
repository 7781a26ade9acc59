/**
 * `harvest export`: a job's tweets streamed straight out of Postgres with COPY, so memory stays
 * flat whatever the row count (the server produces the bytes, pg-copy-streams hands them on in
 * chunks, `pipeline()` pauses the COPY whenever the destination is full).
 *
 * Columns, in this order, identical in both formats (see docs/export.md):
 *   tweet_id               text     tweet id (ids are always text: 19 digits exceed 2^53)
 *   created_at             text     ISO 8601 UTC with milliseconds, e.g. 2026-08-02T13:30:00.000Z
 *   author_id              text     author account id, empty/null when unknown
 *   author_username        text     author handle as last seen
 *   author_display_name    text     author display name as last seen
 *   author_followers_count number   author followers at the last observation
 *   full_text              text     full text, verbatim
 *   lang                   text     language code
 *   conversation_id        text     id of the tweet that started the conversation
 *   in_reply_to_tweet_id   text     id of the tweet replied to
 *   quoted_tweet_id        text     id of the quoted tweet
 *   retweeted_tweet_id     text     id of the retweeted tweet
 *   like_count, retweet_count, reply_count, quote_count, view_count, bookmark_count   number
 *   hashtags               text     space-joined, without #
 *   mentions               text     space-joined handles, lower-case, without @
 *   urls                   text     space-joined links
 *   first_seen_at          text     ISO 8601 UTC: when THIS job first found the tweet
 * Rows are ordered by tweet id (ascending, i.e. oldest first). In CSV a missing value is an empty
 * field; in JSONL it is null. New columns are only ever appended.
 */
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { to as copyTo } from 'pg-copy-streams';
import { withClient, type Pool } from './db.ts';

export type ExportFormat = 'csv' | 'jsonl';

export const EXPORT_COLUMNS = [
  'tweet_id',
  'created_at',
  'author_id',
  'author_username',
  'author_display_name',
  'author_followers_count',
  'full_text',
  'lang',
  'conversation_id',
  'in_reply_to_tweet_id',
  'quoted_tweet_id',
  'retweeted_tweet_id',
  'like_count',
  'retweet_count',
  'reply_count',
  'quote_count',
  'view_count',
  'bookmark_count',
  'hashtags',
  'mentions',
  'urls',
  'first_seen_at',
] as const;

const iso = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * A text cell people wrote (a tweet, a display name) as a spreadsheet should open it: one starting
 * with = + - @, a tab or a carriage return would be read as a formula (a reply starts with @), so
 * it gets a leading ', which makes it text (the ' stays visible in a CSV a spreadsheet opens).
 */
const asText = (column: string): string => `CASE WHEN ${column} ~ '^[-=+@\t\r]' THEN '''' || ${column} ELSE ${column} END`;

/**
 * An id as a spreadsheet should open it: a bare 19-digit cell becomes a number there and keeps 15
 * digits (1920000000000000010 opens as 1.92E+18, and saving writes that back). `="…"` is a formula
 * of one constant of digits (nothing anyone wrote), which Excel and Google Sheets show as the id
 * as text.
 */
const idAsText = (column: string): string => `'="' || ${column}::text || '"'`;

/** `jobLiteral` is an already-escaped SQL literal: COPY takes no bind parameters. */
function selectSql(jobLiteral: string, spreadsheet: boolean): string {
  const people = spreadsheet ? asText : (column: string) => column;
  const id = spreadsheet ? idAsText : (column: string) => `${column}::text`;
  return `SELECT
    ${id('t.id')} AS tweet_id,
    ${iso('t.created_at')} AS created_at,
    ${id('t.author_id')} AS author_id,
    u.username AS author_username,
    ${people('u.display_name')} AS author_display_name,
    u.followers_count AS author_followers_count,
    ${people('t.full_text')} AS full_text,
    t.lang,
    ${id('t.conversation_id')} AS conversation_id,
    ${id('t.in_reply_to_tweet_id')} AS in_reply_to_tweet_id,
    ${id('t.quoted_tweet_id')} AS quoted_tweet_id,
    ${id('t.retweeted_tweet_id')} AS retweeted_tweet_id,
    t.like_count,
    t.retweet_count,
    t.reply_count,
    t.quote_count,
    t.view_count,
    t.bookmark_count,
    array_to_string(t.hashtags, ' ') AS hashtags,
    array_to_string(t.mentions, ' ') AS mentions,
    array_to_string(t.urls, ' ') AS urls,
    ${iso('jt.first_seen_at')} AS first_seen_at
  FROM job_tweets jt
  JOIN tweets t ON t.id = jt.tweet_id
  LEFT JOIN users u ON u.id = t.author_id
  WHERE jt.job_id = ${jobLiteral}::bigint
  ORDER BY jt.tweet_id`;
}

/**
 * JSONL rides on CSV mode with a quote and a delimiter that JSON text can never contain raw (JSON
 * escapes every control character as \u00XX) and that is never empty, so COPY emits each
 * row_to_json value verbatim: text mode would double every backslash instead.
 */
function copySql(format: ExportFormat, jobLiteral: string, spreadsheet: boolean): string {
  const select = selectSql(jobLiteral, spreadsheet && format === 'csv');
  // For a spreadsheet every value is quoted: a program that splits on ; or tab (Excel in many
  // locales) would otherwise cut `a;=1+1` into a second cell that starts a formula.
  return format === 'csv'
    ? `COPY (${select}) TO STDOUT WITH (FORMAT csv, HEADER true${spreadsheet ? ', FORCE_QUOTE *' : ''})`
    : `COPY (SELECT row_to_json(r)::text FROM (${select}) r) TO STDOUT WITH (FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02')`;
}

export interface ExportOptions {
  /** End `writable` when the rows are written (default true; false for process.stdout). */
  end?: boolean;
  signal?: AbortSignal;
  /**
   * CSV for a spreadsheet: tweet text and display names never open as formulas (asText), ids keep
   * their digits (idAsText), every value is quoted, and the file starts with a byte-order mark.
   */
  spreadsheet?: boolean;
}

/**
 * Streams one job's tweets into `writable` as CSV (with a header line) or JSON lines. The whole
 * export is one statement, so it reads one consistent snapshot even while workers keep writing.
 */
export async function exportJobTweets(
  pool: Pool,
  jobId: string,
  format: ExportFormat,
  writable: Writable | NodeJS.WritableStream,
  options: ExportOptions = {},
): Promise<{ rows: number }> {
  // Validated digits, then quoted by the driver: the only value ever spliced into this SQL.
  if (!/^[1-9][0-9]{0,18}$/.test(jobId)) throw new RangeError(`not a job id: ${JSON.stringify(jobId)}`);
  try {
    return await withClient(pool, async (client) => {
      const stream = client.query(copyTo(copySql(format, client.escapeLiteral(jobId), options.spreadsheet ?? false)));
      const pipeOptions = { end: options.end ?? true, ...(options.signal ? { signal: options.signal } : {}) };
      try {
        // A spreadsheet's CSV starts with a UTF-8 byte-order mark: without one, Excel reads the
        // file in the machine's legacy code page (Zoë opens as ZoÃ«).
        if (options.spreadsheet && format === 'csv') await pipeline(stream, withBom, writable, pipeOptions);
        else await pipeline(stream, writable, pipeOptions);
      } catch (error) {
        // A COPY cut off midway (EPIPE, abort, disk full) leaves the connection mid-protocol; a
        // code-less wrapper makes withClient destroy it instead of pooling it.
        throw new InterruptedCopy(error);
      }
      return { rows: stream.rowCount };
    });
  } catch (error) {
    throw error instanceof InterruptedCopy ? error.cause : error;
  }
}

async function* withBom(rows: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  yield BOM;
  yield* rows;
}
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

class InterruptedCopy extends Error {
  constructor(cause: unknown) {
    super('export interrupted', { cause });
  }
}
