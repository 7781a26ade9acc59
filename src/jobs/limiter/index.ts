export { createRedisGate, RedisGate } from './redis-gate.ts';
export type { KeyState, QuotaSyncResult, RedisGateOptions, RedisGrant, Usage } from './redis-gate.ts';
export { BudgetExhaustedError, KeysRefusedError, QuotaExhaustedError } from './errors.ts';
