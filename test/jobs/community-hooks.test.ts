/** The community kind's pure hooks: its plan, its watch passes, where a pass stops. */
import { describe, expect, it } from 'vitest';
import type { CanonicalTweet } from '../../src/api-client/canonical.ts';
import type { FetchedPage } from '../../src/jobs/kind.ts';
import { communityJob, communitySearchSlice, communityTweetsSlice } from '../../src/jobs/kinds/community.ts';
import { InputError } from '../../src/errors.ts';

const ctx = { pooledRate: 20, latencyMs: 600, now: new Date('2026-11-01T00:00:00Z') };
const C = '1700000000000000002';

function page(ids: string[]): FetchedPage {
  return {
    endpoint: 'POST /v3/community-tweets',
    tweets: ids.map((id) => ({ id }) as CanonicalTweet),
    users: [],
    nextCursor: 'next',
    quarantined: [],
    itemCount: ids.length,
  };
}

describe('community plan', () => {
  it('walks the members and the whole feed; --query walks only the search; --every makes the feed walk pass 1', () => {
    expect(communityJob.plan({ communityId: C }, ctx)).toEqual([
      { kind: 'community-members', params: { communityId: C } },
      { kind: 'community-tweets', params: { communityId: C } },
    ]);
    expect(communityJob.plan({ communityId: C, query: 'coffee OR tea' }, ctx)).toEqual([
      { kind: 'community-search', params: { communityId: C, query: 'coffee OR tea' } },
    ]);
    expect(communityJob.plan({ communityId: C, everySeconds: 600 }, ctx)[1]).toEqual({
      kind: 'community-tweets',
      params: { communityId: C, watermarkId: null, pass: 1 },
    });
  });

  it('a later pass carries the watermark and its number', () => {
    const next = communityJob.passSlice!({ communityId: C, query: 'x', everySeconds: 600 }, { watermarkId: '900', pass: 4, now: ctx.now });
    expect(next).toEqual({ kind: 'community-search', params: { communityId: C, query: 'x', watermarkId: '900', pass: 4 } });
  });

  it('refuses a query the service would refuse before any request', () => {
    expect(() => communityJob.plan({ communityId: C, query: '(coffee' }, ctx)).toThrow(InputError);
    expect(() => communityJob.plan({ communityId: C, query: Array.from({ length: 24 }, (_, i) => `w${i}`).join(' ') }, ctx)).toThrow(/limit of 23/);
  });
});

describe('community feed pages', () => {
  it('a pass stops on the first page that reaches its watermark, not before', () => {
    const p = { communityId: C, watermarkId: '1000', pass: 2 };
    expect(communityTweetsSlice.afterPage!(p, page(['1003', '1002', '1001']), { firstPage: true }).stop).toBeUndefined();
    expect(communityTweetsSlice.afterPage!(p, page(['1001', '1000', '999']), { firstPage: false }).stop).toMatch(/previous pass/);
    // 19-digit ids compare as integers, not as text or floats
    const big = { communityId: C, watermarkId: '9007199254740992', pass: 2 };
    expect(communitySearchSlice.afterPage!(big, page(['9007199254740993']), { firstPage: true }).stop).toBeUndefined();
    expect(communitySearchSlice.afterPage!(big, page(['10000000000000000000', '9007199254740992']), { firstPage: true }).stop).toBeDefined();
  });

  it('a crawl without a watermark walks to the end; an empty first page is noted', () => {
    expect(communityTweetsSlice.afterPage!({ communityId: C }, page(['5', '4']), { firstPage: true })).toEqual({});
    expect(communityTweetsSlice.afterPage!({ communityId: C }, page([]), { firstPage: true }).note).toMatch(/feed was empty/);
    expect(communitySearchSlice.afterPage!({ communityId: C, query: 'x' }, page([]), { firstPage: true }).note).toMatch(/matched/);
  });
});
