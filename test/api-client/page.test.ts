import { describe, expect, it } from 'vitest';
import { EnvelopeError, readArray, readPage } from '../../src/api-client/page.ts';
import { tweetV3Reader, tweetV2Reader } from '../../src/api-client/readers.ts';
import { BIG_TWEET_ID, tweetV2, tweetV3 } from './fixtures.ts';

describe('page parsing with quarantine', () => {
  it('quarantines invalid items with a reason and keeps the rest of the page', () => {
    const bad = tweetV3({ id: Number(BIG_TWEET_ID) });
    const page = readPage({ tweets: [tweetV3(), bad, tweetV3({ id: '2', created_at: 'never' })], next_cursor: 'abc' }, ['tweets'], tweetV3Reader);
    expect(page.items).toHaveLength(1);
    expect(page.nextCursor).toBe('abc');
    expect(page.quarantined).toHaveLength(2);
    expect(page.quarantined[0]?.payload).toBe(bad);
    expect(page.quarantined[0]?.reason).toMatch(/^id: /);
    expect(page.quarantined[1]?.reason).toMatch(/created_at/);
  });

  it('treats an empty-string, null or absent next_cursor as the end', () => {
    expect(readPage({ tweets: [], next_cursor: '' }, ['tweets'], tweetV3Reader).nextCursor).toBeNull();
    expect(readPage({ tweets: [], next_cursor: null }, ['tweets'], tweetV3Reader).nextCursor).toBeNull();
    expect(readPage({ tweets: [] }, ['tweets'], tweetV3Reader).nextCursor).toBeNull();
  });

  it('reads a null item list as an empty page (production sends empty values as null)', () => {
    const page = readPage({ tweets: null, next_cursor: null }, ['tweets'], tweetV3Reader);
    expect([page.items, page.quarantined, page.nextCursor]).toEqual([[], [], null]);
    expect(readPage({ users: null, next_cursor: 'more' }, ['users'], tweetV3Reader).nextCursor).toBe('more');
  });

  it('rejects an envelope of the wrong shape as a whole', () => {
    expect(() => readPage({ next_cursor: null }, ['tweets'], tweetV3Reader)).toThrow(EnvelopeError);
    expect(() => readPage({ users: [] }, ['tweets'], tweetV3Reader)).toThrow(EnvelopeError);
    expect(() => readPage({ tweets: {} }, ['tweets'], tweetV3Reader)).toThrow(EnvelopeError);
    expect(() => readPage([], ['tweets'], tweetV3Reader)).toThrow(EnvelopeError);
    expect(() => readPage({ tweets: [], next_cursor: 2 ** 60 }, ['tweets'], tweetV3Reader)).toThrow(EnvelopeError);
    expect(() => readArray({ tweets: [] }, tweetV2Reader)).toThrow(EnvelopeError);
  });

  it('reads a bare array as one page without cursor', () => {
    const page = readArray([tweetV2(), { id_str: 5 }], tweetV2Reader);
    expect(page.items).toHaveLength(1);
    expect(page.quarantined).toHaveLength(1);
    expect(page.nextCursor).toBeNull();
  });
});
