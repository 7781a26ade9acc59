/** How two records of one id in a page (or a group commit) become one row. */
import { describe, expect, it } from 'vitest';
import { plainArray } from '../../src/store/db.ts';
import { collectPage, mergeBatch, plainArrayOfRuns, type CollectedPage } from '../../src/store/page-rows.ts';
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

  it('the same across the pages of a group commit, of one job or of two', () => {
    for (const [first, second] of [['1', '1'], ['1', '2'], ['2', '1']]) {
      const jobs = [first!, second!];
      for (const pages of [[[full], [quoting]], [[quoting], [full]]]) {
        const merged = mergeBatch(pages.map((p, i) => ({ page: { jobId: jobs[i]! }, collected: collectPage(p, []) })));
        expect(merged.tweets.filter((t) => t.id === full.id)).toHaveLength(1);
        expect(merged.tweets.find((t) => t.id === full.id)).toMatchObject({ source: 'v2', fullText: 'the full text', isReply: true, likeCount: 100 });
      }
    }
    for (const pages of [[[full], [quoting]], [[quoting], [full]]]) {
      const merged = mergeBatch(pages.map((p) => ({ page: { jobId: '1' }, collected: collectPage(p, []) })));
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

describe('the rows of a group commit of several jobs', () => {
  const user = (id: string) => makeUser(id);
  const page = (tweetIds: string[], authorIds: string[], members: string[] = []): CollectedPage =>
    collectPage(tweetIds.map((id, i) => makeTweet(id, user(authorIds[i % authorIds.length]!))), members.map(user), 'member');

  it('holds each tweet and user once, sorted by id, and provenance per (job, id) sorted by job id, then id', () => {
    // Job 10 (compared as a number, after 9) has the low ids, job 9 the high ones, and both share 1005 and author 7.
    const rows = mergeBatch([
      { page: { jobId: '10' }, collected: page(['1003', '1005'], ['8', '7']) },
      { page: { jobId: '9' }, collected: page(['1009', '1005'], ['7'], ['8']) },
      { page: { jobId: '10' }, collected: page(['1001'], ['7']) },
    ]);
    expect(rows.tweets.map((t) => t.id)).toEqual(['1001', '1003', '1005', '1009']);
    expect(rows.users.map((u) => u.id)).toEqual(['7', '8']);
    expect(rows.tweetJobIds.map((j, i) => [j, rows.pageTweetIds[i]])).toEqual([
      ['9', '1005'], ['9', '1009'], ['10', '1001'], ['10', '1003'], ['10', '1005'],
    ]);
    expect(rows.userJobIds.map((j, i) => [j, ...rows.provenance[i]!])).toEqual([
      ['9', '7', 'author'], ['9', '8', 'member'], ['10', '7', 'author'], ['10', '8', 'author'],
    ]);
  });

  it('of one page: its own rows, every provenance row beside its job', () => {
    const collected = page(['1002', '1001'], ['5', '4']);
    const rows = mergeBatch([{ page: { jobId: '3' }, collected }]);
    expect(rows).toMatchObject({ tweets: collected.tweets, users: collected.users, pageTweetIds: ['1001', '1002'], provenance: [['4', 'author'], ['5', 'author']] });
    expect(rows.tweetJobIds).toEqual(['3', '3']);
    expect(rows.userJobIds).toEqual(['3', '3']);
  });
});

describe('plainArrayOfRuns', () => {
  it('writes what plainArray writes, runs or not', () => {
    const columns = [[], ['7'], ['7', '7', '7'], ['7', '7', '12', '12', '12', '3'], ['1', '2', '1'], ['x y', 'x y', 'a"b', '1']];
    for (const column of columns) expect(plainArrayOfRuns(column)).toBe(plainArray(column));
  });
});
