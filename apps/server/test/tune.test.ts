/**
 * `tritium tune` as a user runs it (the CLI in a child process, its own `tritium serve`): a short
 * search on a small model writes a config that loads and has the winner's settings, with the figures
 * that chose it; a plot and a table; and every bad input refused before any load is generated.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpInferenceServerClient } from '@tritium/client';
import { startServeProcess, TRITIUM_BIN } from './support/serve-process.ts';

const MODEL = `name: "idm"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
dynamic_batching { max_queue_delay_microseconds: 5000 }
parameters { key: "execute_delay_ms" value: { string_value: "2" } }
`;

function tune(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [TRITIUM_BIN, 'tune', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

let root: string;
let repo: string;
beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'tritium-tune-'));
  repo = path.join(root, 'models');
  mkdirSync(path.join(repo, 'idm', '1'), { recursive: true });
  writeFileSync(path.join(repo, 'idm', 'config.pbtxt'), MODEL);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('tritium tune', () => {
  it('finds a configuration within the budget, writes it with its figures, and the written config loads with those settings', async () => {
    const out = path.join(root, 'tuned');
    const report = path.join(root, 'report');
    const r = await tune(['-m', 'idm', '--model-repository', repo, '--concurrency-range', '1:4', '-p', '150', '--time-budget', '14s', '--latency-budget', 'p99=500ms', '--output-repository', out, '--report', report]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toMatch(/^#\s+candidate\s+conc\s+infer\/s/m);
    expect(r.stdout).toMatch(/ \(as written(, winner)?\)/);
    const winner = /winner: #(\d+) model d=(\d+)us pref=(\d+|-)( adaptive)? inst=idm:(\d+): (\d+) infer\/s at p99 ([\d.]+) ms/.exec(r.stdout);
    expect(winner, r.stdout).not.toBeNull();
    const [, , delay, preferred, adaptive, instances, , p99] = winner!;
    expect(Number(p99)).toBeLessThanOrEqual(500); // what the report claims: within the budget
    // The written config says what chose it, and carries exactly the winner's settings.
    const written = readFileSync(path.join(out, 'idm', 'config.pbtxt'), 'utf8');
    expect(written).toMatch(/^# Written by tritium tune -m idm/);
    expect(written).toMatch(/# Measured: \d+ infer\/s at concurrency \d+, p50 [\d.]+ ms, p99 [\d.]+ ms \(budget 500 ms\)/);
    expect(readFileSync(`${report}.md`, 'utf8')).toContain('| # | candidate |');
    expect(readFileSync(`${report}.svg`, 'utf8')).toContain('winner');
    const serve = startServeProcess([`--model-repository=${out}`]);
    try {
      const { http } = await serve.started;
      const client = new HttpInferenceServerClient(`127.0.0.1:${http}`);
      const config = await client.getModelConfig('idm');
      client.close();
      expect(Number(config.dynamic_batching?.max_queue_delay_microseconds)).toBe(Number(delay));
      expect(config.instance_group[0].count).toBe(Number(instances));
      if (preferred !== '-') expect(config.dynamic_batching?.preferred_batch_size).toEqual([Number(preferred)]);
      expect(config.parameters?.['tritium.batching']?.string_value).toBe(adaptive ? 'adaptive' : undefined);
    } finally {
      await serve.stop();
    }
  }, 60_000);

  it('refuses bad input before generating any load', async () => {
    const unknown = await tune(['-m', 'nosuch', '--model-repository', repo]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown model 'nosuch'");
    const short = await tune(['-m', 'idm', '--model-repository', repo, '--time-budget', '3s']);
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/--time-budget 3s is too short to measure one candidate \(7 load levels x 3 windows of 1500 ms/);
    const budget = await tune(['-m', 'idm', '--model-repository', repo, '--latency-budget', 'p42=5ms']);
    expect(budget.stderr).toContain("invalid value for --latency-budget: 'p42=5ms'");
    const both = await tune(['-m', 'idm']);
    expect(both.stderr).toContain('give either --model-repository');
    // A running server that takes no config overrides (model control mode none): refused, no inference sent.
    const serve = startServeProcess([`--model-repository=${repo}`]);
    try {
      const { http } = await serve.started;
      const refused = await tune(['-m', 'idm', '-u', `127.0.0.1:${http}`, '-p', '150', '--concurrency-range', '1:2']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/refuses config overrides .*--model-control-mode=explicit/);
      const client = new HttpInferenceServerClient(`127.0.0.1:${http}`);
      const stats = await client.getInferenceStatistics('idm');
      client.close();
      expect(Number(stats.model_stats[0].inference_count)).toBe(0);
    } finally {
      await serve.stop();
    }
  }, 60_000);
});
