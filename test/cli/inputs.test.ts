import { describe, it, expect } from 'vitest';
import { ErrorCode, InputError } from '../../src/errors.ts';
import {
  assertNoTimeOperators,
  parseCommunityRef,
  parseConcurrency,
  parseDate,
  parseDateRange,
  parseRangeDate,
  parseEvery,
  parseFormat,
  parseHandle,
  parseHydrateLines,
  parseJobId,
  parseListRef,
  parseNonNegativeInt,
  parseOrder,
  parsePositiveInt,
  parseSearchQuery,
  parseTweetRef,
  parseUserRef,
  splitQueryTerms,
} from '../../src/cli/inputs.ts';

const ID19 = '1234567890123456789';

function rejection(fn: () => unknown): InputError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error('expected an InputError, but the input was accepted');
}

// [parser label, call, option the message must name, raw value the message must quote]
const malformed: Array<[string, () => unknown, string, string]> = [
  ['handle too long', () => parseHandle('abcdefghijklmnop'), '<handle>', 'abcdefghijklmnop'],
  ['handle with dash', () => parseHandle('jack-dorsey'), '<handle>', 'jack-dorsey'],
  ['handle empty', () => parseHandle(''), '<handle>', ''],
  ['handle lone @', () => parseHandle('@'), '<handle>', '@'],
  ['handle double @', () => parseHandle('@@jack'), '<handle>', '@@jack'],
  ['user reserved /i/', () => parseUserRef('https://x.com/i/lists/123'), '<user>', 'https://x.com/i/lists/123'],
  ['user reserved /home', () => parseUserRef('https://x.com/home'), '<user>', 'https://x.com/home'],
  ['user reserved /search', () => parseUserRef('https://twitter.com/search?q=a'), '<user>', 'https://twitter.com/search?q=a'],
  ['user other host', () => parseUserRef('https://example.com/jack'), '<user>', 'https://example.com/jack'],
  ['user ftp scheme', () => parseUserRef('ftp://x.com/jack'), '<user>', 'ftp://x.com/jack'],
  ['user url no handle', () => parseUserRef('https://x.com/'), '<user>', 'https://x.com/'],
  ['user status url', () => parseUserRef('https://x.com/jack/status/20'), '<user>', 'https://x.com/jack/status/20'],
  ['user id leading zero', () => parseUserRef('0123'), '<user>', '0123'],
  ['user id 21 digits', () => parseUserRef('123456789012345678901'), '<user>', '123456789012345678901'],
  ['user with space', () => parseUserRef('jack dorsey'), '<user>', 'jack dorsey'],
  ['tweet id leading zero', () => parseTweetRef('0123456'), '<tweet>', '0123456'],
  ['tweet id 21 digits', () => parseTweetRef('123456789012345678901'), '<tweet>', '123456789012345678901'],
  ['tweet id zero', () => parseTweetRef('0'), '<tweet>', '0'],
  ['tweet id negative', () => parseTweetRef('-5'), '<tweet>', '-5'],
  ['tweet profile url', () => parseTweetRef('https://x.com/jack'), '<tweet>', 'https://x.com/jack'],
  ['tweet status no id', () => parseTweetRef('https://x.com/jack/status/'), '<tweet>', 'https://x.com/jack/status/'],
  ['tweet status bad id', () => parseTweetRef('https://x.com/jack/status/12ab'), '<tweet>', 'https://x.com/jack/status/12ab'],
  ['tweet other host', () => parseTweetRef('https://nitter.net/jack/status/20'), '<tweet>', 'https://nitter.net/jack/status/20'],
  ['tweet likes path', () => parseTweetRef('https://x.com/jack/likes/20'), '<tweet>', 'https://x.com/jack/likes/20'],
  ['list profile url', () => parseListRef('https://x.com/jack'), '<list>', 'https://x.com/jack'],
  ['list community url', () => parseListRef('https://x.com/i/communities/5'), '<list>', 'https://x.com/i/communities/5'],
  ['list word', () => parseListRef('mylist'), '<list>', 'mylist'],
  ['community list url', () => parseCommunityRef('https://x.com/i/lists/5'), '<community>', 'https://x.com/i/lists/5'],
  ['community leading zero', () => parseCommunityRef('007'), '<community>', '007'],
  ['date Feb 30', () => parseDate('2026-02-30', '--since'), '--since', '2026-02-30'],
  ['date not leap', () => parseDate('2025-02-29', '--until'), '--until', '2025-02-29'],
  ['date month 13', () => parseDate('2026-13-01', '--since'), '--since', '2026-13-01'],
  ['date slashes', () => parseDate('2026/01/01', '--since'), '--since', '2026/01/01'],
  ['date short', () => parseDate('2026-1-1', '--since'), '--since', '2026-1-1'],
  ['date with time', () => parseDate('2026-01-01T00:00', '--since'), '--since', '2026-01-01T00:00'],
  ['int word', () => parsePositiveInt('ten', '--max-tweets'), '--max-tweets', 'ten'],
  ['int zero', () => parsePositiveInt('0', '--max-tweets'), '--max-tweets', '0'],
  ['int sign', () => parsePositiveInt('+5', '--max-requests'), '--max-requests', '+5'],
  ['int negative', () => parseNonNegativeInt('-1', '--min-likes'), '--min-likes', '-1'],
  ['int decimal', () => parsePositiveInt('1.5', '--max-tweets'), '--max-tweets', '1.5'],
  ['int exponent', () => parsePositiveInt('1e3', '--max-tweets'), '--max-tweets', '1e3'],
  ['int hex', () => parseNonNegativeInt('0x10', '--min-replies'), '--min-replies', '0x10'],
  ['int unsafe', () => parsePositiveInt('9007199254740993', '--max-tweets'), '--max-tweets', '9007199254740993'],
  ['int over max', () => parsePositiveInt('11', '--port', { max: 10 }), '--port', '11'],
  ['concurrency 0', () => parseConcurrency('0'), '--concurrency', '0'],
  ['concurrency 257', () => parseConcurrency('257'), '--concurrency', '257'],
  ['every 30s', () => parseEvery('30s'), '--every', '30s'],
  ['every 31d', () => parseEvery('31d'), '--every', '31d'],
  ['every bare number', () => parseEvery('300'), '--every', '300'],
  ['every wrong order', () => parseEvery('30m1h'), '--every', '30m1h'],
  ['every unit word', () => parseEvery('5 minutes'), '--every', '5 minutes'],
  ['every empty', () => parseEvery(''), '--every', ''],
  ['order unknown', () => parseOrder('newest'), '--order', 'newest'],
  ['format unknown', () => parseFormat('json'), '--format', 'json'],
  ['query blank', () => parseSearchQuery('   '), '<query>', '   '],
  ['query open quote', () => parseSearchQuery('"hello world'), '<query>', '"hello world'],
  ['query open paren', () => parseSearchQuery('(a OR b'), '<query>', '(a OR b'],
  ['query stray paren', () => parseSearchQuery('a) OR (b'), '<query>', 'a) OR (b'],
  ['query only parens', () => parseSearchQuery('()'), '<query>', '()'],
  ['query 24 terms', () => parseSearchQuery(Array.from({ length: 24 }, (_, i) => `w${i}`).join(' ')), '<query>', 'w0 w1'],
  ['query too long', () => parseSearchQuery('a'.repeat(513)), '<query>', 'aaaa'],
  ['job id zero', () => parseJobId('0'), '<job-id>', '0'],
  ['job id word', () => parseJobId('abc'), '<job-id>', 'abc'],
  ['job id negative', () => parseJobId('-3'), '<job-id>', '-3'],
  ['job id past int8', () => parseJobId('9223372036854775808'), '<job-id>', '9223372036854775808'],
];

describe('malformed CLI inputs', () => {
  it('has at least 40 cases', () => {
    expect(malformed.length).toBeGreaterThanOrEqual(40);
  });

  it.each(malformed)('%s: throws one InputError line naming the option and value', (_label, fn, option, raw) => {
    const error = rejection(fn);
    expect(error.code).toBe(ErrorCode.INPUT_INVALID);
    expect(error.message.startsWith(`${option}: expected`)).toBe(true);
    expect(error.message).toContain(`got ${JSON.stringify(raw).slice(0, -1)}`);
    expect(error.message).not.toContain('\n');
  });
});

describe('valid CLI inputs', () => {
  it('reads handles with and without @', () => {
    expect(parseHandle('@jack')).toBe('jack');
    expect(parseHandle('Jack_Dorsey_123')).toBe('Jack_Dorsey_123');
    expect(parseHandle(' @a ')).toBe('a');
  });

  it.each([
    ['jack', { kind: 'handle', value: 'jack', handle: 'jack' }],
    ['@jack', { kind: 'handle', value: 'jack', handle: 'jack' }],
    ['@12345', { kind: 'handle', value: '12345', handle: '12345' }],
    [ID19, { kind: 'id', value: ID19 }],
    ['12', { kind: 'id', value: '12' }],
    ['https://x.com/jack', { kind: 'url', value: 'jack', handle: 'jack', url: 'https://x.com/jack' }],
    ['http://www.x.com/jack/', { kind: 'url', value: 'jack', handle: 'jack', url: 'https://x.com/jack' }],
    ['https://twitter.com/jack?lang=en', { kind: 'url', value: 'jack', handle: 'jack', url: 'https://x.com/jack' }],
    ['https://mobile.twitter.com/jack', { kind: 'url', value: 'jack', handle: 'jack', url: 'https://x.com/jack' }],
    ['https://www.twitter.com/jack/with_replies', { kind: 'url', value: 'jack', handle: 'jack', url: 'https://x.com/jack' }],
  ])('parseUserRef(%j)', (raw, expected) => {
    expect(parseUserRef(raw)).toEqual(expected);
  });

  it.each([
    [ID19, { id: ID19 }],
    ['20', { id: '20' }],
    ['9223372036854775807', { id: '9223372036854775807' }],
    [`https://x.com/jack/status/${ID19}`, { id: ID19, url: `https://x.com/jack/status/${ID19}` }],
    [`http://twitter.com/jack/statuses/${ID19}/`, { id: ID19, url: `https://x.com/jack/status/${ID19}` }],
    [`https://mobile.twitter.com/jack/status/${ID19}/photo/1?s=20`, { id: ID19, url: `https://x.com/jack/status/${ID19}` }],
    [`https://www.x.com/jack/status/${ID19}/analytics`, { id: ID19, url: `https://x.com/jack/status/${ID19}` }],
    [`https://x.com/i/web/status/${ID19}`, { id: ID19, url: `https://x.com/i/web/status/${ID19}` }],
  ])('parseTweetRef(%j) keeps the id exact', (raw, expected) => {
    expect(parseTweetRef(raw)).toEqual(expected);
  });

  it('refuses ids past int64, which the client would refuse after the job was queued', () => {
    expect(() => parseTweetRef('9223372036854775808')).toThrow(/positive int64/);
    expect(() => parseTweetRef('99999999999999999999')).toThrow(/positive int64/);
  });

  it('reads list and community ids and links', () => {
    expect(parseListRef(ID19)).toEqual({ id: ID19 });
    expect(parseListRef(`https://x.com/i/lists/${ID19}`)).toEqual({ id: ID19, url: `https://x.com/i/lists/${ID19}` });
    expect(parseListRef(`https://twitter.com/i/lists/${ID19}/members`)).toEqual({ id: ID19, url: `https://x.com/i/lists/${ID19}` });
    expect(parseCommunityRef('1500000000000000000')).toEqual({ id: '1500000000000000000' });
    expect(parseCommunityRef(`https://x.com/i/communities/${ID19}/about`)).toEqual({
      id: ID19,
      url: `https://x.com/i/communities/${ID19}`,
    });
  });

  it('reads real calendar dates at 00:00 UTC', () => {
    const leap = parseDate('2024-02-29', '--since');
    expect(leap.value).toBe('2024-02-29');
    expect(leap.date.toISOString()).toBe('2024-02-29T00:00:00.000Z');
  });

  it('accepts an ordered date range and either end alone', () => {
    const range = parseDateRange('2026-01-01', '2026-02-01');
    expect(range.since?.value).toBe('2026-01-01');
    expect(range.until?.date.toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(parseDateRange(undefined, '2026-02-01').since).toBeUndefined();
    expect(parseDateRange().until).toBeUndefined();
  });

  it.each([
    ['2026-02-01', '2026-01-01'],
    ['2026-01-01', '2026-01-01'],
  ])('refuses --since %s with --until %s, naming both', (since, until) => {
    const error = rejection(() => parseDateRange(since, until));
    expect(error.message).toBe(`--since ${since} must be before --until ${until} (--until is exclusive)`);
  });

  it('refuses a date tweet ids cannot carry, and a --since later than tomorrow', () => {
    expect(rejection(() => parseDateRange('2010-11-04')).message).toBe(
      '--since 2010-11-04 is before 2010-11-05: harvest cuts date ranges by tweet id, and only tweets from 2010-11-04 on carry their time in it',
    );
    expect(rejection(() => parseDateRange(undefined, '2009-01-01')).message).toMatch(/^--until 2009-01-01 is before 2010-11-05: /);
    expect(parseDateRange('2010-11-05').since?.value).toBe('2010-11-05');
    const now = Date.parse('2026-11-24T23:30:00Z');
    // Tomorrow in UTC is today east of it: accepted (the job finds its range empty and completes).
    expect(parseRangeDate('2026-11-25', '--since', now).value).toBe('2026-11-25');
    expect(rejection(() => parseRangeDate('2026-11-26', '--since', now)).message).toBe('--since 2026-11-26 is in the future: there is nothing to harvest yet');
    // --until may lie ahead: the plan ends the range at now.
    expect(parseRangeDate('2030-01-01', '--until', now).value).toBe('2030-01-01');
  });

  it('names the bad end of a date range', () => {
    expect(rejection(() => parseDateRange('2026-01-01', '2026-02-30')).message).toMatch(/^--until: /);
  });

  it('reads integers within their bounds', () => {
    expect(parsePositiveInt('1', '--max-tweets')).toBe(1);
    expect(parsePositiveInt('9007199254740991', '--max-tweets')).toBe(Number.MAX_SAFE_INTEGER);
    expect(parsePositiveInt('10', '--port', { max: 10 })).toBe(10);
    expect(parseNonNegativeInt('0', '--min-likes')).toBe(0);
    expect(parseConcurrency('256')).toBe(256);
    expect(parseConcurrency('1')).toBe(1);
  });

  it.each([
    ['60s', 60],
    ['1m', 60],
    ['5m', 300],
    ['1h', 3600],
    ['1h30m', 5400],
    ['2d', 172_800],
    ['1d2h3m4s', 93_784],
    ['30d', 2_592_000],
  ])('parseEvery(%j) = %d seconds', (raw, seconds) => {
    expect(parseEvery(raw)).toBe(seconds);
  });

  it('says why a watch may not run more often than every minute', () => {
    expect(rejection(() => parseEvery('59s')).message).toMatch(/at least 1m.*quota/);
  });

  it('reads order and format', () => {
    expect(parseOrder('latest')).toBe('latest');
    expect(parseOrder('Popular')).toBe('popular');
    expect(parseFormat('csv')).toBe('csv');
    expect(parseFormat('JSONL')).toBe('jsonl');
  });

  it('reads job ids as exact strings', () => {
    expect(parseJobId('42')).toBe('42');
    expect(parseJobId('9223372036854775807')).toBe('9223372036854775807');
  });
});

describe('search queries', () => {
  it('accepts operators, phrases, groups and exactly 23 terms', () => {
    const q = '(from:jack OR from:ev) "hello (world" -filter:replies lang:en';
    expect(parseSearchQuery(`  ${q} `)).toBe(q);
    expect(splitQueryTerms(q).terms).toEqual(['from:jack', 'from:ev', '"hello (world"', '-filter:replies', 'lang:en']);
    const max = Array.from({ length: 23 }, (_, i) => `w${i}`).join(' OR ');
    expect(parseSearchQuery(max)).toBe(max);
  });

  it('counts the terms it refuses', () => {
    const q = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');
    expect(rejection(() => parseSearchQuery(q)).message).toContain('found 30');
  });

  it.each(['cats since:2026-01-01', 'cats (until:2026-02-01 OR dogs)', 'x -since_time:1700000000', 'UNTIL_TIME:1 y'])(
    'assertNoTimeOperators refuses %j',
    (q) => {
      const error = rejection(() => assertNoTimeOperators(q));
      expect(error.message).toMatch(/^<query>: contains the time operator ".+"; use either --since\/--until/);
    },
  );

  it('assertNoTimeOperators ignores the words inside phrases and other operators', () => {
    expect(() => assertNoTimeOperators('"since: forever" within_time:2d since_id:5 cats')).not.toThrow();
  });
});

describe('parseHydrateLines', () => {
  it('keeps ids in first-seen order, skips blanks and comments, reports bad lines by number', () => {
    const text = [
      '\uFEFF# tweets to fetch',
      ID19,
      '',
      `https://x.com/jack/status/20`,
      '   ',
      `https://twitter.com/a/status/${ID19}/photo/1  # duplicate of line 2`,
      'not a tweet',
      '0123',
      '20\r',
      '55',
    ].join('\n');
    const { ids, errors } = parseHydrateLines(text);
    expect(ids).toEqual([ID19, '20', '55']);
    expect(errors).toEqual([
      { line: 7, text: 'not a tweet', reason: 'expected a tweet id or a link like https://x.com/jack/status/20' },
      { line: 8, text: '0123', reason: 'expected a tweet id of at most 19 digits without leading zeros (a positive int64)' },
    ]);
  });

  it('returns nothing for an empty file', () => {
    expect(parseHydrateLines('')).toEqual({ ids: [], errors: [] });
  });
});
