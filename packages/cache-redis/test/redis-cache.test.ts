/**
 * The Redis response cache against a real redis-server: Triton's entry layout, bounded entries,
 * credentials, and outages (killed, frozen, down at start) that turn into misses, counted, never
 * into errors; the cache answers again once Redis is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { Logger, Tensor } from '@tritium/core';
import { RedisResponseCache } from '../src/index.ts';
import { REDIS_SKIP_REASON, redisServerPath, startRedisServer, type RedisServer } from '../src/testing/index.ts';

const available = redisServerPath() !== undefined;
if (!available) console.warn(`skipping the Redis cache tests: ${REDIS_SKIP_REASON}`);

const f32 = (name: string, values: number[]): Tensor => ({ name, datatype: 'FP32', shape: [1, values.length], data: new Uint8Array(Float32Array.from(values).buffer) });

function recordingLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const add = (level: string) => (m: string) => void lines.push(`${level}: ${m}`);
  return { lines, info: add('I'), warn: add('W'), error: add('E'), verbose: add('V') } as unknown as Logger & { lines: string[] };
}

const waitFor = async (what: () => Promise<boolean>, ms = 10_000): Promise<void> => {
  const until = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe.skipIf(!available)('RedisResponseCache on a real redis-server', () => {
  let redis: RedisServer;
  let raw: Redis;
  beforeAll(async () => {
    redis = await startRedisServer();
    raw = new Redis({ host: '127.0.0.1', port: redis.port, lazyConnect: true });
    await raw.connect();
  });
  afterAll(async () => {
    raw?.disconnect();
    await redis?.stop();
  });

  const open = (extra: Record<string, string> = {}, log?: Logger) =>
    RedisResponseCache.open({ host: '127.0.0.1', port: String(redis.port), ...extra }, log ? { log } : {});

  it("stores a response as Triton's hash and returns a copy of it", async () => {
    const cache = await open();
    try {
      const outputs = [f32('OUT', [1, 2, 3]), { name: 'S', datatype: 'BYTES' as const, shape: [1], data: Uint8Array.of(2, 0, 0, 0, 104, 105) }];
      expect(await cache.insert('k1', { outputs, parameters: { p: 'x', n: 3, big: 2n ** 60n } })).toBe('inserted');
      const fields = (await raw.hkeys('k1')).sort();
      expect(fields).toEqual(['0:b', '0:i', '0:s', '0:t', '1:b', '1:i', '1:s', '1:t']);
      expect(await raw.hget('k1', '0:t')).toBe('0');
      expect(Number(await raw.hget('k1', '0:s'))).toBe((await raw.hgetBuffer('k1', '0:b'))!.length);
      const hit = await cache.lookup('k1');
      expect(hit?.outputs.map((t) => [t.name, t.datatype, t.shape])).toEqual([
        ['OUT', 'FP32', [1, 3]],
        ['S', 'BYTES', [1]],
      ]);
      expect([...new Float32Array(hit!.outputs[0]!.data.slice().buffer)]).toEqual([1, 2, 3]);
      expect(hit?.parameters).toEqual({ p: 'x', n: 3, big: 2n ** 60n });
      expect(await cache.lookup('absent')).toBeUndefined();
      expect(cache.errors()).toEqual({ lookup: 0, insert: 0 });
    } finally {
      await cache.close();
    }
  });

  it('opens with TLS settings but no tls_enabled=true, as Triton, warning that they do nothing', async () => {
    const log = recordingLog();
    const cache = await open({ cacert: '/nowhere/ca.pem' }, log);
    try {
      expect(await cache.insert('plain', { outputs: [f32('OUT', [1])] })).toBe('inserted');
      expect(log.lines).toContain('W: --cache-config redis,cacert has no effect without --cache-config redis,tls_enabled=true (Triton ignores it too)');
    } finally {
      await cache.close();
    }
  });

  it('keeps no entry over max_entry_bytes and serves none that a writer made larger', async () => {
    const cache = await open({ max_entry_bytes: '2048' });
    try {
      expect(await cache.insert('big', { outputs: [f32('OUT', new Array(1024).fill(1))] })).toBe('too-large');
      expect(await raw.exists('big')).toBe(0);
      await raw.hset('forged', { '0:b': Buffer.alloc(10_000), '0:s': '10000', '0:t': '0', '0:i': '0' });
      expect(await cache.lookup('forged')).toBeUndefined();
      await raw.hset('short', { '0:b': Buffer.from([5, 0, 0, 0]), '0:s': '4', '0:t': '0', '0:i': '0' });
      expect(await cache.lookup('short')).toBeUndefined();
      await raw.hset('partial', { '0:b': Buffer.from([0, 0, 0, 0]), '0:s': '4' });
      expect(await cache.lookup('partial')).toBeUndefined();
      expect(cache.errors().lookup).toBe(3);
    } finally {
      await cache.close();
    }
  });

  it('turns a killed Redis into counted misses and answers again once it is back', async () => {
    const log = recordingLog();
    const cache = await open({}, log);
    try {
      await cache.insert('before', { outputs: [f32('OUT', [1])] });
      await redis.kill();
      expect(await cache.lookup('before')).toBeUndefined();
      expect(await cache.insert('during', { outputs: [f32('OUT', [2])] })).toBe('failed');
      expect(cache.errors().lookup).toBeGreaterThanOrEqual(1);
      expect(cache.errors().insert).toBe(1);
      expect(log.lines.filter((l) => l.startsWith('W: redis cache')).length).toBe(1);
      await redis.restart();
      await waitFor(async () => (await cache.insert('after', { outputs: [f32('OUT', [3])] })) === 'inserted');
      expect((await cache.lookup('after'))?.outputs[0]?.name).toBe('OUT');
      expect(log.lines.some((l) => l.startsWith('I: redis cache is answering again'))).toBe(true);
    } finally {
      await cache.close();
      raw.disconnect();
      raw = new Redis({ host: '127.0.0.1', port: redis.port });
    }
  });

  it('answers a frozen Redis as a miss once socket_timeout passes', async () => {
    const cache = await open({ socket_timeout: '200' });
    try {
      await cache.insert('frozen', { outputs: [f32('OUT', [1])] });
      redis.freeze();
      expect(await cache.lookup('frozen')).toBeUndefined();
      expect(cache.errors().lookup).toBe(1);
    } finally {
      redis.resume();
      await cache.close();
    }
  });

  it('starts while Redis is down, with a warning, and caches once it is up', async () => {
    const log = recordingLog();
    await redis.kill();
    const cache = await open({}, log);
    try {
      expect(log.lines.some((l) => /^W: redis cache at 127\.0\.0\.1:\d+ is unreachable/.test(l))).toBe(true);
      expect(await cache.lookup('x')).toBeUndefined();
      await redis.restart();
      await waitFor(async () => (await cache.insert('up', { outputs: [f32('OUT', [1])] })) === 'inserted');
    } finally {
      await cache.close();
    }
  });
});

describe.skipIf(!available)('RedisResponseCache credentials', () => {
  let redis: RedisServer;
  beforeAll(async () => (redis = await startRedisServer(['--requirepass', 'sekret'])));
  afterAll(async () => redis?.stop());

  it('refuses to open with a wrong or missing password, in Triton words', async () => {
    const base = { host: '127.0.0.1', port: String(redis.port) };
    await expect(RedisResponseCache.open({ ...base, password: 'nope' })).rejects.toThrow(/^Failed to initialize RedisCache: WRONGPASS/);
    await expect(RedisResponseCache.open(base, { env: {} })).rejects.toThrow(/^Failed to initialize RedisCache: NOAUTH/);
  });

  it('takes the password from TRITONCACHE_REDIS_PASSWORD, the setting winning over it', async () => {
    const base = { host: '127.0.0.1', port: String(redis.port) };
    const fromEnv = await RedisResponseCache.open(base, { env: { TRITONCACHE_REDIS_PASSWORD: 'sekret' } });
    expect(await fromEnv.insert('k', { outputs: [f32('OUT', [1])] })).toBe('inserted');
    await fromEnv.close();
    await expect(RedisResponseCache.open({ ...base, password: 'nope' }, { env: { TRITONCACHE_REDIS_PASSWORD: 'sekret' } })).rejects.toThrow(/WRONGPASS/);
  });
});
