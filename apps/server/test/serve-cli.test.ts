/** `tritium serve` as a user runs it: flags, Triton log lines with the bound ports, SIGTERM exit. */
import { spawn } from 'node:child_process';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HttpInferenceServerClient } from '@tritium/client';
import { FlagError, parseServeFlags, serveFlagNames } from '../src/cli/flags.ts';
import { formatLogLine } from '../src/logging/triton-log.ts';
import { serverOptionRows } from '../src/server-options-table.ts';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/tritium.mjs');

describe('serve flags', () => {
  it('parses tritonserver flags in both spellings, repeatable repositories, backend-config', () => {
    const o = parseServeFlags([
      '--model-repository=/a',
      '--model-store',
      '/b',
      '--model-control-mode=explicit',
      '--load-model',
      'x',
      '--load-model=y',
      '--http-port',
      '0',
      '--grpc-port=9001',
      '--allow-metrics=false',
      '--strict-readiness',
      'false',
      '--exit-on-error=false',
      '--log-verbose=2',
      '--log-format',
      'ISO8601',
      '--backend-config=onnxruntime,default-max-batch-size=8',
      '--backend-config=python,shm=1',
      '--allow-client-shm',
      '--http-max-input-size=1024',
    ]);
    expect(o).toMatchObject({
      modelRepositories: ['/a', '/b'],
      modelControlMode: 'explicit',
      loadModels: ['x', 'y'],
      httpPort: 0,
      grpcPort: 9001,
      metricsPort: 8002,
      allowMetrics: false,
      strictReadiness: false,
      exitOnError: false,
      logVerbose: 2,
      logFormat: 'ISO8601',
      allowClientShm: true,
      httpMaxInputSize: 1024,
      backendConfig: { onnxruntime: { 'default-max-batch-size': '8' }, python: { shm: '1' } },
    });
  });

  it('rejects bad flags with a message naming them', () => {
    expect(() => parseServeFlags([])).toThrow('--model-repository must be specified');
    expect(() => parseServeFlags(['--model-repository=a', '--http-port=70000'])).toThrow(/--http-port/);
    expect(() => parseServeFlags(['--model-repository=a', '--nope'])).toThrow("unrecognized flag '--nope'");
    expect(() => parseServeFlags(['--model-repository=a', '--model-control-mode=always'])).toThrow(FlagError);
    expect(() => parseServeFlags(['--model-repository=a', '--load-model=x'])).toThrow(/explicit/);
  });

  it('takes the sandbox flags: --model-log-rate (bytes per second, 65536 by default) and --strict-sandbox', () => {
    expect(parseServeFlags(['--model-repository=a'])).toMatchObject({ modelLogRate: 65536, strictSandbox: false });
    expect(parseServeFlags(['--model-repository=a', '--model-log-rate=0', '--strict-sandbox'])).toMatchObject({ modelLogRate: 0, strictSandbox: true });
    expect(() => parseServeFlags(['--model-repository=a', '--model-log-rate=-1'])).toThrow("invalid value for --model-log-rate: '-1' (expected an integer >= 0)");
    expect(() => parseServeFlags(['--model-repository=a', '--strict-sandbox=maybe'])).toThrow("invalid value for --strict-sandbox: 'maybe' (expected true or false)");
  });

  it("takes a Triton deployment's other flags: checked as Triton checks them, refused where they ask for what Tritium does not do", () => {
    const o = parseServeFlags([
      '--model-repository=/a',
      '--id=edge-7',
      '--grpc-keepalive-time=7200000',
      '--grpc-keepalive-timeout',
      '20000',
      '--grpc-max-connection-age=600000',
      '--http-thread-count=8',
      '--pinned-memory-pool-byte-size=268435456',
      '--cuda-memory-pool-byte-size=0:67108864',
      '--allow-gpu-metrics=false',
      '--allow-sagemaker',
      'false',
      '--host-policy=numa0,numa-node=0',
      '--backend-directory=/opt/tritonserver/backends',
      '--http-thread-count=4',
    ]);
    expect(o.serverId).toBe('edge-7');
    expect(o.grpcConnection).toEqual({ keepaliveTimeMs: 7200000, keepaliveTimeoutMs: 20000, maxConnectionAgeMs: 600000 });
    // One warning per flag, whatever its value or how often it is given.
    expect(o.flagsWithoutEffect.map((f) => f.flag)).toEqual([
      'http-thread-count',
      'pinned-memory-pool-byte-size',
      'cuda-memory-pool-byte-size',
      'allow-gpu-metrics',
      'allow-sagemaker',
      'host-policy',
      'backend-directory',
    ]);
    const serve = (...flags: string[]) => () => parseServeFlags(['--model-repository=/a', ...flags]);
    expect(serve('--http-thread-count=many')).toThrow("invalid value for --http-thread-count: 'many' (expected an integer)");
    expect(serve('--cuda-memory-pool-byte-size=64')).toThrow("invalid value for --cuda-memory-pool-byte-size: '64' (expected <integer>:<integer>)");
    expect(serve('--host-policy=numa0')).toThrow('(expected <policy_name>,<setting>=<value>)');
    expect(serve('--allow-gpu-metrics=maybe')).toThrow("invalid value for --allow-gpu-metrics: 'maybe' (expected true or false)");
    expect(serve('--allow-sagemaker')).toThrow('--allow-sagemaker=true: the SageMaker endpoints are not served by Tritium');
    expect(serve('--model-namespacing=true')().modelNamespacing).toBe(true);
    expect(serve('--reuse-http-port=1')).toThrow('a port is not shared between servers');
    expect(serve('--grpc-keepalive-time=-5')).toThrow(/--grpc-keepalive-time/);
    expect(serve('--model-limits=some')).toThrow("invalid value for --model-limits: 'some' (expected uploaded or all)");
    expect(serve('--model-max-instances=0')).toThrow("invalid value for --model-max-instances: '0' (expected an integer >= 1)");
    expect(serve('--model-max-execute-ms=2147483648')).toThrow("invalid value for --model-max-execute-ms: '2147483648' (expected at most 2147483647)");
    expect(serve('--model-max-memory-mb=256', '--model-max-heap-mb=256')).toThrow('--model-max-memory-mb (256) must be larger than --model-max-heap-mb (256)');
    expect(serve('--model-load-thread-count=0')).toThrow("invalid value for --model-load-thread-count: '0' (expected an integer >= 1)");
    const limits = parseServeFlags(['--model-repository=/a', '--model-limits=all', '--model-max-processes=64', '--model-unload-timeout-secs=5', '--model-load-thread-count=2']);
    expect([limits.modelLimits.scope, limits.modelLimits.processes, limits.modelUnloadTimeoutSecs, limits.modelLoadThreadCount]).toEqual(['all', 64, 5, 2]);
    expect(serve('--backend-directory')).toThrow('--backend-directory needs a value');
    expect(serve('--http-header-forward-pattern=(')).toThrow("invalid value for --http-header-forward-pattern: '('");
    expect(parseServeFlags(['--model-repository=/a', '--grpc-header-forward-pattern=^x-']).headerForward.grpc?.source).toBe('^x-');
  });

  it("takes every flag of tritonserver's command line (server src/command_line_parser.cc at e1db8a6, 2026-08-19)", () => {
    const TRITON_FLAGS = [
      'allow-client-shm', 'allow-cpu-metrics', 'allow-gpu-metrics', 'allow-grpc', 'allow-http', 'allow-metrics',
      'allow-sagemaker', 'allow-vertex-ai', 'backend-config', 'backend-directory', 'buffer-manager-thread-count',
      'cache-config', 'cache-directory', 'cuda-memory-pool-byte-size', 'cuda-virtual-address-size',
      'disable-auto-complete-config', 'enable-peer-access', 'exit-on-error', 'exit-timeout-secs', 'grpc-address',
      'grpc-header-forward-pattern', 'grpc-http2-max-ping-strikes', 'grpc-http2-max-pings-without-data',
      'grpc-http2-min-recv-ping-interval-without-data', 'grpc-infer-allocation-pool-size',
      'grpc-infer-response-compression-level', 'grpc-infer-thread-count', 'grpc-keepalive-permit-without-calls',
      'grpc-keepalive-time', 'grpc-keepalive-timeout', 'grpc-max-connection-age', 'grpc-max-connection-age-grace',
      'grpc-max-response-pool-size', 'grpc-port', 'grpc-restricted-protocol', 'grpc-root-cert', 'grpc-server-cert',
      'grpc-server-key', 'grpc-use-ssl', 'grpc-use-ssl-mutual', 'help', 'host-policy', 'http-address',
      'http-header-forward-pattern', 'http-max-input-size', 'http-port', 'http-restricted-api', 'http-thread-count',
      'id', 'load-model', 'log-error', 'log-file', 'log-format', 'log-info', 'log-verbose', 'log-warning',
      'metrics-address', 'metrics-config', 'metrics-interval-ms', 'metrics-port',
      'min-supported-compute-capability', 'model-config-name', 'model-control-mode', 'model-load-gpu-limit',
      'model-load-retry-count', 'model-load-thread-count', 'model-namespacing', 'model-repository', 'model-store',
      'pinned-memory-pool-byte-size', 'rate-limit', 'rate-limit-resource', 'repoagent-directory',
      'repository-poll-secs', 'response-cache-byte-size', 'reuse-grpc-port', 'reuse-http-port', 'sagemaker-port',
      'sagemaker-safe-port-range', 'sagemaker-thread-count', 'strict-model-config', 'strict-readiness',
      'trace-config', 'trace-count', 'trace-file', 'trace-level', 'trace-log-frequency', 'trace-rate',
      'vertex-ai-default-model', 'vertex-ai-port', 'vertex-ai-thread-count',
    ];
    // `--help` is the CLI's own (tritium serve --help prints the usage before any parsing).
    const missing = TRITON_FLAGS.filter((f) => f !== 'help' && !serveFlagNames().includes(f));
    expect(missing).toEqual([]);
  });

  it("builds Triton's options table from the flags, in its order and spellings", () => {
    const o = parseServeFlags([
      '--model-repository=/a', '--model-repository=/b', '--model-control-mode=explicit', '--load-model=m1', '--load-model=m2',
      '--disable-auto-complete-config', '--rate-limit=execution_count', '--rate-limit-resource=R1:4', '--rate-limit-resource=R2:2:0',
      '--cache-config=local,size=1048576', '--exit-timeout-secs=7', '--strict-readiness=false',
    ]);
    const rows = serverOptionRows(o, { name: 'triton', version: '2.61.0', extensions: ['classification', 'sequence'] });
    expect(rows).toEqual([
      ['server_id', 'triton'],
      ['server_version', '2.61.0'],
      ['server_extensions', 'classification sequence'],
      ['model_repository_path[0]', '/a'],
      ['model_repository_path[1]', '/b'],
      ['model_control_mode', 'MODE_EXPLICIT'],
      ['startup_models_0', 'm1'],
      ['startup_models_1', 'm2'],
      ['strict_model_config', '1'],
      ['model_config_name', ''],
      ['rate_limit', 'EXEC_COUNT'],
      ['rate_limit_resource[0]', '{"name":"R1", "count":4 "device":-1}'],
      ['rate_limit_resource[1]', '{"name":"R2", "count":2 "device":0}'],
      ['strict_readiness', '0'],
      ['exit_timeout', '7'],
      ['cache_enabled', '1'],
    ]);
  });

  it("formats Triton's log lines", () => {
    const at = new Date(2026, 10, 21, 22, 10, 5, 123);
    expect(formatLogLine('I', 'hello', 'x.ts:3', 'default', at)).toBe(`I1121 22:10:05.123000 ${process.pid} x.ts:3] hello\n`);
    expect(formatLogLine('E', 'bad', 'x.ts:3', 'ISO8601', at)).toMatch(new RegExp(`^2026-11-2\\dT\\d\\d:10:05Z E ${process.pid} x.ts:3\\] bad\\n$`));
  });
});

describe('tritium serve process', () => {
  it('logs the ports it bound, takes a Triton manifest\'s flags, and exits 0 on SIGTERM', async () => {
    const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-cli-'));
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--model-repository', repo, '--http-port=0', '--grpc-port', '0', '--metrics-port=0', '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--metrics-address=127.0.0.1', '--exit-timeout-secs=5',
        // A Triton manifest's flags: one changes the metadata, one the gRPC server, one nothing (warned).
        '--id=edge-7', '--grpc-keepalive-time=60000', '--http-thread-count=8'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let log = '';
    child.stderr.on('data', (c: Buffer) => (log += c.toString()));
    child.stdout.on('data', (c: Buffer) => (log += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const started = await new Promise<string>((resolve, reject) => {
        const timer = setInterval(() => {
          const m = /Started Metrics Service at 127\.0\.0\.1:\d+/.exec(log);
          if (m) {
            clearInterval(timer);
            resolve(log);
          }
        }, 50);
        exited.then(() => {
          clearInterval(timer);
          reject(new Error(`serve exited early:\n${log}`));
        });
      });
      expect(started).toMatch(/^I\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ tritium-server\.js:\d+\] Started GRPCInferenceService at 127\.0\.0\.1:\d+$/m);
      const httpPort = Number(/Started HTTPService at 127\.0\.0\.1:(\d+)/.exec(started)![1]);
      expect(httpPort).toBeGreaterThan(0);
      const client = new HttpInferenceServerClient(`127.0.0.1:${httpPort}`);
      expect(await client.isServerLive()).toBe(true);
      expect((await client.getServerMetadata()).name).toBe('edge-7');
      // Triton's options table, logged once the models are loaded.
      expect(started).toMatch(/^\| server_id +\| edge-7 +\|$/m);
      expect(started).toMatch(/^\| model_control_mode +\| MODE_NONE +\|$/m);
      client.close();
      expect(started).toMatch(/^W.*\] --http-thread-count has no effect in Tritium: Node's event loop serves every connection/m);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(log).toMatch(/Received SIGTERM/);
    } finally {
      child.kill('SIGKILL');
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

describe('tritium serve with a busy port', () => {
  it('fails before loading any model, in one Triton line that names the flag', async () => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => resolve()));
    const port = (busy.address() as net.AddressInfo).port;
    const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../examples/model_repository');
    try {
      const child = spawn(
        process.execPath,
        [BIN, 'serve', '--model-repository', repo, '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--metrics-address=127.0.0.1', '--http-port=0', '--metrics-port=0', `--grpc-port=${port}`],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      expect(code).toBe(1);
      expect(out).toBe('');
      const lines = err.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^E\\d{4} [\\d:.]+ \\d+ [\\w.-]+:\\d+\\] failed to start GRPC service: Unavailable - Socket '127\\.0\\.0\\.1:${port}' already in use; choose another port with --grpc-port \\(0 picks a free one\\)$`,
        ),
      );
    } finally {
      busy.close();
    }
  });

  it('refuses two services on one port before binding either', async () => {
    const { checkListeners } = await import('../src/listeners.ts');
    await expect(
      checkListeners([
        { service: 'HTTP', address: '0.0.0.0', port: 18000, flag: '--http-port' },
        { service: 'Metrics', address: '127.0.0.1', port: 18000, flag: '--metrics-port' },
      ]),
    ).rejects.toThrow('failed to start Metrics service: Unavailable - --http-port and --metrics-port are both 18000; give each service its own port');
  });
});
