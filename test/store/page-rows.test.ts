/** How two records of one id in a page (or a group commit) become one row. */
import { describe, expect, it } from 'vitest';
import { collectPage, mergeCollected } from '../../src/store/page-rows.ts';
import { makeTweet, makeUser } from './fixtures.ts';

describe('records of one id', () => {
  const author = makeUser('1800000000000000100');
  const full = makeTweet('1800000000000000001', author, {
    source: 'v2', fullText: 'the full text', isReply: true, inReplyToTweetId: '1800000000000000000', likeCount: 100, raw: { full: true },
  });
  // How v2 embeds a quoted tweet: no reply flag, maybe no text, counts of its own.
  const embedded = makeTweet(full.id, author, {
    source: 'v2-embedded', fullText: '', isReply: false, inReplyToTweetId: null, conversationId: null, likeCount: 3, lang: null, raw: { embedded: true },
  });
  const quoting = makeTweet('1800000000000000002', author, { source: 'v2', quoted: embedded, quotedTweetId: full.id, isQuoteStatus: true });

  it('a poorer embedded copy of a tweet the page carries in full fills gaps only, whichever comes first', () => {
    for (const tweets of [[full, quoting], [quoting, full]]) {
      const row = collectPage(tweets, []).tweets.find((t) => t.id === full.id);
      expect(row).toMatchObject({ source: 'v2', fullText: 'the full text', isReply: true, inReplyToTweetId: full.inReplyToTweetId, likeCount: 100, raw: { full: true } });
    }
  });

  it('the same across the pages of a group commit', () => {
    for (const pages of [[[full], [quoting]], [[quoting], [full]]]) {
      const merged = mergeCollected(pages.map((p) => collectPage(p, [])));
      expect(merged.tweets.find((t) => t.id === full.id)).toMatchObject({ source: 'v2', fullText: 'the full text', isReply: true, likeCount: 100 });
    }
  });

  it('a poorer copy still fills what the richer one lacks; an equal or richer one wins what it has', () => {
    const gappy = { ...full, lang: null, viewCount: null };
    const filler = { ...embedded, lang: 'pt', viewCount: 42 };
    expect(collectPage([gappy, { ...quoting, quoted: filler }], []).tweets.find((t) => t.id === full.id)).toMatchObject({ lang: 'pt', viewCount: 42, likeCount: 100 });
    const newer = makeTweet(full.id, author, { source: 'v3', fullText: 'edited', likeCount: 120, raw: { v3: true } });
    expect(collectPage([full, newer], []).tweets[0]).toMatchObject({ source: 'v3', fullText: 'edited', likeCount: 120, raw: { v3: true } });
  });
});
