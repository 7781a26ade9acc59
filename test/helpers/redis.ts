/** Where tests find Redis (TEST_REDIS_URL, else the local default); every test works under its own prefix. */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
