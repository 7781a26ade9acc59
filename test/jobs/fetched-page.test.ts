/** The runner's page from the client's: what goes to quarantine and what counts as an item. */
import { describe, expect, it } from 'vitest';
import { readPage } from '../../src/api-client/page.ts';
import { tweetV3Reader } from '../../src/api-client/readers.ts';
import { tweetPage } from '../../src/jobs/kinds/pages.ts';
import { tweetV3, userV3 } from '../api-client/fixtures.ts';

describe('tweetPage', () => {
  it('quarantines a refused author beside refused tweets, and counts only the tweets as items', () => {
    const badAuthor = userV3({ followers_count: -1 });
    const wire = {
      tweets: [tweetV3({ id: '1951234567890123001', user: badAuthor }), tweetV3({ id: '01' }), tweetV3({ id: '1951234567890123003' })],
      next_cursor: 'c',
    };
    const page = tweetPage('POST /v3/search-tweets', readPage(wire, ['tweets'], tweetV3Reader));
    expect(page.tweets.map((t) => t.id)).toEqual(['1951234567890123001', '1951234567890123003']);
    expect(page.quarantined.map((q) => q.payload)).toEqual([wire.tweets[1], badAuthor]);
    // Three items came; the author is a part of one of them.
    expect(page.itemCount).toBe(3);
  });
});
