/**
 * Triton's restricted APIs: `--http-restricted-api=<apis>:<header>=<value>` and
 * `--grpc-restricted-protocol=<protocols>:<key>=<value>`. Without the header: HTTP 403
 * `This API is restricted, expecting header '<header>'`; gRPC UNAVAILABLE
 * `This protocol is restricted, expecting header 'triton-grpc-protocol-<key>'` (server:src/http_server.cc,
 * src/grpc/grpc_server.cc). Unrestricted categories stay open.
 */
import { Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcInferenceServerClient, HttpInferenceServerClient, InferInput, InferenceServerException } from '@tritium/client';
import { plainCodec } from '@tritium/client/proto';
import { parseServeFlags } from '../../src/cli/flags.ts';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let s: TestServer;
beforeAll(async () => {
  const o = parseServeFlags([
    '--model-repository=unused',
    '--http-restricted-api=model-repository,logging,shared-memory,trace:admin-key=s3cret',
    '--http-restricted-api=inference:infer-key=letmein',
    '--grpc-restricted-protocol=model-repository,logging,shared-memory,trace,health:admin-key=s3cret',
    '--grpc-restricted-protocol=inference:infer-key=letmein',
  ]);
  s = await startTestServer(
    {
      httpRestrictedApi: o.httpRestrictedApi,
      grpcRestrictedProtocol: o.grpcRestrictedProtocol,
      modelControlMode: 'explicit',
      loadModels: ['*'],
    },
    undefined,
    ['simple'],
  );
});
afterAll(async () => {
  await s?.close();
});

const HTTP_ADMIN = "This API is restricted, expecting header 'admin-key'";
const GRPC_ADMIN = "This protocol is restricted, expecting header 'triton-grpc-protocol-admin-key'";
const input = () => new InferInput('INPUT0', [1, 2], 'FP32').setData(Float32Array.of(1, 2));

async function failure(p: Promise<unknown>): Promise<InferenceServerException> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(InferenceServerException);
  return e as InferenceServerException;
}

describe('HTTP --http-restricted-api', () => {
  it.each([
    ['POST', '/v2/repository/index'],
    ['POST', '/v2/repository/models/simple/unload'],
    ['POST', '/v2/repository/models/simple/load'],
    ['GET', '/v2/logging'],
    ['POST', '/v2/logging'],
    ['GET', '/v2/systemsharedmemory/status'],
    ['POST', '/v2/systemsharedmemory/region/r/register'],
    ['GET', '/v2/cudasharedmemory/status'],
    ['GET', '/v2/trace/setting'],
    ['GET', '/v2/models/simple/trace/setting'],
    // Before the method check, as Triton: a wrong method on a restricted path is still 403.
    ['DELETE', '/v2/logging'],
  ])('%s %s without the header → 403 with Triton\'s message', async (method, path) => {
    const res = await s.http.request(method, path, method === 'POST' ? '{}' : undefined);
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body.toString())).toEqual({ error: HTTP_ADMIN });
  });

  it('a wrong value, or the value repeated, is refused; the exact header passes', async () => {
    expect((await s.http.request('GET', '/v2/logging', undefined, { 'admin-key': 'wrong' })).status).toBe(403);
    expect((await s.http.request('GET', '/v2/logging', undefined, { 'admin-key': ['s3cret', 's3cret'] as unknown as string })).status).toBe(403);
    expect((await s.http.request('GET', '/v2/logging', undefined, { 'Admin-Key': 's3cret' })).status).toBe(200);
    const admin = new HttpInferenceServerClient(s.httpUrl, { headers: { 'admin-key': 's3cret' } });
    try {
      expect((await admin.getModelRepositoryIndex()).map((m: { name: string; state: string }) => [m.name, m.state])).toEqual([['simple', 'READY']]);
      expect(await admin.getSystemSharedMemoryStatus()).toEqual([]);
    } finally {
      admin.close();
    }
  });

  it('inference has its own key; unrestricted categories (health, metadata, config, statistics) stay open', async () => {
    const e = await failure(s.http.infer('simple', [input()]));
    expect(e.status).toBe('403');
    expect(e.message).toBe("This API is restricted, expecting header 'infer-key'");
    // The admin key does not open inference.
    const res = await s.http.request('POST', '/v2/models/simple/infer', '{}', { 'admin-key': 's3cret' });
    expect(res.status).toBe(403);
    const ok = await s.http.infer('simple', [input()], { headers: { 'infer-key': 'letmein' } });
    expect(Array.from(ok.asTypedArray('OUTPUT0', 'FP32'))).toEqual([1, 2]);
    expect(await s.http.isServerReady()).toBe(true);
    expect((await s.http.getModelMetadata('simple')).name).toBe('simple');
    expect((await s.http.getModelConfig('simple')).name).toBe('simple');
    expect((await s.http.getInferenceStatistics()).model_stats.length).toBe(1);
  });
});

describe('gRPC --grpc-restricted-protocol', () => {
  it('each restricted RPC without the metadata → UNAVAILABLE with Triton\'s message', async () => {
    const calls: [string, Promise<unknown>][] = [
      ['RepositoryIndex', s.grpc.getModelRepositoryIndex()],
      ['RepositoryModelUnload', s.grpc.unloadModel('simple')],
      ['LogSettings', s.grpc.getLogSettings()],
      ['SystemSharedMemoryStatus', s.grpc.getSystemSharedMemoryStatus()],
      ['CudaSharedMemoryStatus', s.grpc.getCudaSharedMemoryStatus()],
      ['TraceSetting', s.grpc.getTraceSettings()],
      ['ServerLive', s.grpc.isServerLive()],
      ['ServerReady', s.grpc.isServerReady()],
      ['ModelReady', s.grpc.isModelReady('simple')],
    ];
    for (const [name, call] of calls) {
      const e = await failure(call);
      expect([name, e.status, e.message]).toEqual([name, 'StatusCode.UNAVAILABLE', GRPC_ADMIN]);
    }
    // Nothing was unloaded.
    expect(s.api.modelReady('simple')).toBe(true);
  });

  it('grpc.health.v1 Check is health too', async () => {
    const c = new Client(s.grpcUrl, credentials.createInsecure());
    const req = plainCodec('grpc.health.v1.HealthCheckRequest');
    const res = plainCodec('grpc.health.v1.HealthCheckResponse');
    const check = (md: Metadata) =>
      new Promise<ServiceError | unknown>((resolve) =>
        c.makeUnaryRequest('/grpc.health.v1.Health/Check', req.encode, res.decode, { service: '' }, md, (err: ServiceError | null, v?: unknown) => resolve(err ?? v)),
      );
    const refused = (await check(new Metadata())) as ServiceError;
    expect([refused.code, refused.details]).toEqual([14, GRPC_ADMIN]);
    const md = new Metadata();
    md.set('triton-grpc-protocol-admin-key', 's3cret');
    expect(await check(md)).toEqual({ status: 'SERVING' });
    c.close();
  });

  it('inference: unary and streaming need their key; metadata and config stay open', async () => {
    const unary = await failure(s.grpc.infer('simple', [input()]));
    expect([unary.status, unary.message]).toEqual(['StatusCode.UNAVAILABLE', "This protocol is restricted, expecting header 'triton-grpc-protocol-infer-key'"]);
    const streamErrors: string[] = [];
    const done = new Promise<void>((resolve) =>
      s.grpc.startStream((_r, e) => {
        if (e) streamErrors.push(e.message);
        resolve();
      }),
    );
    s.grpc.asyncStreamInfer('simple', [input()]);
    await done;
    await s.grpc.stopStream();
    expect(streamErrors).toEqual(["This protocol is restricted, expecting header 'triton-grpc-protocol-infer-key'"]);
    expect((await s.grpc.getModelMetadata('simple')).name).toBe('simple');
    expect((await s.grpc.getModelConfig('simple')).config?.name).toBe('simple');
  });

  it('a client with the metadata gets through', async () => {
    const admin = new GrpcInferenceServerClient(s.grpcUrl, { headers: { 'triton-grpc-protocol-admin-key': 's3cret', 'triton-grpc-protocol-infer-key': 'letmein' } });
    try {
      expect(await admin.isServerReady()).toBe(true);
      expect((await admin.getModelRepositoryIndex()).map((m: { name: string }) => m.name)).toEqual(['simple']);
      const out = await admin.infer('simple', [input()]);
      expect(Array.from(out.asTypedArray('OUTPUT0', 'FP32'))).toEqual([1, 2]);
      const streamed = await new Promise<number[]>((resolve, reject) => {
        admin.startStream((r, e) => (e ? reject(e) : resolve(Array.from(r!.asTypedArray('OUTPUT0', 'FP32')))));
        admin.asyncStreamInfer('simple', [input()]);
      });
      expect(streamed).toEqual([1, 2]);
      await admin.stopStream();
    } finally {
      admin.close();
    }
  });
});

describe('flag parsing (Triton\'s words)', () => {
  it.each([
    ['--http-restricted-api=logging', "--http-restricted-api option format is '<config name>:<setting>=<value>'. Got logging"],
    ['--http-restricted-api=logging:key=', "--http-restricted-api option format is '<config name>:<setting>=<value>'. Got logging:key="],
    ['--http-restricted-api=logs:k=v', "unknown restricted api 'logs'"],
    ['--grpc-restricted-protocol=inference,bogus:k=v', "unknown restricted protocol 'bogus'"],
  ])('%s → %s', (flag, message) => {
    expect(() => parseServeFlags(['--model-repository=m', flag])).toThrow(message);
  });

  it('a category in two groups is refused', () => {
    expect(() => parseServeFlags(['--model-repository=m', '--grpc-restricted-protocol=trace:a=1', '--grpc-restricted-protocol=trace,logging:b=2'])).toThrow(
      "restricted protocol 'trace' can not be specified in multiple config groups",
    );
  });

  it('values may contain ":" and "=" after the first "="', () => {
    const o = parseServeFlags(['--model-repository=m', '--http-restricted-api=health:x-token=a=b:c']);
    expect(o.httpRestrictedApi).toEqual({ health: { header: 'x-token', value: 'a=b:c' } });
  });
});
