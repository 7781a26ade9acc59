export { createRedisGate, DEFAULT_KEY_NAMESPACE, keyNamespaceFor, RedisGate } from './redis-gate.ts';
export type { FetchUsage, KeyState, QuotaSyncResult, RedisGateOptions, RedisGrant, Usage } from './redis-gate.ts';
export { BudgetExhaustedError, KeysRefusedError, QuotaExhaustedError } from './errors.ts';
export { LimiterStateLostError } from './state-lost.ts';
