/**
 * The parents walk of `harvest conversations` ends without a request when nothing is missing; that
 * empty page must not be reported as "no missing parent was returned (deleted or protected)".
 */
import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api-client/client.ts';
import type { SliceContext } from '../../src/jobs/kind.ts';
import { conversationParentsSlice } from '../../src/jobs/kinds/conversations.ts';
import { silentLogger as logger } from '../../src/logger.ts';
import type { Queryable } from '../../src/store/db.ts';

const nothingMissing: Queryable = { query: async () => ({ rows: [], rowCount: 0 }) } as unknown as Queryable;
const noRequests = new Proxy({}, { get: () => () => Promise.reject(new Error('no request expected')) }) as ApiClient;

describe('conversation-parents walk', () => {
  it('ends with no request and no note when no parent is missing', async () => {
    const ctx: SliceContext = {
      client: noRequests,
      db: nothingMissing,
      call: { signal: new AbortController().signal, priority: 'backfill', jobId: '1' },
      sliceId: '1',
      logger,
    };
    const p = conversationParentsSlice.params.parse({ sourceJobId: '7' });
    const page = await conversationParentsSlice.fetchPage(p, null, ctx);
    expect(page.itemCount).toBe(0);
    expect(page.nextCursor).toBeNull();
    expect(conversationParentsSlice.afterPage?.(p, page, { firstPage: true })).toEqual({});
  });

  it('an empty answer to a real request is still noted', () => {
    const p = conversationParentsSlice.params.parse({ sourceJobId: '7' });
    const answered = { endpoint: 'POST /v3/tweet-info-bulk', tweets: [], users: [], nextCursor: null, quarantined: [], itemCount: 0 };
    expect(conversationParentsSlice.afterPage?.(p, answered, { firstPage: true })).toEqual({ note: expect.stringMatching(/deleted or protected/) });
  });
});
