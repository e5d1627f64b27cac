/**
 * The dev server's socket for `tritium model run`: a Unix socket in a folder private to this user
 * (see dev-socket-path.ts), mode 0600, one JSON request line and one JSON reply line per
 * connection. Bounds: a request line of at most DEV_MAX_REQUEST_BYTES (longer: refused, closed),
 * at most 16 connections at once, 30 s to send the request.
 */
import { chmodSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { DEV_MAX_REQUEST_BYTES, type DevRunReply, type DevRunRequest } from './dev-protocol.ts';
import { ensureDevSocketDir } from './dev-socket-path.ts';

const MAX_CONNECTIONS = 16;
const REQUEST_TIMEOUT_MS = 30_000;

function isRequest(value: unknown): value is DevRunRequest {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v['model'] === 'string' &&
    (v['version'] === undefined || Number.isSafeInteger(v['version'])) &&
    v['inputs'] !== null &&
    typeof v['inputs'] === 'object' &&
    !Array.isArray(v['inputs']) &&
    Array.isArray(v['outputs']) &&
    (v['outputs'] as unknown[]).every((o) => typeof o === 'string')
  );
}

/** Is a server answering on `socketPath`? */
function answering(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

export class DevSocket {
  private constructor(
    private readonly server: net.Server,
    readonly path: string,
  ) {}

  /** Listens on `socketPath`; refuses when another dev server answers there (a stale socket is replaced). */
  static async listen(socketPath: string, handle: (request: DevRunRequest) => Promise<DevRunReply>): Promise<DevSocket> {
    const problem = ensureDevSocketDir(path.dirname(socketPath));
    if (problem) throw new Error(`cannot listen for tritium model run: ${problem}`);
    if (await answering(socketPath)) throw new Error(`another tritium dev serves this repository (its socket: ${socketPath})`);
    rmSync(socketPath, { force: true });
    const server = net.createServer((conn) => serve(conn, handle));
    server.maxConnections = MAX_CONNECTIONS;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
    chmodSync(socketPath, 0o600);
    return new DevSocket(server, socketPath);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.path, { force: true });
  }
}

function serve(conn: net.Socket, handle: (request: DevRunRequest) => Promise<DevRunReply>): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  const reply = (r: DevRunReply): void => {
    done = true;
    conn.end(`${JSON.stringify(r)}\n`);
  };
  const refuse = (message: string): void => reply({ ok: false, code: 'INVALID_ARG', message, logs: [] });
  conn.setTimeout(REQUEST_TIMEOUT_MS, () => conn.destroy());
  conn.on('error', () => conn.destroy());
  conn.on('data', (chunk: Buffer) => {
    if (done) return;
    const nl = chunk.indexOf(0x0a);
    const piece = nl >= 0 ? chunk.subarray(0, nl) : chunk;
    size += piece.length;
    if (size > DEV_MAX_REQUEST_BYTES) return refuse(`the run's request is over ${DEV_MAX_REQUEST_BYTES} bytes`);
    chunks.push(piece);
    if (nl < 0) return;
    done = true;
    conn.setTimeout(0);
    let request: unknown;
    try {
      request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return refuse('the run request is not JSON');
    }
    if (!isRequest(request)) return refuse('the run request must be { model, version?, inputs, outputs }');
    void handle(request).then(reply, (e: unknown) => reply({ ok: false, code: 'INTERNAL', message: String(e), logs: [] }));
  });
}
