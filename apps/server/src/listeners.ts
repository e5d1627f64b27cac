/**
 * The sockets `tritium serve` listens on, checked before any model loads: Triton (and Tritium
 * until now) found a busy port only after loading every model. A busy port is reported in
 * Triton's words plus the flag that changes it.
 */
import net from 'node:net';
import { InferError } from '@tritium/core';
import type { ServeOptions } from './cli/serve-options.ts';

export interface Listener {
  /** Triton's service name, as in `failed to start HTTP service`. */
  readonly service: 'GRPC' | 'HTTP' | 'Metrics' | 'Health' | 'OpenAI';
  readonly address: string;
  readonly port: number;
  /** The `tritium serve` flag that sets the port. */
  readonly flag: string;
}

/** A listener that cannot be opened; its message is the whole log line. */
export class ListenError extends InferError {
  constructor(message: string) {
    super('UNAVAILABLE', message);
    this.name = 'ListenError';
  }
}

/** The enabled listeners, in Triton's start order (gRPC, HTTP, metrics), then Tritium's own. */
export function plannedListeners(o: ServeOptions): Listener[] {
  return [
    ...(o.allowGrpc ? [{ service: 'GRPC', address: o.grpcAddress, port: o.grpcPort, flag: '--grpc-port' } as const] : []),
    ...(o.allowHttp ? [{ service: 'HTTP', address: o.httpAddress, port: o.httpPort, flag: '--http-port' } as const] : []),
    ...(o.allowMetrics ? [{ service: 'Metrics', address: o.metricsAddress, port: o.metricsPort, flag: '--metrics-port' } as const] : []),
    ...(o.healthPort !== undefined ? [{ service: 'Health', address: o.healthAddress, port: o.healthPort, flag: '--health-port' } as const] : []),
    ...(o.openaiPort !== undefined ? [{ service: 'OpenAI', address: o.openaiAddress, port: o.openaiPort, flag: '--openai-port' } as const] : []),
  ];
}

/**
 * Triton's line for a listener that failed (`failed to start HTTP service: Unavailable - Socket
 * '0.0.0.0:8000' already in use`), with what to do about it. `cause` is the bind error (its code
 * picks the wording; grpc-js words it in its own message).
 */
export function listenFailure(l: Listener, cause: unknown): ListenError {
  const text = cause instanceof Error ? `${(cause as NodeJS.ErrnoException).code ?? ''} ${cause.message}` : String(cause);
  const socket = `Socket '${l.address}:${l.port}'`;
  let why: string;
  if (/EADDRINUSE/.test(text)) why = `${socket} already in use; choose another port with ${l.flag} (0 picks a free one)`;
  else if (/EACCES/.test(text)) why = `${socket}: permission denied (ports below 1024 need privileges); choose another port with ${l.flag}`;
  else if (/EADDRNOTAVAIL|ENOTFOUND|EAI_/.test(text)) why = `${socket}: address '${l.address}' is not available on this host (${l.flag.replace('-port', '-address')})`;
  else why = `${socket}: ${cause instanceof Error ? cause.message : String(cause)}`;
  return new ListenError(`failed to start ${l.service} service: Unavailable - ${why}`);
}

const WILDCARD = new Set(['0.0.0.0', '::', '']);

function tryListen(l: Listener): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen({ host: l.address, port: l.port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * Checks that every listener can be opened, by opening and closing it (port 0 always can).
 * Throws a ListenError naming the first that cannot, or two services given the same port.
 */
export async function checkListeners(listeners: readonly Listener[]): Promise<void> {
  const fixed = listeners.filter((l) => l.port !== 0);
  for (const [i, l] of fixed.entries()) {
    const other = fixed.slice(0, i).find((o) => o.port === l.port && (o.address === l.address || WILDCARD.has(o.address) || WILDCARD.has(l.address)));
    if (other) throw new ListenError(`failed to start ${l.service} service: Unavailable - ${other.flag} and ${l.flag} are both ${l.port}; give each service its own port`);
  }
  for (const l of fixed) {
    try {
      await tryListen(l);
    } catch (error) {
      throw listenFailure(l, error);
    }
  }
}
