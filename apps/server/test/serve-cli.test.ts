/** `tritium serve` as a user runs it: flags, Triton log lines with the bound ports, SIGTERM exit. */
import { spawn } from 'node:child_process';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HttpInferenceServerClient } from '@tritium/client';
import { FlagError, parseServeFlags } from '../src/cli/flags.ts';
import { formatLogLine } from '../src/logging/triton-log.ts';

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

  it("formats Triton's log lines", () => {
    const at = new Date(2026, 10, 21, 22, 10, 5, 123);
    expect(formatLogLine('I', 'hello', 'x.ts:3', 'default', at)).toBe(`I1121 22:10:05.123000 ${process.pid} x.ts:3] hello\n`);
    expect(formatLogLine('E', 'bad', 'x.ts:3', 'ISO8601', at)).toMatch(new RegExp(`^2026-11-2\\dT\\d\\d:10:05Z E ${process.pid} x.ts:3\\] bad\\n$`));
  });
});

describe('tritium serve process', () => {
  it('logs the ports it bound and exits 0 on SIGTERM', async () => {
    const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-cli-'));
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--model-repository', repo, '--http-port=0', '--grpc-port', '0', '--metrics-port=0', '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--metrics-address=127.0.0.1', '--exit-timeout-secs=5'],
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
      client.close();
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
