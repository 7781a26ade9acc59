/**
 * Test-control routes under /_sim/: no key, loopback callers only. They drive the same control
 * object the in-process API exposes, so a test in another process can do what an in-process one can.
 */
import { z } from 'zod';
import type { SimulatorControl } from './options.ts';
import type { World } from './model.ts';
import { SimHttpError, badRequest } from './http-utils.ts';
import { catalog } from './world/catalog.ts';

const rate = z.number().min(0).max(1);
const faultsSchema = z
  .object({
    errorRate500: rate,
    burst429: z.object({ everyMs: z.number().int().positive(), durationMs: z.number().int().nonnegative() }).nullable(),
    emptyPageRate: rate,
    emptyEndRate: rate,
    repeatCursorAfterPages: z.number().int().positive().nullable(),
    slowRate: rate,
    slowMs: z.number().int().nonnegative(),
  })
  .partial()
  .strict();

const quirksSchema = z
  .object({
    legacyTimestamps: z.boolean(),
    explicitNulls: z.boolean(),
    extraFields: z.boolean(),
    shortPages: z.boolean(),
    v2Gone: z.boolean(),
    malformedBodyEmpty: z.boolean(),
    expandedText: z.boolean(),
    integerCursors: z.boolean(),
    zeroEndCursors: z.boolean(),
    pinnedHead: z.boolean(),
    searchDefaultOrder: z.enum(['latest', 'popular']),
    usageAllotment: z.boolean(),
    retweetsPath: z.boolean(),
  })
  .partial()
  .strict();

const tweetSpec = z.object({
  authorHandle: z.string().min(1),
  text: z.string(),
  createdAtMs: z.number().int().positive().optional(),
  lang: z.string().optional(),
  inReplyToId: z.string().regex(/^\d+$/).optional(),
  quotedId: z.string().regex(/^\d+$/).optional(),
  likes: z.number().int().nonnegative().optional(),
  retweets: z.number().int().nonnegative().optional(),
  replies: z.number().int().nonnegative().optional(),
  communityId: z.string().regex(/^\d+$/).optional(),
});
const tweetsSchema = z.union([z.array(tweetSpec), z.object({ tweets: z.array(tweetSpec) })]);

const quotaSchema = z.object({
  key: z.string().min(1),
  remaining: z.number().int().nonnegative(),
  validUntil: z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'validUntil must be an ISO 8601 timestamp').optional(),
});
const keySchema = z.object({ key: z.string().min(1), quota: z.number().int().nonnegative().optional() });

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (!r.success) throw badRequest(z.prettifyError(r.error).replace(/\n/g, '; '));
  return r.data;
}

export interface AdminDeps {
  world: World;
  control: SimulatorControl;
  faults: () => unknown;
  quirks: () => unknown;
}

/** Answers an admin route, or throws SimHttpError (404 for an unknown /_sim path). */
export function handleAdmin(method: string, path: string, body: unknown, deps: AdminDeps): unknown {
  const { control } = deps;
  switch (`${method} ${path}`) {
    case 'GET /_sim/catalog':
      return catalog(deps.world);
    case 'POST /_sim/tweets': {
      const parsed = parse(tweetsSchema, body);
      const specs = Array.isArray(parsed) ? parsed : parsed.tweets;
      try {
        return { ids: control.addTweets(specs) };
      } catch (error) {
        throw badRequest(error instanceof Error ? error.message : String(error));
      }
    }
    case 'POST /_sim/quota': {
      const q = parse(quotaSchema, body);
      control.setQuota(q.key, q.remaining, q.validUntil);
      return { ok: true };
    }
    case 'POST /_sim/keys': {
      const k = parse(keySchema, body);
      control.addKey(k.key, k.quota);
      return { ok: true };
    }
    case 'DELETE /_sim/keys': {
      control.removeKey(parse(keySchema, body).key);
      return { ok: true };
    }
    case 'GET /_sim/requests':
      return { requests: control.requestLog() };
    case 'DELETE /_sim/requests': {
      const cleared = control.requestLog().length;
      control.clearRequestLog();
      return { cleared };
    }
    case 'POST /_sim/faults':
      control.setFaults(parse(faultsSchema, body));
      return { faults: deps.faults() };
    case 'POST /_sim/quirks':
      control.setQuirks(parse(quirksSchema, body));
      return { quirks: deps.quirks() };
    case 'GET /_sim/stats':
      return control.stats();
    default:
      throw new SimHttpError(404, `no such simulator route: ${method} ${path}`);
  }
}
