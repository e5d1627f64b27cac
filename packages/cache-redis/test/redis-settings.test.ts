/** Triton's `--cache-config redis,...` settings: names, defaults, the credential variables, and refusals naming the setting. */
import { describe, expect, it } from 'vitest';
import { MISSING_ADDRESS, parseRedisSettings } from '../src/index.ts';

const base = { host: 'redis', port: '6379' };

describe('parseRedisSettings', () => {
  it("takes Triton's settings with bounded defaults", () => {
    expect(parseRedisSettings(base, {})).toEqual({
      host: 'redis',
      port: 6379,
      db: 0,
      connectTimeoutMs: 1000,
      socketTimeoutMs: 500,
      poolSize: 1,
      waitTimeoutMs: 1000,
      maxEntryBytes: 1048576,
    });
    const all = parseRedisSettings(
      { ...base, user: 'u', password: 'p', db: '3', connect_timeout: '250', socket_timeout: '75', pool_size: '4', wait_timeout: '10', tls_enabled: 'true', cert: '/c', key: '/k', cacert: '/ca', cacert_dir: '/d', sni: 'redis.example' },
      {},
    );
    expect(all).toMatchObject({ user: 'u', password: 'p', db: 3, connectTimeoutMs: 250, socketTimeoutMs: 75, poolSize: 4, waitTimeoutMs: 10 });
    expect(all.tls).toEqual({ cert: '/c', key: '/k', cacert: '/ca', cacertDir: '/d', sni: 'redis.example' });
  });

  it('reads credentials from the environment unless the settings give them', () => {
    const env = { TRITONCACHE_REDIS_USERNAME: 'envuser', TRITONCACHE_REDIS_PASSWORD: 'envpass' };
    expect(parseRedisSettings(base, env)).toMatchObject({ user: 'envuser', password: 'envpass' });
    expect(parseRedisSettings({ ...base, password: 'flag' }, env)).toMatchObject({ user: 'envuser', password: 'flag' });
  });

  it('accepts TLS settings without tls_enabled=true as Triton does, as ignored', () => {
    expect(parseRedisSettings({ ...base, cacert: '/ca', sni: 'r' }, {})).toMatchObject({ ignored: ['cacert', 'sni'] });
    const off = parseRedisSettings({ ...base, tls_enabled: 'false', cert: '/c' }, {});
    expect([off.tls, off.ignored]).toEqual([undefined, ['cert']]);
  });

  it('refuses, naming the setting', () => {
    expect(() => parseRedisSettings({ host: 'redis' }, {})).toThrow(MISSING_ADDRESS);
    expect(() => parseRedisSettings({ port: '1' }, {})).toThrow("didn't specify address");
    expect(() => parseRedisSettings({ ...base, port: '70000' }, {})).toThrow("invalid value for --cache-config redis,port: '70000'");
    expect(() => parseRedisSettings({ ...base, socket_timeout: '0' }, {})).toThrow(/redis,socket_timeout: '0'.*0 \(wait forever\) is refused/);
    expect(() => parseRedisSettings({ ...base, connect_timeout: '0' }, {})).toThrow('redis,connect_timeout');
    expect(() => parseRedisSettings({ ...base, pool_size: '1000' }, {})).toThrow("redis,pool_size: '1000' (expected an integer from 1 to 64");
    expect(() => parseRedisSettings({ ...base, tls_enabled: 'yes' }, {})).toThrow("redis,tls_enabled: 'yes' (expected true or false)");
    expect(() => parseRedisSettings({ ...base, tls_enabled: 'true', cert: '/c' }, {})).toThrow('cert and key go together');
    expect(() => parseRedisSettings({ ...base, max_entry_bytes: '10' }, {})).toThrow('redis,max_entry_bytes');
    expect(() => parseRedisSettings({ ...base, ttl: '5' }, {})).toThrow("unknown setting 'ttl' for the redis cache");
  });
});
