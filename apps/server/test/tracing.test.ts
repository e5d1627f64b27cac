/**
 * Tracing end to end, through the real transports and worker-hosted models:
 * - `--trace-config level=TIMESTAMPS rate=1 triton,file=...`: the trace file read back is Triton's
 *   JSON (per id a model header, then one timestamps entry per activity), ordered, with ensemble
 *   steps as children (parent_id), the HTTP/gRPC frontend timestamps around REQUEST_START/END, and
 *   per model the compute and queue time it shows equal the statistics';
 * - `log-frequency`: `<file>.0`, `<file>.1` as complete arrays;
 * - the trace settings API (HTTP and gRPC): Triton's shapes and errors, `trace_file` refused;
 * - `mode=opentelemetry`: spans exported over OTLP/HTTP to a real endpoint started here and
 *   decoded with the protocol's generated code; a client's W3C traceparent (HTTP header, gRPC
 *   metadata) is the parent of the server's spans; resource attributes as configured.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, existsSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcInferenceServerClient, InferInput, type ModelStatistics, type StatisticDuration } from '@tritium/client';
import type { InferStatistics } from '@tritium/client/proto';
import { parseTraceFlags } from '../src/tracing/trace-config.ts';
import { startTestServer, type TestServer } from './support/start-server.ts';
import { OtlpReceiver } from './support/otlp-receiver.ts';

const SIMPLE = `backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
dynamic_batching { }
instance_group [ { kind: KIND_CPU count: 1 } ]
`;
const ENSEMBLE = (name: string, extra = '') => `name: "${name}"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
${extra}
ensemble_scheduling { step [
  { model_name: "first" model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "mid" } },
  { model_name: "second" model_version: -1 input_map { key: "INPUT0" value: "mid" } output_map { key: "OUTPUT0" value: "OUT" } }
] }`;

function repository(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-trace-repo-'));
  const models: Record<string, string> = {
    first: SIMPLE,
    second: SIMPLE,
    ens: ENSEMBLE('ens'),
    pipe: ENSEMBLE('pipe', 'dynamic_batching { max_queue_delay_microseconds: 20000 }'),
    // Two requests fill its preferred batch: sent together at once.
    pair: ENSEMBLE('pair', 'dynamic_batching { preferred_batch_size: [ 2 ] max_queue_delay_microseconds: 30000000 }'),
  };
  for (const [name, config] of Object.entries(models)) {
    mkdirSync(path.join(dir, name, '1'), { recursive: true });
    writeFileSync(path.join(dir, name, 'config.pbtxt'), config);
  }
  return dir;
}

const input = (name: string, rows = 1) => new InferInput(name, [rows, 4], 'FP32').setData(new Float32Array(rows * 4).fill(1));

type Entry = { id: number; model_name?: string; model_version?: number; request_id?: string; parent_id?: number; timestamps?: { name: string; ns: number }[] };

/** Trace file entries grouped by id: header and ordered [name, ns] timestamps. */
function byId(entries: Entry[]): Map<number, { head?: Entry; ts: [string, number][] }> {
  const out = new Map<number, { head?: Entry; ts: [string, number][] }>();
  for (const e of entries) {
    const t = out.get(e.id) ?? { ts: [] };
    out.set(e.id, t);
    if (e.model_name !== undefined) t.head = e;
    for (const s of e.timestamps ?? []) t.ts.push([s.name, s.ns]);
  }
  return out;
}

const ts = (t: { ts: [string, number][] }, name: string) => t.ts.find(([n]) => n === name)?.[1];

describe('tracing: Triton trace file', () => {
  let dir: string;
  let repo: string;
  let s: TestServer;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-trace-'));
    repo = repository();
    s = await startTestServer({
      modelRepositories: [repo],
      trace: parseTraceFlags({ config: ['level=TIMESTAMPS', 'rate=1', `triton,file=${path.join(dir, 'trace.json')}`] }),
    });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(repo, { recursive: true, force: true });
  });

  it('advertises the trace extension and reports the operator settings', async () => {
    expect((await s.http.getServerMetadata()).extensions).toContain('trace');
    expect(await s.http.getTraceSettings()).toEqual({
      trace_level: ['TIMESTAMPS'],
      trace_rate: '1',
      trace_count: '-1',
      log_frequency: '0',
      trace_file: path.join(dir, 'trace.json'),
      trace_mode: 'triton',
    });
  });

  it('refuses trace_file over HTTP and gRPC, whatever else the request holds, and changes nothing', async () => {
    for (const body of [{ trace_file: '/tmp/x' }, { trace_rate: '5', trace_file: null }] as Record<string, string | null>[]) {
      const e = await s.http.updateTraceSettings(body).catch((x: Error & { status?: string }) => x);
      expect(e).toBeInstanceOf(Error);
      expect((e as Error).message).toContain('trace file location can not be updated through network protocol');
    }
    const g = await s.grpc.updateTraceSettings({ trace_file: ['/etc/passwd'] }).catch((x: Error) => x);
    expect((g as Error).message).toContain('trace file location can not be updated through network protocol');
    expect((await s.http.getTraceSettings())['trace_rate']).toBe('1');
  });

  it('validates settings with Triton messages; per-model settings follow the global ones they did not set', async () => {
    const err = (p: Promise<unknown>) => p.then(() => new Error('no error'), (e: Error) => e.message);
    expect(await err(s.http.updateTraceSettings({ trace_rate: 'abc' }))).toContain("Unable to parse 'trace_rate', got: abc");
    expect(await err(s.http.updateTraceSettings({ trace_count: '-2' }))).toContain("Unable to parse 'trace_count'. Expecting value >= -1");
    expect(await err(s.http.updateTraceSettings({ trace_rate: '0' }))).toContain('Attempting to set invalid trace setting :sample rate must be non-zero');
    expect(await err(s.grpc.updateTraceSettings({ trace_rate: ['1', '2'] }))).toContain("expect only 1 value for 'trace_rate'");
    expect(await err(s.http.updateTraceSettings({ trace_level: ['OFF', 'TIMESTAMPS'] }))).toContain("Expect only one trace level 'OFF' is specified");
    expect(await err(s.http.getTraceSettings('nosuch'))).toContain('Request for unknown model : nosuch');
    // A model's own count; its rate still follows the global one.
    expect(await s.grpc.updateTraceSettings({ trace_count: ['50'] }, 'second')).toMatchObject({ trace_count: ['50'], trace_rate: ['1'] });
    await s.http.updateTraceSettings({ trace_rate: '3' });
    expect((await s.http.getTraceSettings('second'))['trace_rate']).toBe('3');
    await s.http.updateTraceSettings({ trace_rate: null });
    await s.grpc.updateTraceSettings({ trace_count: [] }, 'second');
    expect(await s.http.getTraceSettings('second')).toMatchObject({ trace_rate: '1', trace_count: '-1' });
  });

  it('writes Triton JSON: ordered activities, ensemble children, frontend timestamps, consistent with the statistics', async () => {
    const COMPUTE = ['compute_input', 'compute_infer', 'compute_output'] as const;
    const duration = (m: Record<string, ModelStatistics>, model: string, k: keyof InferStatistics): StatisticDuration => m[model]!.inference_stats![k]!;
    const stats = async (): Promise<Record<string, ModelStatistics>> => Object.fromEntries((await s.http.getInferenceStatistics()).model_stats.map((m) => [m.name, m]));
    const before = await stats();
    await s.http.infer('ens', [input('IN', 2)], { requestId: 'http-1' });
    await s.grpc.infer('first', [input('INPUT0')], { requestId: 'grpc-1' });
    await Promise.all([1, 2, 3].map((i) => s.http.infer('pipe', [input('IN')], { requestId: `pipe-${i}` })));
    const after = await stats();
    await s.close(); // writes the traces and closes the file's array
    const traces = byId(JSON.parse(readFileSync(path.join(dir, 'trace.json'), 'utf8')) as Entry[]);

    const roots = [...traces.values()].filter((t) => t.head && t.head.parent_id === undefined);
    const ens = roots.find((t) => t.head!.request_id === 'http-1')!;
    expect(ens.head).toMatchObject({ model_name: 'ens', model_version: 1 });
    expect(ens.ts.map(([n]) => n)).toEqual(['HTTP_RECV_START', 'HTTP_RECV_END', 'REQUEST_START', 'QUEUE_START', 'REQUEST_END', 'HTTP_SEND_START', 'HTTP_SEND_END']);
    const grpcRoot = roots.find((t) => t.head!.request_id === 'grpc-1')!;
    expect(grpcRoot.ts.map(([n]) => n)).toEqual([
      'GRPC_WAITREAD_END', 'REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END', 'REQUEST_END', 'GRPC_SEND_START', 'GRPC_SEND_END',
    ]);
    // Every trace's timestamps are in order (frontend captures bracket the core's).
    for (const t of traces.values()) for (let i = 1; i < t.ts.length; i++) expect(t.ts[i]![1]).toBeGreaterThanOrEqual(t.ts[i - 1]![1]);

    const ensId = [...traces.entries()].find(([, t]) => t === ens)![0];
    const steps = [...traces.values()].filter((t) => t.head?.parent_id === ensId);
    expect(steps.map((t) => t.head!.model_name)).toEqual(['first', 'second']);
    for (const step of steps) {
      expect(step.ts.map(([n]) => n)).toEqual(['REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END', 'REQUEST_END']);
      expect(ts(step, 'REQUEST_START')!).toBeGreaterThanOrEqual(ts(ens, 'QUEUE_START')!);
      expect(ts(step, 'REQUEST_END')!).toBeLessThanOrEqual(ts(ens, 'REQUEST_END')!);
    }
    // Each pipeline request has its own steps as children (3 requests, 2 steps each).
    const pipeRoots = roots.filter((t) => t.head!.model_name === 'pipe');
    expect(pipeRoots).toHaveLength(3);
    for (const p of pipeRoots) {
      const id = [...traces.entries()].find(([, t]) => t === p)![0];
      expect([...traces.values()].filter((t) => t.head?.parent_id === id).map((t) => t.head!.model_name)).toEqual(['first', 'second']);
    }

    // Every request was traced (rate 1): per model, the traced compute equals the statistics'.
    for (const model of ['first', 'second']) {
      const mine = [...traces.values()].filter((t) => t.head?.model_name === model);
      const traced = mine.reduce((n, t) => n + (ts(t, 'COMPUTE_END')! - ts(t, 'COMPUTE_START')!), 0);
      const stats = COMPUTE.reduce((n, k) => n + duration(after, model, k).ns - duration(before, model, k).ns, 0);
      expect(traced).toBe(stats);
      expect(duration(after, model, 'success').count - duration(before, model, 'success').count).toBe(mine.length);
    }
    // The ensemble's compute is its steps' sum.
    const ensCompute = COMPUTE.reduce((n, k) => n + duration(after, 'ens', k).ns - duration(before, 'ens', k).ns, 0);
    expect(ensCompute).toBe(steps.reduce((n, t) => n + ts(t, 'COMPUTE_END')! - ts(t, 'COMPUTE_START')!, 0));
  }, 60_000);
});

describe('tracing: TENSORS level', () => {
  it("writes Triton's tensor entries (activity, name, data, shape, dtype) beside the timestamps", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-trace-tensors-'));
    const repo = repository();
    const s = await startTestServer({
      modelRepositories: [repo],
      trace: parseTraceFlags({ config: ['level=TIMESTAMPS', 'level=TENSORS', 'rate=1', `triton,file=${path.join(dir, 't.json')}`] }),
    });
    try {
      await s.http.infer('first', [new InferInput('INPUT0', [1, 4], 'FP32').setData(new Float32Array([1, 2.5, 3, 4]))]);
      await s.close();
      const entries = JSON.parse(readFileSync(path.join(dir, 't.json'), 'utf8')) as { activity?: string; tensor?: object }[];
      const tensors = entries.filter((e) => e.activity);
      expect(tensors).toEqual([
        { id: expect.any(Number), activity: 'TENSOR_QUEUE_INPUT', tensor: { name: 'INPUT0', data: '1,2.5,3,4', shape: '1,4', dtype: 'FP32' } },
        { id: expect.any(Number), activity: 'TENSOR_BACKEND_OUTPUT', tensor: { name: 'OUTPUT0', data: '1,2.5,3,4', shape: '1,4', dtype: 'FP32' } },
      ]);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
      rmSync(repo, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('tracing: log-frequency and a planted symlink', () => {
  it('writes <file>.0, <file>.1 as complete arrays and never follows a link at their name', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-trace-freq-'));
    const repo = repository();
    const victim = path.join(dir, 'victim');
    writeFileSync(victim, 'keep');
    symlinkSync(victim, path.join(dir, 't.json.1'));
    const s = await startTestServer({
      modelRepositories: [repo],
      trace: parseTraceFlags({ config: ['level=TIMESTAMPS', 'rate=1', `triton,file=${path.join(dir, 't.json')}`, 'triton,log-frequency=2'] }),
    });
    try {
      for (let i = 0; i < 6; i++) await s.http.infer('first', [input('INPUT0')]);
      await s.close();
      const zero = JSON.parse(readFileSync(path.join(dir, 't.json.0'), 'utf8')) as Entry[];
      expect(new Set(zero.map((e) => e.id)).size).toBe(2);
      expect(readFileSync(victim, 'utf8')).toBe('keep');
      expect(s.logs()).toContain('failed creating trace file');
      expect(existsSync(path.join(dir, 't.json.2'))).toBe(true);
      expect(existsSync(path.join(dir, 't.json'))).toBe(false);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
      rmSync(repo, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('tracing: OpenTelemetry over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let repo: string;
  let s: TestServer;
  beforeAll(async () => {
    receiver = new OtlpReceiver();
    const url = await receiver.start();
    repo = repository();
    s = await startTestServer({
      modelRepositories: [repo],
      trace: parseTraceFlags(
        { config: ['mode=opentelemetry', 'level=TIMESTAMPS', 'rate=0', `opentelemetry,url=${url}`, 'opentelemetry,resource=service.name=tritium-test', 'opentelemetry,resource=deployment=ci'] },
        {},
      ),
    });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    await receiver?.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it('continues the client trace (traceparent over HTTP and gRPC metadata) with Triton spans; rate 0 traces only those', async () => {
    const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpan = '00f067aa0ba902b7';
    await s.http.infer('first', [input('INPUT0')]); // no context, rate 0: not traced
    await s.http.infer('ens', [input('IN')], { requestId: 'otel-http', headers: { traceparent: `00-${clientTrace}-${clientSpan}-01` } });
    const grpcTrace = '0af7651916cd43dd8448eb211c80319c';
    const g = new GrpcInferenceServerClient(s.grpcUrl, { headers: { traceparent: `00-${grpcTrace}-b7ad6b7169203331-01` } });
    await g.infer('first', [input('INPUT0')], { requestId: 'otel-grpc' });
    g.close();
    await s.server.context.tracing.flush();
    await expect.poll(() => receiver.spans.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(9);
    expect(receiver.contentTypes[0]).toBe('application/x-protobuf');

    const spans = receiver.spans.filter((x) => x.traceId === clientTrace);
    const root = spans.find((x) => x.name === 'InferRequest')!;
    expect(root.parentSpanId).toBe(clientSpan);
    expect(root.events.map((e) => e.name)).toEqual(['HTTP_RECV_START', 'HTTP_RECV_END', 'HTTP_SEND_START', 'HTTP_SEND_END']);
    expect(root.resource).toMatchObject({ 'service.name': 'tritium-test', deployment: 'ci' });
    expect(root.scope).toBe('triton-server');
    const ens = spans.find((x) => x.name === 'ens')!;
    expect(ens.parentSpanId).toBe(root.spanId);
    expect(ens.attributes).toMatchObject({ 'triton.model_name': 'ens', 'triton.model_version': 1, 'triton.request_id': 'otel-http', 'triton.trace_parent_id': 0 });
    expect(ens.events.map((e) => e.name)).toEqual(['REQUEST_START', 'QUEUE_START', 'REQUEST_END']);
    const steps = spans.filter((x) => x.parentSpanId === ens.spanId);
    expect(steps.map((x) => x.name).sort()).toEqual(['first', 'second']);
    for (const step of steps) {
      expect(step.attributes['triton.trace_parent_id']).toBe(ens.attributes['triton.trace_id']);
      const compute = spans.find((x) => x.parentSpanId === step.spanId && x.name === 'compute')!;
      expect(compute.events.map((e) => e.name)).toEqual(['COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END']);
      expect(compute.startNs).toBeGreaterThanOrEqual(step.startNs);
      expect(compute.endNs).toBeLessThanOrEqual(step.endNs);
    }
    const grpcRoot = receiver.spans.find((x) => x.traceId === grpcTrace && x.name === 'InferRequest')!;
    expect(grpcRoot.parentSpanId).toBe('b7ad6b7169203331');
    expect(receiver.spans.find((x) => x.traceId === grpcTrace && x.name === 'first')?.attributes['triton.request_id']).toBe('otel-grpc');
    // The untraced request left nothing: every span belongs to one of the two client traces.
    expect(new Set(receiver.spans.map((x) => x.traceId))).toEqual(new Set([clientTrace, grpcTrace]));
  }, 60_000);

  it('links the request spans of a pipeline batch', async () => {
    const ids = ['11111111111111111111111111111111', '22222222222222222222222222222222'];
    await Promise.all(ids.map((t) => s.http.infer('pair', [input('IN')], { headers: { traceparent: `00-${t}-00f067aa0ba902b7-01` } })));
    await s.server.context.tracing.flush();
    await expect.poll(() => receiver.spans.filter((x) => ids.includes(x.traceId) && x.name === 'pair').length, { timeout: 20_000 }).toBe(2);
    const [a, b] = ids.map((t) => receiver.spans.find((x) => x.traceId === t && x.name === 'pair')!);
    // Each carried request has the steps under its own span; the two were one batch and say so.
    expect(a!.links).toEqual([{ traceId: b!.traceId, spanId: b!.spanId }]);
    expect(b!.links).toEqual([{ traceId: a!.traceId, spanId: a!.spanId }]);
    for (const p of [a!, b!]) expect(receiver.spans.filter((x) => x.parentSpanId === p.spanId).map((x) => x.name).sort()).toEqual(['first', 'second']);
  }, 60_000);
});
