/**
 * Values that pass a loose schema and then break SQL or the process (issue #11 item 5): ids that
 * are not canonical int64, counts that are not safe non-negative integers, nesting without end,
 * a normaliser that throws. Each costs its item (quarantined), never its page.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InputError } from '../../src/errors.ts';
import { numericIdInput, userIdInput, validateInput } from '../../src/api-client/input.ts';
import { parseJsonBody, quoteIntegerCursors } from '../../src/api-client/json-body.ts';
import { MAX_EMBEDDED_DEPTH } from '../../src/api-client/normalize.ts';
import { MAX_ITEM_DEPTH, nestsDeeperThan, quarantineOf, readOne, readPage, EnvelopeError } from '../../src/api-client/page.ts';
import { tweetV3Reader, userV3Reader } from '../../src/api-client/readers.ts';
import { countSchema, idSchema, isCanonicalId } from '../../src/api-client/schemas/common.ts';
import { BIG_TWEET_ID, BIG_USER_ID, tweetV3, userV3 } from './fixtures.ts';

describe('ids are canonical positive int64 decimal strings', () => {
  it('accepts 1 through 9223372036854775807', () => {
    for (const id of ['1', '42', BIG_TWEET_ID, '9223372036854775807', '1000000000000000000']) {
      expect(isCanonicalId(id)).toBe(true);
      expect(idSchema.safeParse(id).success).toBe(true);
    }
  });

  it('refuses a leading zero, a sign, zero, 30 digits, above int64 and anything not decimal', () => {
    const refused = ['01', '007', '-1', '+1', '0', '', '1'.repeat(30), '9223372036854775808', '99999999999999999999', ' 1', '1 ', '1.0', '1e3', '١٢'];
    for (const id of refused) expect({ id, ok: idSchema.safeParse(id).success }).toEqual({ id, ok: false });
    expect(idSchema.safeParse(12).success).toBe(false);
  });

  it('refuses the same in request parameters, before anything is sent', () => {
    for (const bad of ['01', '0', '-5', '9223372036854775808']) {
      expect(() => validateInput(userIdInput, bad, 'GET /v3/info')).toThrow(InputError);
      expect(() => validateInput(numericIdInput, bad, 'GET /v3/list-tweets')).toThrow(InputError);
    }
    expect(validateInput(userIdInput, '9223372036854775807', 'GET /v3/info')).toBe('9223372036854775807');
  });

  it('quarantines a tweet whose id, reply id or conversation id is not canonical, and keeps its page', () => {
    const bad = [
      tweetV3({ id: '01' }),
      tweetV3({ id: '0' }),
      tweetV3({ in_reply_to_tweet_id: '-3' }),
      tweetV3({ conversation_id_str: '9'.repeat(30) }),
    ];
    const page = readPage({ tweets: [tweetV3(), ...bad], next_cursor: 'c' }, ['tweets'], tweetV3Reader);
    expect(page.items.map((t) => t.id)).toEqual([BIG_TWEET_ID]);
    expect(page.quarantined.map((q) => q.payload)).toEqual(bad);
    expect(page.refusedParts).toEqual([]);
    expect(page.nextCursor).toBe('c');
  });

  it("quarantines an author whose id is not canonical, and keeps the tweet without the profile", () => {
    const badId = userV3({ id: '9223372036854775808' });
    const badCount = userV3({ tweets_count: 1.5 });
    const tweets = [tweetV3({ id: '1951234567890123001', user: badId }), tweetV3({ id: '1951234567890123002', user: badCount })];
    const page = readPage({ tweets, next_cursor: 'c' }, ['tweets'], tweetV3Reader);
    expect(page.quarantined).toEqual([]);
    expect(page.items.map((t) => [t.id, t.author, t.authorId])).toEqual([
      ['1951234567890123001', null, null],
      ['1951234567890123002', null, BIG_USER_ID],
    ]);
    expect(page.refusedParts?.map((q) => q.payload)).toEqual([badId, badCount]);
    expect(page.refusedParts?.[1]?.reason).toMatch(/^author of tweet 1951234567890123002: tweets_count: /);
    expect(quarantineOf(page).map((q) => q.payload)).toEqual([badId, badCount]);
  });

  it('leaves a non-canonical pinned id out of the author, not the author out of the tweet', () => {
    const author = userV3({ pinned_tweet_ids: ['00012', BIG_TWEET_ID, '9223372036854775808'] });
    const page = readPage({ tweets: [tweetV3({ user: author })], next_cursor: 'c' }, ['tweets'], tweetV3Reader);
    expect(page.refusedParts).toEqual([]);
    expect(page.items[0]?.author).toMatchObject({ id: BIG_USER_ID, pinnedTweetIds: [BIG_TWEET_ID], raw: author });
  });
});

describe('counts are safe non-negative integers', () => {
  it('accepts integers and decimal strings, null and absent as null', () => {
    expect(countSchema.parse(0)).toBe(0);
    expect(countSchema.parse(27979637)).toBe(27979637);
    expect(countSchema.parse('1200')).toBe(1200);
    expect(countSchema.parse(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    expect(countSchema.parse(null)).toBeNull();
    expect(countSchema.parse(undefined)).toBeNull();
  });

  it('refuses negatives, fractions, values beyond 2^53 and non-decimal strings', () => {
    for (const bad of [-1, 1.5, 2 ** 53, 1e300, '-1', '1.5', '12a', '', '99999999999999999', Number.NaN, true]) {
      expect({ bad, ok: countSchema.safeParse(bad).success }).toEqual({ bad, ok: false });
    }
  });

  it('quarantines the tweet or user carrying such a count, not the page', () => {
    const tweets = readPage({ tweets: [tweetV3({ view_count: -1 }), tweetV3(), tweetV3({ likes_count: 2.5 })] }, ['tweets'], tweetV3Reader);
    expect(tweets.items).toHaveLength(1);
    expect(tweets.quarantined.map((q) => q.reason)).toEqual([expect.stringMatching(/^view_count/), expect.stringMatching(/^likes_count/)]);
    const users = readPage({ users: [userV3({ followers_count: 2 ** 60 }), userV3({ id: '5' })] }, ['users'], userV3Reader);
    expect(users.items.map((u) => u.id)).toEqual(['5']);
    expect(users.quarantined).toHaveLength(1);
  });
});

/** A tweet quoting a tweet quoting a tweet…, `levels` embeddings deep, ids 100+level. */
function quoteChain(levels: number): Record<string, unknown> {
  let inner: Record<string, unknown> | null = null;
  for (let level = levels; level >= 0; level--) {
    inner = tweetV3({ id: String(100 + level), is_quote_status: inner !== null, quoted_status: inner });
  }
  return inner as Record<string, unknown>;
}

function deepObject(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = { next: value };
  return value;
}

describe('nesting is capped', () => {
  it('measures depth without recursion, even 100 000 levels deep', () => {
    expect(nestsDeeperThan({ a: [1, { b: 2 }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: {} }] }, 3)).toBe(true);
    expect(nestsDeeperThan(deepObject(100_000), MAX_ITEM_DEPTH)).toBe(true);
  });

  it('normalises a quote chain only down to the cap, keeping the deeper level as an id', () => {
    const tweet = readOne(quoteChain(6), tweetV3Reader);
    let level = tweet;
    for (let depth = 1; depth <= MAX_EMBEDDED_DEPTH; depth++) {
      expect(level.quotedTweetId).toBe(String(100 + depth));
      expect(level.quoted?.id).toBe(String(100 + depth));
      level = level.quoted!;
    }
    expect(level.quotedTweetId).toBe(String(101 + MAX_EMBEDDED_DEPTH));
    expect(level.quoted).toBeNull();
  });

  it('quarantines an item nested beyond the cap with a shallow payload, and keeps the page', () => {
    const deep = tweetV3({ id: '7', extra: deepObject(100_000) });
    const chain = quoteChain(MAX_ITEM_DEPTH);
    const page = readPage({ tweets: [deep, tweetV3(), chain], next_cursor: null }, ['tweets'], tweetV3Reader);
    expect(page.items.map((t) => t.id)).toEqual([BIG_TWEET_ID]);
    expect(page.quarantined.map((q) => q.reason)).toEqual([`nesting deeper than ${MAX_ITEM_DEPTH} levels`, `nesting deeper than ${MAX_ITEM_DEPTH} levels`]);
    const payload = page.quarantined[0]?.payload as Record<string, unknown>;
    expect(payload.id).toBe('7');
    expect(payload.harvest_truncated).toMatch(/nesting/);
    expect(nestsDeeperThan(payload, 1)).toBe(false);
    // The payload is what the store writes as jsonb: it must serialise.
    expect(() => JSON.stringify(page.quarantined)).not.toThrow();
  });

  it('refuses a too-deep single answer as an invalid envelope', () => {
    expect(() => readOne(deepObject(MAX_ITEM_DEPTH + 1), tweetV3Reader)).toThrow(EnvelopeError);
  });
});

describe('a normaliser failure quarantines its item', () => {
  it('keeps the page when one item makes the normaliser throw', () => {
    const reader = {
      schema: z.object({ id: idSchema }).loose(),
      normalize: (item: { id: string }) => {
        if (item.id === '13') throw new RangeError('unlucky');
        return item.id;
      },
    };
    const page = readPage({ items: [{ id: '12' }, { id: '13' }, { id: '14' }] }, ['items'], reader);
    expect(page.items).toEqual(['12', '14']);
    expect(page.quarantined).toEqual([{ reason: 'could not normalise: RangeError: unlucky', payload: { id: '13' } }]);
  });
});

describe('integer cursors keep every digit', () => {
  it('quotes an integer next_cursor above 2^53 before JSON.parse', () => {
    const parsed = parseJsonBody('{"users":[],"next_cursor":18446744073709551615}');
    expect(parsed).toEqual({ json: { users: [], next_cursor: '18446744073709551615' } });
    const page = readPage((parsed as { json: unknown }).json, ['users'], userV3Reader);
    expect(page.nextCursor).toBe('18446744073709551615');
    expect(quoteIntegerCursors('{ "next_cursor" : 1700000000123 , "users": []}')).toBe('{ "next_cursor" : "1700000000123" , "users": []}');
  });

  it('leaves string cursors, fractional numbers and look-alikes inside strings alone', () => {
    const text = '{"tweets":[{"full_text":"{\\"next_cursor\\":123456789012345678901}"}],"next_cursor":"DAAB"}';
    expect(quoteIntegerCursors(text)).toBe(text);
    expect(quoteIntegerCursors('{"next_cursor":1.5}')).toBe('{"next_cursor":1.5}');
    const parsed = parseJsonBody(text) as { json: { tweets: Array<{ full_text: string }> } };
    expect(parsed.json.tweets[0]?.full_text).toBe('{"next_cursor":123456789012345678901}');
  });

  it('quotes exactly what the global pattern it replaces quoted, on generated texts', () => {
    // The pattern the key-anchored scan must match; it walked the whole body.
    const reference = (text: string) => text.replace(/([{,]\s*"next_cursor"\s*:\s*)(-?\d+)(?=\s*[,}])/g, '$1"$2"');
    const choices = [
      ['{', ',', '[', 'x', ''],
      ['', ' ', '\n', '\u00a0', '\t '],
      ['"next_cursor"', '"next_cursor"', '"next_cursorx"', '\\"next_cursor\\"'],
      ['', ' ', '\r\n'],
      [':', ':', ''],
      ['', ' '],
      ['12', '-7', '1.5', '"s"', '-', '123456789012345678901', 'null'],
      ['', ' ', '\u2028'],
      [',', '}', ']', ' ', ''],
    ];
    let seed = 7;
    const pick = (options: string[]) => options[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % options.length] ?? '';
    let quoted = 0;
    for (let n = 0; n < 5_000; n++) {
      let text = '';
      for (let segment = 0; segment < 1 + (n % 3); segment++) for (const options of choices) text += pick(options);
      const expected = reference(text);
      if (expected !== text) quoted++;
      expect(quoteIntegerCursors(text), JSON.stringify(text)).toBe(expected);
    }
    expect(quoted).toBeGreaterThan(500);
    const page = '{"tweets":[{"id":"1","next_cursor":5}],"next_cursor" :\t-12 }';
    expect(quoteIntegerCursors(page)).toBe('{"tweets":[{"id":"1","next_cursor":"5"}],"next_cursor" :\t"-12" }');
  });
});
