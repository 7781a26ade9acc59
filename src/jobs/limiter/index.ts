export { createRedisGate, RedisGate } from './redis-gate.ts';
export type { FetchUsage, KeyState, LimiterStats, QuotaSyncResult, RedisGateOptions, RedisGrant, Usage } from './redis-gate.ts';
export { DEFAULT_KEY_NAMESPACE, keyNamespaceFor } from './namespace.ts';
export { BudgetExhaustedError, KeysRefusedError, QuotaExhaustedError } from './errors.ts';
export { LimiterStateLostError } from './state-lost.ts';
