/**
 * Runs once before the suite: fails fast, with the fix, when Postgres or Redis is not reachable,
 * instead of letting every integration test time out.
 */
import net from 'node:net';

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(2000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

export default async function setup(): Promise<void> {
  const pg = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres');
  const redis = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
  const missing: string[] = [];
  if (!(await reachable(pg.hostname, Number(pg.port || 5432)))) missing.push(`Postgres at ${pg.host}`);
  if (!(await reachable(redis.hostname, Number(redis.port || 6379)))) missing.push(`Redis at ${redis.host}`);
  if (missing.length > 0) {
    throw new Error(`tests need ${missing.join(' and ')}; start them (see README "Running the tests")`);
  }
}
