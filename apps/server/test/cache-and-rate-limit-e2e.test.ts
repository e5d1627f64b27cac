/**
 * The response cache and the rate limiter through a real `tritium serve` process, as an operator
 * starts them (`--cache-config local,size=...`, `--rate-limit execution_count`,
 * `--rate-limit-resource`): repeated requests over HTTP and gRPC are answered from the cache, the
 * statistics (HTTP JSON and gRPC) and /metrics show Triton's cache figures; and the flags' errors.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcInferenceServerClient, HttpInferenceServerClient, InferInput } from '@tritium/client';
import { parseServeFlags } from '../src/cli/flags.ts';
import { startServeProcess, type ServeProcess } from './support/serve-process.ts';

const CACHED = `name: "cached"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
response_cache { enable: true }
instance_group [ { kind: KIND_CPU count: 2 rate_limiter { resources [ { name: "R" count: 1 } ] priority: 2 } } ]`;

describe('tritium serve with --cache-config and --rate-limit', () => {
  let root: string;
  let serve: ServeProcess;
  let http: HttpInferenceServerClient;
  let grpc: GrpcInferenceServerClient;
  let metricsUrl: string;
  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'tritium-cache-e2e-'));
    mkdirSync(path.join(root, 'cached', '1'), { recursive: true });
    writeFileSync(path.join(root, 'cached', 'config.pbtxt'), CACHED);
    serve = startServeProcess([
      `--model-repository=${root}`,
      '--cache-config',
      'local,size=1048576',
      '--rate-limit=execution_count',
      '--rate-limit-resource=R:1',
    ]);
    const ports = await serve.started;
    http = new HttpInferenceServerClient(`127.0.0.1:${ports.http}`);
    grpc = new GrpcInferenceServerClient(`127.0.0.1:${ports.grpc}`);
    metricsUrl = `http://127.0.0.1:${ports.metrics}/metrics`;
  });
  afterAll(async () => {
    http?.close();
    grpc?.close();
    await serve?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const input = () => new InferInput('INPUT0', [1, 4], 'FP32').setData(new Float32Array([1, 2, 3, 4]));

  it('answers repeats over HTTP and gRPC from the cache, with Triton statistics and metrics', async () => {
    for (let i = 0; i < 2; i++) expect([...(await http.infer('cached', [input()])).asTypedArray('OUTPUT0', 'FP32')]).toEqual([1, 2, 3, 4]);
    expect([...(await grpc.infer('cached', [input()])).asTypedArray('OUTPUT0', 'FP32')]).toEqual([1, 2, 3, 4]);
    const [json] = (await http.getInferenceStatistics('cached')).model_stats;
    expect(Number(json.execution_count)).toBe(1);
    expect(Number(json.inference_stats?.success?.count)).toBe(3);
    expect(Number(json.inference_stats?.cache_hit?.count)).toBe(2);
    expect(Number(json.inference_stats?.cache_miss?.count)).toBe(1);
    const [proto] = (await grpc.getInferenceStatistics('cached')).model_stats;
    expect(Number(proto.inference_stats?.cache_hit?.count)).toBe(2);
    const text = await (await fetch(metricsUrl)).text();
    expect(text).toContain('nv_cache_num_hits_per_model{model="cached",version="1"} 2');
    expect(text).toContain('nv_cache_num_misses_per_model{model="cached",version="1"} 1');
    expect(text).toMatch(/nv_cache_hit_duration_per_model\{model="cached",version="1"\} \d+/);
    expect(text).toContain('nv_inference_count{model="cached",version="1"} 1');
    expect(text).toContain('nv_inference_request_success{model="cached",version="1"} 3');
  });

  it('loads no warning about fields without effect', () => {
    expect(serve.log()).not.toContain('has no effect');
  });
});

describe('cache and rate-limit flags', () => {
  const parse = (...flags: string[]) => parseServeFlags(['--model-repository=/r', ...flags]);

  it("reads Triton's spellings", () => {
    expect(parse('--cache-config=local,size=1048576').responseCacheBytes).toBe(1048576);
    expect(parse('--cache-config', 'local,size=4096').responseCacheBytes).toBe(4096);
    expect(parse('--response-cache-byte-size=2048').responseCacheBytes).toBe(2048);
    expect(parse().responseCacheBytes).toBeUndefined();
    expect(parse('--rate-limit=EXECUTION_COUNT', '--rate-limit-resource=R1:10', '--rate-limit-resource=R2:5:0')).toMatchObject({
      rateLimit: 'execution_count',
      rateLimitResources: [
        { name: 'R1', count: 10 },
        { name: 'R2', count: 5, device: 0 },
      ],
    });
    expect(parse().rateLimit).toBe('off');
  });

  it("refuses what Triton refuses, with its messages, and sizes no cache can use", () => {
    expect(() => parse('--cache-config=size=10')).toThrow('No cache specified. --cache-config option format is <cache name>,<setting>=<value>. Got size=10');
    expect(() => parse('--cache-config=local,size')).toThrow("--cache-config option format is '<cache name>,<setting>=<value>'. Got local,size");
    expect(() => parse('--cache-config=local,size=1048576', '--response-cache-byte-size=10')).toThrow('Incompatible flags --response-cache-byte-size and --cache-config');
    expect(() => parse('--cache-config=memcached,host=localhost')).toThrow("unknown cache 'memcached'");
    expect(() => parse('--cache-config=local,bytes=10')).toThrow("unknown setting 'bytes'");
    expect(() => parse('--cache-config=local,size=12')).toThrow("invalid value for --cache-config local,size: '12' (expected a byte count of at least 1024)");
    expect(() => parse('--cache-config=local,size=-5')).toThrow('--cache-config local,size');
    expect(() => parse('--cache-config=local,size=9007199254740991')).toThrow("is more than this machine's memory");
    expect(() => parse('--rate-limit=sometimes')).toThrow('invalid argument for --rate-limit');
    expect(() => parse('--rate-limit-resource=R')).toThrow("--rate-limit-resource option format is '<resource_name>:<count>:<device>' or '<resource_name>:<count>'. Got R");
    expect(() => parse('--rate-limit-resource=R:x')).toThrow('--rate-limit-resource option format');
    expect(() => parse('--rate-limit-resource=R:1:2:3')).toThrow('--rate-limit-resource option format');
  });
});
