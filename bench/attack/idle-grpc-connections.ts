/**
 * Issue 26 item 3: ATTACK_CONNECTIONS (20000) gRPC connections that send the HTTP/2 preface and
 * never call, opened at once (from child processes of 5000 each) and, once all are open or refused,
 * held for ATTACK_SECONDS (5),
 * against a server under ATTACK_SERVER_NOFILE descriptors (default: this machine's limit). Bounded,
 * the server holds at most `--grpc-max-connections` (fitted below its descriptor limit) and closes
 * the rest on accept; unbounded, it runs out of descriptors and HTTP, metrics and health stop
 * answering. The neighbours' connections were opened before the flood.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { AttackScenario } from './scenario.ts';

const CONNECTIONS = Number(process.env['ATTACK_CONNECTIONS'] ?? 20_000);
const SECONDS = Number(process.env['ATTACK_SECONDS'] ?? 5);
const NOFILE = process.env['ATTACK_SERVER_NOFILE'] ? Number(process.env['ATTACK_SERVER_NOFILE']) : undefined;
const PER_CHILD = 5000;

interface Counts {
  connected: number;
  closedByServer: number;
  failed: number;
}

/** A GET on a new connection: its status and time, or why it failed. */
async function probe(url: string): Promise<string> {
  const started = performance.now();
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(5000), headers: { connection: 'close' } });
    await r.arrayBuffer();
    return `${r.status} in ${(performance.now() - started).toFixed(0)} ms`;
  } catch (e) {
    return `failed (${(e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message})`;
  }
}

export const idleGrpcConnections: AttackScenario = {
  name: 'idle-grpc-connections',
  description: `item 3: ${CONNECTIONS} idle gRPC connections (preface only) held ${SECONDS} s${NOFILE ? `, server under ulimit -n ${NOFILE}` : ''}`,
  ...(NOFILE ? { serverNoFile: NOFILE } : {}),
  async run(target) {
    const children: ChildProcess[] = [];
    const counts = new Map<ChildProcess, Counts>();
    for (let left = CONNECTIONS; left > 0; left -= PER_CHILD) {
      const child = fork(new URL('./idle-flood.entry.js', import.meta.url), [String(target.grpcPort), String(Math.min(PER_CHILD, left))]);
      child.on('message', (m: Counts) => counts.set(child, m));
      children.push(child);
    }
    const total = (): Counts =>
      [...counts.values()].reduce((a, c) => ({ connected: a.connected + c.connected, closedByServer: a.closedByServer + c.closedByServer, failed: a.failed + c.failed }), {
        connected: 0,
        closedByServer: 0,
        failed: 0,
      });
    // Every connection opened (or refused) first, at most 60 s: a loaded machine accepts slowly.
    const opening = performance.now();
    while (total().connected + total().failed < CONNECTIONS && performance.now() - opening < 60_000) await new Promise((r) => setTimeout(r, 100));
    const opened = total();
    const openSeconds = (performance.now() - opening) / 1000;
    await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 2));
    // New connections, as kubelet's probes and Prometheus make them (the neighbours' are kept alive).
    const [ready, metrics] = await Promise.all([
      probe(`http://127.0.0.1:${target.httpPort}/v2/health/ready`),
      probe(`http://127.0.0.1:${target.metricsPort}/metrics`),
    ]);
    await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 2));
    const held = total();
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            child.once('exit', () => resolve());
            child.send('close');
          }),
      ),
    );
    return {
      'flood opening': `${opened.connected} connected and ${opened.failed} refused in ${openSeconds.toFixed(1)} s`,
      'flood connections': `${held.connected} connected, ${held.closedByServer} closed by the server, ${held.failed} never connected; ${held.connected - held.closedByServer} held at the end`,
      'new HTTP connection under the flood (GET /v2/health/ready)': ready,
      'new metrics connection under the flood (GET /metrics)': metrics,
    };
  },
};
