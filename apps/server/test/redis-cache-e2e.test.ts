/**
 * Replicas that share a response cache: two `tritium serve` processes started with Triton's
 * `--cache-config redis,host=...,port=...` against a real redis-server. A response one replica
 * computed is a hit on the other; Redis killed while both serve a steady load fails no request
 * (lookups become misses, counted in tritium_response_cache_errors_total, one warning); a wrong
 * password fails the start in Triton's words.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpInferenceServerClient, InferInput } from '@tritium/client';
import { REDIS_SKIP_REASON, redisServerPath, startRedisServer, type RedisServer } from '@tritium/cache-redis/testing';
import { parseServeFlags } from '../src/cli/flags.ts';
import { startServeProcess, type ServeProcess } from './support/serve-process.ts';

const available = redisServerPath() !== undefined;
if (!available) console.warn(`skipping the Redis replica tests: ${REDIS_SKIP_REASON}`);

const CACHED = `name: "cached"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
response_cache { enable: true }`;

const input = (v: number) => new InferInput('INPUT0', [1, 4], 'FP32').setData(new Float32Array([v, v + 1, v + 2, v + 3]));

async function stats(client: HttpInferenceServerClient): Promise<{ hits: number; misses: number; executions: number }> {
  const [s] = (await client.getInferenceStatistics('cached')).model_stats;
  return { hits: Number(s.inference_stats?.cache_hit?.count), misses: Number(s.inference_stats?.cache_miss?.count), executions: Number(s.execution_count) };
}

describe.skipIf(!available)('two tritium serve replicas sharing --cache-config redis', () => {
  let root: string;
  let redis: RedisServer;
  const replicas: ServeProcess[] = [];
  const clients: HttpInferenceServerClient[] = [];
  const metricsUrls: string[] = [];
  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'tritium-redis-e2e-'));
    mkdirSync(path.join(root, 'cached', '1'), { recursive: true });
    writeFileSync(path.join(root, 'cached', 'config.pbtxt'), CACHED);
    redis = await startRedisServer();
    for (let i = 0; i < 2; i++) {
      replicas.push(startServeProcess([`--model-repository=${root}`, '--cache-config', 'redis,host=127.0.0.1', '--cache-config', `redis,port=${redis.port}`]));
    }
    for (const r of replicas) {
      const ports = await r.started;
      clients.push(new HttpInferenceServerClient(`127.0.0.1:${ports.http}`));
      metricsUrls.push(`http://127.0.0.1:${ports.metrics}/metrics`);
    }
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all(replicas.map((r) => r.stop()));
    await redis?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('answers on one replica from what the other computed', async () => {
    const [a, b] = clients as [HttpInferenceServerClient, HttpInferenceServerClient];
    expect([...(await a.infer('cached', [input(1)])).asTypedArray('OUTPUT0', 'FP32')]).toEqual([1, 2, 3, 4]);
    // The miss's insert completes after the answer: wait until B sees it.
    let hit = false;
    for (let i = 0; i < 50 && !hit; i++) {
      expect([...(await b.infer('cached', [input(1)])).asTypedArray('OUTPUT0', 'FP32')]).toEqual([1, 2, 3, 4]);
      hit = (await stats(b)).hits === 1;
      if (!hit) await new Promise((r) => setTimeout(r, 20));
    }
    expect(hit).toBe(true);
    expect(await stats(a)).toMatchObject({ misses: 1, executions: 1 });
    const sb = await stats(b);
    expect(sb.hits).toBe(1);
    expect(sb.executions).toBe(sb.misses);
    expect(replicas[0]!.log()).toMatch(/redis cache at 127\.0\.0\.1:\d+ connected/);
  });

  it('loses no request when Redis is killed mid-load, and counts the failed lookups', async () => {
    let sent = 0;
    const failures: unknown[] = [];
    const load = async (client: HttpInferenceServerClient, until: Promise<void>): Promise<void> => {
      let done = false;
      void until.then(() => (done = true));
      while (!done) {
        const v = sent++ % 16;
        const reply = await client.infer('cached', [input(v)]).catch((e: unknown) => void failures.push(e));
        if (reply) expect([...reply.asTypedArray('OUTPUT0', 'FP32')]).toEqual([v, v + 1, v + 2, v + 3]);
      }
    };
    let stopLoad!: () => void;
    const stop = new Promise<void>((r) => (stopLoad = r));
    const running = clients.flatMap((c) => [load(c, stop), load(c, stop)]);
    while (sent < 100) await new Promise((r) => setTimeout(r, 10));
    await redis.kill();
    const killedAt = sent;
    while (sent < killedAt + 200) await new Promise((r) => setTimeout(r, 10));
    stopLoad();
    await Promise.all(running);
    expect(failures).toEqual([]);
    const text = await (await fetch(metricsUrls[0]!)).text();
    const lookups = /tritium_response_cache_errors_total\{cache="redis",operation="lookup"\} (\d+)/.exec(text);
    expect(Number(lookups?.[1])).toBeGreaterThan(0);
    const warnings = replicas[0]!.log().split('\n').filter((l) => l.includes('redis cache') && l.includes('W'));
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.length).toBeLessThanOrEqual(3);
    await redis.restart();
  });
});

describe.skipIf(!available)('tritium serve --cache-config redis refused', () => {
  let redis: RedisServer;
  beforeAll(async () => (redis = await startRedisServer(['--requirepass', 'sekret'])));
  afterAll(async () => redis?.stop());

  it('fails the start on a wrong password, in Triton words', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'tritium-redis-auth-'));
    try {
      const serve = startServeProcess([`--model-repository=${root}`, '--cache-config=redis,host=127.0.0.1', `--cache-config=redis,port=${redis.port}`, '--cache-config=redis,password=nope']);
      expect(await serve.exited).toBe(1);
      expect(serve.log()).toContain('Failed to initialize RedisCache: WRONGPASS');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('--cache-config redis flags', () => {
  const parse = (...flags: string[]) => parseServeFlags(['--model-repository=/r', ...flags]);

  it("collects Triton's repeated settings and allows one cache", () => {
    expect(parse('--cache-config=redis,host=redis', '--cache-config', 'redis,port=6379').redisCache).toEqual({ host: 'redis', port: '6379' });
    expect(parse('--cache-config=redis,host=redis').responseCacheBytes).toBeUndefined();
    expect(() => parse('--cache-config=redis,host=r', '--cache-config=local,size=4096')).toThrow(
      'found multiple cache configurations, but only a single cache is currently supported',
    );
  });
});
