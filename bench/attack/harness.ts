/**
 * The attack bench's harness: a real `tritium serve` child (optionally under a lower descriptor
 * limit), its RSS sampled from /proc, steady neighbours doing small infers over HTTP and gRPC (one at
 * a time, every NEIGHBOUR_EVERY_MS), and one scenario's attack run between a quiet window and a
 * recovery window. Each scenario is a file of its own beside this one (see scenario.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GrpcInferenceServerClient, InferInput } from '@tritium/client';
import { TRITIUM_BIN } from '@tritium/example-setup';
import type { AttackScenario, AttackTarget, ScenarioModel, ScenarioResult } from './scenario.ts';

const NEIGHBOUR_EVERY_MS = 10;
const QUIET_MS = Number(process.env['ATTACK_QUIET_MS'] ?? 3000);
const RECOVERY_MS = Number(process.env['ATTACK_RECOVERY_MS'] ?? 2000);
/** Another build's `tritium` entry to measure instead of this checkout's (e.g. main before a fix). */
const BIN = process.env['ATTACK_TRITIUM_BIN'] ?? TRITIUM_BIN;

/** The neighbours' model: FP32 [4] in, the same out. */
const NEIGHBOUR_MODEL = `backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
`;

interface Server {
  readonly child: ChildProcess;
  readonly target: AttackTarget;
  log(): string;
  stop(): Promise<void>;
}

function writeRepository(scenario: AttackScenario): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-attack-'));
  const models: Record<string, ScenarioModel> = { neighbour: { config: NEIGHBOUR_MODEL }, ...scenario.models };
  for (const [name, model] of Object.entries(models)) {
    mkdirSync(path.join(dir, name, '1'), { recursive: true });
    writeFileSync(path.join(dir, name, 'config.pbtxt'), model.config);
    for (const [file, text] of Object.entries(model.files ?? {})) writeFileSync(path.join(dir, name, '1', file), text);
  }
  return dir;
}

/** `tritium serve` on loopback with free ports, under `ulimit -n` when the scenario asks. */
async function startServer(scenario: AttackScenario, repository: string): Promise<Server> {
  const args = [
    BIN, 'serve', '--model-repository', repository,
    '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--metrics-address=127.0.0.1',
    '--http-port=0', '--grpc-port=0', '--metrics-port=0',
    ...(scenario.serveArgs ?? []),
  ];
  const nofile = scenario.serverNoFile;
  // `exec` keeps the server's pid the child's, so /proc/<pid> is the server's.
  const child = nofile
    ? spawn('sh', ['-c', `ulimit -n ${nofile} && exec "$0" "$@"`, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (c: Buffer) => (text += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (text += c.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const port = (service: string) => Number(new RegExp(`Started ${service} at [^:\\s]+:(\\d+)`).exec(text)?.[1] ?? NaN);
  for (let waited = 0; !(port('HTTPService') && port('GRPCInferenceService') && port('Metrics Service')); waited += 50) {
    if (child.exitCode !== null || waited > 120_000) throw new Error(`tritium serve did not start:\n${text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    target: { pid: child.pid!, httpPort: port('HTTPService'), grpcPort: port('GRPCInferenceService'), metricsPort: port('Metrics Service'), repository },
    log: () => text,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(kill);
      }
    },
  };
}

/** VmRSS (or another field) of /proc/<pid>/status, in bytes; NaN once the process is gone. */
export function procStatusBytes(pid: number, key = 'VmRSS'): number {
  try {
    const kb = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Number(kb) * 1024;
  } catch {
    return NaN;
  }
}

/** User + system CPU seconds of a process (/proc/<pid>/stat, 100 ticks a second). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Open descriptors of a process now. */
function openFiles(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/** Samples the server's RSS and descriptors every 50 ms while running. */
class Sampler {
  peakRss = 0;
  peakFds = 0;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(private readonly pid: number) {
    this.timer = setInterval(() => this.sample(), 50);
    this.sample();
  }

  sample(): void {
    const rss = procStatusBytes(this.pid);
    if (rss > this.peakRss) this.peakRss = rss;
    const fds = openFiles(this.pid);
    if (fds > this.peakFds) this.peakFds = fds;
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }
}

/** Latencies (ms) of successful calls, and failures by what went wrong. */
export class Tally {
  readonly ms: number[] = [];
  readonly failures = new Map<string, number>();

  fail(why: string): void {
    this.failures.set(why, (this.failures.get(why) ?? 0) + 1);
  }

  pct(p: number): number {
    const s = [...this.ms].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
  }

  summary(): string {
    const failed = [...this.failures].map(([k, n]) => `${n}x ${k}`).join(', ');
    return `n ${this.ms.length}, p50 ${this.pct(50).toFixed(1)} ms, p99 ${this.pct(99).toFixed(1)} ms, max ${this.pct(100).toFixed(0)} ms${failed ? `, failed: ${failed}` : ''}`;
  }
}

/** Steady small infers over HTTP and gRPC, one at a time each, into whichever tally is current. */
class Neighbours {
  current: { http: Tally; grpc: Tally } = { http: new Tally(), grpc: new Tally() };
  private running = true;
  private readonly loops: Promise<void>[];
  private readonly grpc: GrpcInferenceServerClient;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  constructor(target: AttackTarget) {
    this.grpc = new GrpcInferenceServerClient(`127.0.0.1:${target.grpcPort}`);
    const head = Buffer.from(JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], parameters: { binary_data_size: 16 } }] }));
    const body = Buffer.concat([head, Buffer.from(new Float32Array([1, 2, 3, 4]).buffer)]);
    const httpCall = (): Promise<void> =>
      new Promise((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: target.httpPort,
            method: 'POST',
            path: '/v2/models/neighbour/infer',
            agent: this.agent,
            timeout: 30_000,
            headers: { 'content-length': body.length, 'inference-header-content-length': head.length },
          },
          (res) => {
            res.resume();
            res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
          },
        );
        req.on('timeout', () => req.destroy(new Error('timeout 30 s')));
        req.on('error', reject);
        req.end(body);
      });
    const grpcCall = async (): Promise<void> => {
      await this.grpc.infer('neighbour', [new InferInput('INPUT0', [4], 'FP32').setData(new Float32Array([1, 2, 3, 4]))], { clientTimeoutMs: 30_000 });
    };
    this.loops = [this.loop('http', httpCall), this.loop('grpc', grpcCall)];
  }

  private async loop(which: 'http' | 'grpc', call: () => Promise<void>): Promise<void> {
    while (this.running) {
      const tally = this.current[which];
      const started = performance.now();
      try {
        await call();
        tally.ms.push(performance.now() - started);
      } catch (e) {
        const err = e as NodeJS.ErrnoException & { status?: string };
        tally.fail(err.code ?? err.status ?? err.message.slice(0, 60));
      }
      await new Promise((r) => setTimeout(r, NEIGHBOUR_EVERY_MS));
    }
  }

  /** Starts new tallies; returns the ones just finished. */
  next(): { http: Tally; grpc: Tally } {
    const done = this.current;
    this.current = { http: new Tally(), grpc: new Tally() };
    return done;
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.grpc.close();
    this.agent.destroy();
  }
}

export interface ScenarioReport {
  readonly scenario: string;
  readonly lines: string[];
}

/** Runs one scenario against a fresh server: quiet window, attack, recovery window. */
export async function runScenario(scenario: AttackScenario): Promise<ScenarioReport> {
  await scenario.prepare?.();
  const repository = writeRepository(scenario);
  const server = await startServer(scenario, repository);
  const { pid } = server.target;
  const lines: string[] = [];
  try {
    const neighbours = new Neighbours(server.target);
    await new Promise((r) => setTimeout(r, QUIET_MS));
    const quiet = neighbours.next();
    const rssBefore = procStatusBytes(pid);
    const cpuBefore = cpuSeconds(pid);
    const sampler = new Sampler(pid);
    const started = performance.now();
    let result: ScenarioResult;
    try {
      result = await scenario.run(server.target);
    } finally {
      sampler.stop();
    }
    const attackSeconds = (performance.now() - started) / 1000;
    const cpu = cpuSeconds(pid) - cpuBefore;
    const attacked = neighbours.next();
    await new Promise((r) => setTimeout(r, RECOVERY_MS));
    const recovered = neighbours.next();
    await neighbours.stop();
    const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
    lines.push(
      `server RSS: ${mib(rssBefore)} before, peak ${mib(sampler.peakRss)} during the attack, ${mib(procStatusBytes(pid))} after; peak descriptors ${sampler.peakFds}`,
      `server CPU: ${cpu.toFixed(2)} s over ${attackSeconds.toFixed(1)} s of attack`,
      `neighbour HTTP  quiet: ${quiet.http.summary()}`,
      `neighbour HTTP  under: ${attacked.http.summary()}`,
      `neighbour HTTP  after: ${recovered.http.summary()}`,
      `neighbour gRPC  quiet: ${quiet.grpc.summary()}`,
      `neighbour gRPC  under: ${attacked.grpc.summary()}`,
      `neighbour gRPC  after: ${recovered.grpc.summary()}`,
      ...Object.entries(result).map(([k, v]) => `${k}: ${v}`),
    );
    if (server.child.exitCode !== null || server.child.signalCode !== null) lines.push(`the server exited (${server.child.exitCode ?? server.child.signalCode})`);
  } finally {
    await server.stop();
    rmSync(repository, { recursive: true, force: true });
  }
  return { scenario: scenario.name, lines };
}
