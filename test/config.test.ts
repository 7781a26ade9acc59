import { describe, expect, it } from 'vitest';
import { isLoopbackHost, loadConfig, parseBaseUrl, requireApiKeys } from '../src/config.ts';
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
  });

  it('splits keys and names them only by fingerprint', () => {
    const config = loadConfig({ HARVEST_API_KEYS: ' k1, k2 ,' });
    expect(config.apiKeys.map((k) => k.key)).toEqual(['k1', 'k2']);
    expect(config.apiKeys[0]?.fingerprint).toBe(keyFingerprint('k1'));
    expect(config.apiKeys[0]?.fingerprint).not.toContain('k1');
    expect(() => loadConfig({ HARVEST_API_KEYS: 'k1,k1' })).toThrow(/twice/);
  });

  it('rejects a malformed rate with the variable named', () => {
    expect(() => loadConfig({ HARVEST_RATE_PER_KEY: 'fast' })).toThrow(/HARVEST_RATE_PER_KEY/);
    expect(() => loadConfig({ HARVEST_RATE_PER_KEY: '0' })).toThrow(ConfigError);
  });
});
