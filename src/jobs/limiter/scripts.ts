/**
 * Registers the limiter's Lua on an ioredis connection (defineCommand: EVALSHA with a fallback to
 * EVAL) and turns the raw replies into typed values. Only this file knows the scripts' argument order.
 */
import type { RedisConnection } from '../redis-keys.ts';
import type { KeyRedisNames } from './key-layout.ts';
import { ACQUIRE_LUA, ADMIN_LUA, GIVE_BACK_LUA, REPORT_LUA, SYNC_DUE_LUA, SYNC_QUOTA_LUA } from './lua.ts';

type ScriptFn = (numKeys: number, ...args: string[]) => Promise<unknown>;

const NAMES = {
  acquire: 'harvestLimiterAcquire',
  report: 'harvestLimiterReport',
  syncQuota: 'harvestLimiterSyncQuota',
  syncDue: 'harvestLimiterSyncDue',
  admin: 'harvestLimiterAdmin',
  giveBack: 'harvestLimiterGiveBack',
} as const;

const SOURCES: Record<keyof typeof NAMES, string> = {
  acquire: ACQUIRE_LUA,
  report: REPORT_LUA,
  syncQuota: SYNC_QUOTA_LUA,
  syncDue: SYNC_DUE_LUA,
  admin: ADMIN_LUA,
  giveBack: GIVE_BACK_LUA,
};

export type AcquireMode = 'watch' | 'backfill' | 'sync';

export type { KeyRedisNames };

export interface AcquireCall {
  mode: AcquireMode;
  /** The watch waiter id: one per process line of watches (see ACQUIRE_LUA). */
  waiter: string;
  /** A watch with more watches queued behind it: stay registered after this call. */
  keep: boolean;
  watchWaiting: string;
  /** Budget key of the job, or null for none. */
  budget: string | null;
  /** 'present': spend the budget when the key exists; 'expected': refuse ('lost') when it does not. */
  budgetMode: 'present' | 'expected';
  /** Epoch key that must exist for a grant, or null to not check. */
  epoch: string | null;
  /** This process's once hash: a call ioredis resends answers its first grant (ONCE in lua.ts). */
  once: string;
  keys: readonly KeyRedisNames[];
  ratePerKey: number;
  headroomMs: number;
  headroomCapMs: number;
  /** How far ahead of a slot a grant may be taken. */
  lookaheadMs: number;
  /** How far ahead of a key's next slot the line is told to ask again (the gate passes at most lookaheadMs; see ACQUIRE_LUA). */
  leadMs: number;
  reserve: number;
  waiterTtlMs: number;
  recheckMs: number;
  stateTtlMs: number;
}

export type AcquireReply =
  | {
      kind: 'ok';
      fingerprint: string;
      delayMs: number;
      grantedBefore: number;
      quotaUnknown: boolean;
      slotAt: number;
      /** The granted key's consecutive 429s when granted. */
      strikes: number;
      /** Keys with a slot within the lookahead now, the one just granted included (more calls may go at once). */
      ready: number;
      /** When to ask for the earliest slot of the keys that are not ready, from now; null: ask at once (every live key is ready, or none is live). */
      nextMs: number | null;
    }
  | { kind: 'wait'; waitMs: number }
  | { kind: 'exhausted'; retryAt: Date | null }
  | { kind: 'budget' }
  /** The deployment's schedule is gone from Redis (no epoch, or no budget where one is expected). */
  | { kind: 'lost'; what: 'epoch' | 'budget' }
  /** A backfill must keep the watch reserve, and every key it could use has an unknown quota. */
  | { kind: 'unknown'; fingerprints: string[] };

export interface LimiterScripts {
  acquire(call: AcquireCall): Promise<AcquireReply>;
  /** Returns the time the key cools or parks until, when the status did that. */
  report(key: KeyRedisNames, status: number, headroomMs: number, recheckMs: number, headroomCapMs: number): Promise<Date | null>;
  /** Returns the remaining quota stored. */
  syncQuota(
    key: KeyRedisNames,
    remaining: number,
    grantedBefore: number,
    validUntil: Date | null,
    recheckMs: number,
    stateTtlMs: number,
  ): Promise<number>;
  /** Whether the periodic sync asks the service for this key now (SYNC_DUE_LUA). */
  syncDue(key: KeyRedisNames, intervalMs: number, idleMs: number): Promise<boolean>;
  /** Returns an unused grant's quota unit, and its job's budget unit when `budget` names one (once: see AcquireCall). */
  giveBack(key: KeyRedisNames, budget: string | null, once: string): Promise<void>;
  unpark(key: KeyRedisNames): Promise<void>;
  /** Lifts a 401's disable (ADMIN_LUA 'enable'). */
  enable(key: KeyRedisNames): Promise<void>;
  setQuota(key: KeyRedisNames, remaining: number | null): Promise<void>;
}

function commandOf(redis: RedisConnection, name: string): ScriptFn {
  const fn = (redis as unknown as Record<string, ScriptFn | undefined>)[name];
  if (typeof fn !== 'function') throw new Error(`limiter script ${name} is not registered`);
  return fn.bind(redis);
}

function num(value: unknown): number {
  const n = Number(value);
  if (!Number.isFinite(n)) throw new Error(`limiter script answered a non-number: ${String(value)}`);
  return n;
}

/** Milliseconds (ours) to whole microseconds (the scripts'), rounded up so intervals never shrink. */
function us(ms: number): string {
  return String(Math.ceil(ms * 1000));
}

/** A script's microsecond epoch time as a Date, rounded up to the next millisecond. */
function dateOf(micros: unknown): Date {
  return new Date(Math.ceil(num(micros) / 1000));
}

function parseAcquire(raw: unknown): AcquireReply {
  const reply = Array.isArray(raw) ? (raw as unknown[]) : [];
  switch (reply[0]) {
    case 'ok':
      return {
        kind: 'ok',
        fingerprint: String(reply[1]),
        delayMs: num(reply[2]) / 1000,
        grantedBefore: num(reply[3]),
        quotaUnknown: num(reply[4]) === 1,
        slotAt: num(reply[5]) / 1000,
        strikes: num(reply[6]),
        ready: num(reply[7]),
        nextMs: reply[8] === '' || reply[8] === undefined ? null : num(reply[8]) / 1000,
      };
    case 'wait':
      return { kind: 'wait', waitMs: num(reply[1]) / 1000 };
    case 'exhausted':
      return { kind: 'exhausted', retryAt: reply[1] ? dateOf(reply[1]) : null };
    case 'budget':
      return { kind: 'budget' };
    case 'lost':
      return { kind: 'lost', what: reply[1] === 'budget' ? 'budget' : 'epoch' };
    case 'unknown':
      return { kind: 'unknown', fingerprints: reply.slice(1).map(String) };
    default:
      throw new Error(`limiter script answered an unknown reply: ${JSON.stringify(raw)}`);
  }
}

/** Defines the scripts on `redis` (once per connection) and returns typed callers. */
export function defineLimiterScripts(redis: RedisConnection): LimiterScripts {
  for (const [id, name] of Object.entries(NAMES) as [keyof typeof NAMES, string][]) {
    if (typeof (redis as unknown as Record<string, unknown>)[name] !== 'function') {
      redis.defineCommand(name, { lua: SOURCES[id] });
    }
  }
  const acquire = commandOf(redis, NAMES.acquire);
  const report = commandOf(redis, NAMES.report);
  const syncQuota = commandOf(redis, NAMES.syncQuota);
  const syncDue = commandOf(redis, NAMES.syncDue);
  const admin = commandOf(redis, NAMES.admin);
  const giveBack = commandOf(redis, NAMES.giveBack);
  // The spending calls' sequence numbers (ONCE in lua.ts): one run per number, however often sent.
  let seq = 0;

  return {
    async acquire(call) {
      const keyNames = call.keys.flatMap((k) => [k.state, k.quota]);
      const raw = await acquire(
        4 + keyNames.length,
        call.watchWaiting,
        // Unused names keep KEYS positions fixed when the acquire spends no budget / checks no epoch
        // (derived from watch-waiting, so on a cluster they share its hash slot).
        call.budget ?? `${call.watchWaiting}:no-budget`,
        call.epoch ?? `${call.watchWaiting}:no-epoch`,
        call.once,
        ...keyNames,
        call.mode,
        call.waiter,
        String(call.ratePerKey),
        us(call.headroomMs),
        us(call.headroomCapMs),
        us(call.lookaheadMs),
        String(call.reserve),
        call.budget === null ? '0' : call.budgetMode === 'expected' ? '2' : '1',
        call.epoch === null ? '0' : '1',
        us(call.waiterTtlMs),
        us(call.recheckMs),
        String(Math.ceil(call.stateTtlMs)),
        call.keep ? '1' : '0',
        us(call.leadMs),
        String(++seq),
        ...call.keys.map((k) => k.fingerprint),
      );
      return parseAcquire(raw);
    },
    async report(key, status, headroomMs, recheckMs, headroomCapMs) {
      const raw = await report(2, key.state, key.quota, String(status), us(headroomMs), us(recheckMs), us(headroomCapMs));
      const at = Array.isArray(raw) ? (raw as unknown[])[1] : '';
      return at ? dateOf(at) : null;
    },
    async syncQuota(key, remaining, grantedBefore, validUntil, recheckMs, stateTtlMs) {
      const raw = await syncQuota(
        2,
        key.state,
        key.quota,
        String(Math.floor(remaining)),
        String(grantedBefore),
        validUntil ? us(validUntil.getTime()) : '',
        us(recheckMs),
        String(Math.ceil(stateTtlMs)),
      );
      return num(raw);
    },
    async syncDue(key, intervalMs, idleMs) {
      return num(await syncDue(2, key.state, key.quota, us(intervalMs), us(idleMs))) === 1;
    },
    async giveBack(key, budget, once) {
      // A name derived from the quota's keeps the hash slot when there is no budget (see acquire).
      await giveBack(3, key.quota, budget ?? `${key.quota}:no-budget`, once, String(++seq));
    },
    async unpark(key) {
      await admin(2, key.state, key.quota, 'unpark', '');
    },
    async enable(key) {
      await admin(2, key.state, key.quota, 'enable', '');
    },
    async setQuota(key, remaining) {
      await admin(2, key.state, key.quota, 'set', remaining === null ? '' : String(Math.max(0, Math.floor(remaining))));
    },
  };
}
