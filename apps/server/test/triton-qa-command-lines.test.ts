/**
 * tritonserver command lines as Triton's own QA writes them (server repository, qa/<L0_*>/test.sh,
 * swept for the flags Tritium takes): each value form Triton accepts is accepted with the same
 * meaning, each it refuses is refused with Triton's words, and one of those command lines starts
 * `tritium serve` and exports its traces to the scheme-less OTLP URL it names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpInferenceServerClient, InferInput } from '@tritium/client';
import { parseServeFlags } from '../src/cli/flags.ts';
import { OtlpReceiver } from './support/otlp-receiver.ts';
import { makeRepository, type TestRepository } from './support/repository.ts';
import { startServeProcess, type ServeProcess } from './support/serve-process.ts';

const serve = (...flags: string[]) => parseServeFlags(['--model-repository=/models', ...flags]);

describe('value forms found in Triton QA command lines', () => {
  it('reads --model-control-mode in any case (L0_iterative_sequence, L0_model_namespacing)', () => {
    expect(serve('--model-control-mode=EXPLICIT').modelControlMode).toBe('explicit');
    expect(serve('--model-control-mode=POLL', '--repository-poll-secs=2').modelControlMode).toBe('poll');
    expect(serve('--model-control-mode', 'explicit', '--load-model=simple').loadModels).toEqual(['simple']);
  });

  it('takes an unambiguous prefix of a flag, as getopt_long does (L0_logging: --log-warn="false")', () => {
    expect(serve('--log-warn=false').logWarning).toBe(false);
    expect(serve('--log-warn', 'false').logWarning).toBe(false);
    expect(serve('--model-repo=/other').modelRepositories).toEqual(['/models', '/other']);
    expect(() => serve('--log=1')).toThrow(/^option '--log' is ambiguous; possibilities: '--log-info' .*'--log-verbose'/);
    expect(() => serve('--nope')).toThrow("unrecognized flag '--nope'");
  });

  it("parses booleans as Triton's ParseOption<bool> does, with = or a space (L0_sagemaker, L0_lifecycle, L0_buffer_attributes)", () => {
    const o = serve('--allow-grpc', 'false', '--allow-http', 'true', '--allow-metrics', 'FALSE', '--exit-on-error=false', '--strict-readiness=On', '--allow-client-shm=1');
    expect([o.allowGrpc, o.allowHttp, o.allowMetrics, o.exitOnError, o.strictReadiness, o.allowClientShm]).toEqual([false, true, false, false, true, true]);
    expect(serve('--strict-model-config=false').strictModelConfig).toBe(false);
    expect(() => serve('--exit-on-error=maybe')).toThrow("invalid value for --exit-on-error: 'maybe'");
  });

  it('reads --log-verbose as a level or a boolean (Triton\'s ParseIntBoolOption)', () => {
    expect(serve('--log-verbose=1').logVerbose).toBe(1);
    expect(serve('--log-verbose', '2').logVerbose).toBe(2);
    expect(serve('--log-verbose=true').logVerbose).toBe(1);
    expect(serve('--log-verbose=FALSE').logVerbose).toBe(0);
  });

  it('takes ports and sizes after a space (L0_lifecycle: --http-port 8003 --metrics-port 8004)', () => {
    const o = serve('--grpc-port', '8003', '--http-port', '8004', '--metrics-port', '8005', '--exit-timeout-secs', '5');
    expect([o.grpcPort, o.httpPort, o.metricsPort, o.exitTimeoutSecs]).toEqual([8003, 8004, 8005, 5]);
    expect(serve('--model-store=/store').modelRepositories).toEqual(['/models', '/store']);
  });

  it('reads an OTLP URL without a scheme as http:// (L0_trace: url=localhost:$OTLP_PORT/v1/traces)', () => {
    const o = serve('--trace-config=mode=opentelemetry', '--trace-config=opentelemetry,url=localhost:4318/v1/traces');
    expect(o.trace.otel.url).toBe('http://localhost:4318/v1/traces');
    expect(serve('--trace-config', 'opentelemetry,url=https://collector:4318/v1/traces').trace.otel.url).toBe('https://collector:4318/v1/traces');
    expect(() => serve('--trace-config=opentelemetry,url=grpc://collector:4317')).toThrow('OTLP/HTTP needs an http:// or https:// URL');
  });

  it('starts with a queue smaller than the default export batch (L0_trace: bsp_max_queue_size=1)', () => {
    const o = serve('--trace-config', 'opentelemetry,bsp_max_queue_size=1');
    expect([o.trace.otel.bspMaxQueueSize, o.trace.otel.bspMaxExportBatchSize]).toEqual([1, 512]);
  });

  it('takes --trace-config settings after a space or an = (L0_trace, L0_cmdline_trace)', () => {
    const spaced = serve('--trace-config', 'mode=triton', '--trace-config', 'triton,file=./trace', '--trace-config', 'rate=1', '--trace-config', 'level=TIMESTAMPS');
    const joined = serve('--trace-config=mode=triton', '--trace-config=triton,file=./trace', '--trace-config=rate=1', '--trace-config=level=TIMESTAMPS');
    expect(spaced.trace).toEqual(joined.trace);
    expect([joined.trace.file, joined.trace.rate, joined.trace.level.timestamps]).toEqual(['./trace', 1, true]);
  });

  it('refuses what Triton QA expects refused, in its words', () => {
    expect(() => serve('--trace-config', 'opentelemetry,bsp_max_queue_size=bad_value')).toThrow('Bad option: "--trace-config opentelemetry,bsp_max_queue_size"');
    expect(() => serve('--trace-config', 'opentelemetry,bsp_schedule_delay=bad_value')).toThrow('Bad option: "--trace-config opentelemetry,bsp_schedule_delay"');
    expect(() => serve('--grpc-restricted-protocol=model-reposit,health:k1=v1')).toThrow("unknown restricted protocol 'model-reposit'");
    expect(() => serve('--http-restricted-api=model-reposit,health:k1=v1')).toThrow("unknown restricted api 'model-reposit'");
    expect(() => serve('--http-restricted-api=model-repository,health:k1=v1', '--http-restricted-api=metadata,health:k2=v2')).toThrow(
      "restricted api 'health' can not be specified in multiple config groups",
    );
    expect(() => serve('--http-max-input-size=0')).toThrow("invalid value for --http-max-input-size: '0'");
    expect(() => serve('--http-max-input-size=-1024')).toThrow("invalid value for --http-max-input-size: '-1024'");
  });
});

describe("tritium serve with L0_trace's OpenTelemetry command line", () => {
  let receiver: OtlpReceiver;
  let repo: TestRepository;
  let server: ServeProcess;
  beforeAll(async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    repo = makeRepository(['simple']);
    server = startServeProcess([
      `--model-repository=${repo.dir}`,
      '--model-control-mode=EXPLICIT',
      '--load-model=simple',
      '--log-warn=false',
      '--trace-config=level=TIMESTAMPS',
      '--trace-config=rate=1',
      '--trace-config=count=-1',
      '--trace-config=mode=opentelemetry',
      `--trace-config=opentelemetry,url=localhost:${receiver.port}/v1/traces`,
      '--trace-config',
      'opentelemetry,bsp_max_queue_size=1',
      '--trace-config',
      'opentelemetry,bsp_schedule_delay=0',
    ]);
    await server.started;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
    repo?.remove();
  });

  it('starts, serves and exports spans to the URL without a scheme', async () => {
    const ports = await server.started;
    const client = new HttpInferenceServerClient(`127.0.0.1:${ports.http}`);
    const result = await client.infer('simple', [new InferInput('INPUT0', [1, 2], 'FP32').setData(new Float32Array([1, 2]))]);
    expect(Array.from(result.asTypedArray('OUTPUT0', 'FP32'))).toEqual([1, 2]);
    await expect.poll(() => receiver.spans.length, { timeout: 20_000 }).toBeGreaterThan(0);
    expect(server.log()).toContain(`exporting OTLP/HTTP (protobuf) to http://localhost:${receiver.port}/v1/traces`);
  }, 60_000);
});
