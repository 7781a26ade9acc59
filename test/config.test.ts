import { describe, expect, it } from 'vitest';
import { userInfo } from 'node:os';
import { isLoopbackHost, loadConfig, parseBaseUrl, redisAddresses, requireApiKeys, resolveDatabaseUrl } from '../src/config.ts';
import { describeTarget } from '../src/store/db.ts';
import { ConfigError } from '../src/errors.ts';
import { keyFingerprint } from '../src/key-fingerprint.ts';

describe('config', () => {
  it('defaults to the real service over https', () => {
    const config = loadConfig({});
    expect(config.baseUrl).toBe('https://api.sorsa.io');
    expect(config.ratePerKey).toBe(20);
    expect(config.apiKeys).toEqual([]);
    expect(() => requireApiKeys(config)).toThrow(/HARVEST_API_KEYS is not set/);
  });

  it('accepts plain http only on loopback hosts', () => {
    expect(parseBaseUrl('http://127.0.0.1:8787')).toBe('http://127.0.0.1:8787');
    expect(parseBaseUrl('http://localhost:8787/')).toBe('http://localhost:8787');
    expect(parseBaseUrl('http://[::1]:8787')).toBe('http://[::1]:8787');
    expect(() => parseBaseUrl('http://api.sorsa.io')).toThrow(ConfigError);
    expect(() => parseBaseUrl('http://10.0.0.1')).toThrow(/https/);
    expect(() => parseBaseUrl('https://api.sorsa.io/v3')).toThrow(/version segment/);
    expect(isLoopbackHost('127.8.9.10')).toBe(true);
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
    // A *.localhost name may go to DNS: the key would travel in clear to wherever it points.
    expect(isLoopbackHost('api.evil.localhost')).toBe(false);
    expect(() => parseBaseUrl('http://api.evil.localhost')).toThrow(ConfigError);
  });

  it('refuses a blank or malformed HARVEST_WATCH_RESERVE instead of reading it as 0', () => {
    expect(loadConfig({}).watchReserve).toBe(200);
    expect(loadConfig({ HARVEST_WATCH_RESERVE: '0' }).watchReserve).toBe(0);
    expect(loadConfig({ HARVEST_WATCH_RESERVE: ' 50 ' }).watchReserve).toBe(50);
    for (const bad of ['', '  ', '-1', '1.5', 'lots']) {
      expect(() => loadConfig({ HARVEST_WATCH_RESERVE: bad }), bad).toThrow(/HARVEST_WATCH_RESERVE/);
    }
  });

  it('splits keys and names them only by fingerprint', () => {
    const config = loadConfig({ HARVEST_API_KEYS: ' k1, k2 ,' });
    expect(config.apiKeys.map((k) => k.key)).toEqual(['k1', 'k2']);
    expect(config.apiKeys[0]?.fingerprint).toBe(keyFingerprint('k1'));
    expect(config.apiKeys[0]?.fingerprint).not.toContain('k1');
    expect(() => loadConfig({ HARVEST_API_KEYS: 'k1,k1' })).toThrow(/twice/);
  });

  it('refuses an API key with an invisible character, and a time-out past what a timer can hold', () => {
    expect(() => loadConfig({ HARVEST_API_KEYS: 'k1,ab\u200bcd' }, { dotenv: false })).toThrow(/not visible ASCII/);
    expect(() => loadConfig({ HARVEST_API_KEYS: 'k\u00071' }, { dotenv: false })).toThrow(/not visible ASCII/);
    for (const name of ['HARVEST_REQUEST_DEADLINE_MS', 'HARVEST_REQUEST_TIMEOUT_MS', 'HARVEST_LOCK_DURATION_MS', 'HARVEST_QUOTA_RECHECK_MS']) {
      expect(() => loadConfig({ [name]: '9999999999' }, { dotenv: false }), name).toThrow(new RegExp(`${name}.*at most 2147483647 ms`));
      expect(loadConfig({ [name]: '2147483647' }, { dotenv: false }), name).toBeTruthy();
    }
  });

  it('a HARVEST_BASE_URL that does not parse is refused without quoting it (it may hold a password)', () => {
    expect(() => parseBaseUrl('https://user:secretpw@host:99999')).toThrow('HARVEST_BASE_URL is not a URL (https://host[:port][/path])');
  });

  it('rejects a malformed rate with the variable named', () => {
    expect(() => loadConfig({ HARVEST_RATE_PER_KEY: 'fast' })).toThrow(/HARVEST_RATE_PER_KEY/);
    expect(() => loadConfig({ HARVEST_RATE_PER_KEY: '0' })).toThrow(ConfigError);
  });

  it('puts libpq\'s default user into a DATABASE_URL that names none: PGUSER, else USER, else the OS user', () => {
    expect(resolveDatabaseUrl('postgres://db.example:5433/h', { PGUSER: 'pgu', USER: 'u' })).toBe('postgres://pgu@db.example:5433/h');
    expect(resolveDatabaseUrl('postgres://db.example/h', { USER: 'u' })).toBe('postgres://u@db.example/h');
    expect(resolveDatabaseUrl('postgres://db.example/h', {})).toBe(`postgres://${encodeURIComponent(userInfo().username)}@db.example/h`);
    expect(resolveDatabaseUrl('postgres://ann:pw@db.example/h', { PGUSER: 'pgu' })).toBe('postgres://ann:pw@db.example/h');
    expect(loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/x', USER: 'carol' }).databaseUrl).toBe('postgres://carol@127.0.0.1/x');
  });

  it('a host-less DATABASE_URL takes PGHOST and the user as query options, and messages name that host', () => {
    const url = resolveDatabaseUrl('postgres:///h', { PGHOST: '/var/run/postgresql', PGUSER: 'pgu' });
    expect(new URL(url).searchParams.get('host')).toBe('/var/run/postgresql');
    expect(new URL(url).searchParams.get('user')).toBe('pgu');
    expect(describeTarget(url)).toBe('/var/run/postgresql:5432/h');
  });

  it('rejects a DATABASE_URL that is not a postgres URL', () => {
    expect(() => loadConfig({ DATABASE_URL: 'not a url' })).toThrow(/DATABASE_URL is not a URL/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://h/db' })).toThrow(/postgres:\/\//);
  });

  it('refuses a malformed REDIS_URL as malformed, in one line that never quotes it (it may hold a password)', () => {
    const refusal = (value: string, cluster = false): string => {
      try {
        redisAddresses(value, cluster);
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(refusal('redis://:s3cret@:::bad')).toBe('REDIS_URL is not an address (redis://[:password@]host:port[/db], or host:port)');
    expect(refusal('http://:s3cret@redis.internal:6379')).toBe('REDIS_URL must start with redis:// or rediss://');
    expect(refusal('s3cret-scheme://redis.internal:6379')).toBe('REDIS_URL must start with redis:// or rediss://');
    expect(refusal('redis://10.0.0.1:7000,redis://10.0.0.2:7000')).toMatch(/several addresses: set HARVEST_REDIS_CLUSTER=true/);
    expect(refusal('')).toBe('REDIS_URL names no Redis (redis://host:port)');
    // ioredis would read these as something else: a socket path, an invalid URL.
    expect(refusal('host:6379/2')).toBe('REDIS_URL has a path but no scheme, which reads as a socket: write redis://host:port/db');
    expect(refusal('redis:/host')).toMatch(/^REDIS_URL has a path but no scheme/);
    expect(refusal('redis://h:1,')).toMatch(/several addresses/);
    // What ioredis takes: URLs, host:port without a scheme, IPv6, a Unix socket.
    for (const accepted of ['redis://127.0.0.1:6379', 'redis://host', 'rediss://:pw@cache.example:6380/2', 'redis://[::1]:6379',
      'localhost:6379', '127.0.0.1:6379', 'redis-host', '//host:6379', 'admin:s3cret@host:6379', '6379', '/var/run/redis/redis.sock', '/tmp/r.sock?db=2']) {
      expect(refusal(accepted), accepted).toBe('accepted');
    }
    expect(refusal('redis://10.0.0.1:7000,redis://10.0.0.2:7000', true)).toBe('accepted');
    // A path that is no database number (ioredis sent SELECT NaN: a stack trace), a raw % in a password.
    expect(refusal('redis://127.0.0.1:6379/harvest')).toBe("REDIS_URL's path must be a database number (redis://host:port/0)");
    expect(refusal('redis://:50%off@127.0.0.1:6379')).toBe('REDIS_URL has a user or password that is not URL-encoded (write % as %25)');
    // Checked when Redis is opened, not when the configuration is read: export and migrate need Postgres only.
    expect(loadConfig({ REDIS_URL: 'http://x' }, { dotenv: false }).redisUrl).toBe('http://x');
  });

  it('reads only the environment it is given', () => {
    const config = loadConfig({ HARVEST_RATE_PER_KEY: '7', REDIS_URL: 'redis://10.1.2.3:6379' });
    expect(config.ratePerKey).toBe(7);
    expect(config.redisUrl).toBe('redis://10.1.2.3:6379');
    expect(config.logLevelSet).toBe(false);
  });
});
