/**
 * `tritium model run`'s warm path: when a `tritium dev` serves the model's repository, the run is
 * sent to it over its socket (see dev/dev-socket.ts) and answered without loading anything here.
 * Loads nothing of the server: a warm run costs a Node start and a round trip.
 */
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { DevRunReply, DevRunRequest } from '../dev/dev-protocol.ts';
import { devSocketPath } from '../dev/dev-socket-path.ts';

/** A reply longer than this is refused (the run then fails). */
const MAX_REPLY_BYTES = 256 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 1000;

/**
 * The dev server's reply to one run of `<repository>/<model>`, or undefined when no dev server
 * answers for that repository (none started, or one that is gone: the run then loads the model).
 */
export async function askDevServer(modelFolder: string, request: Omit<DevRunRequest, 'model'>): Promise<DevRunReply | undefined> {
  const dir = path.resolve(modelFolder);
  const socketPath = devSocketPath(path.dirname(dir));
  if (!existsSync(socketPath)) return undefined;
  return new Promise((resolve, reject) => {
    const conn = net.connect(socketPath);
    const chunks: Buffer[] = [];
    let size = 0;
    let connected = false;
    const timer = setTimeout(() => conn.destroy(), CONNECT_TIMEOUT_MS);
    conn.once('connect', () => {
      connected = true;
      clearTimeout(timer);
      conn.write(`${JSON.stringify({ ...request, model: path.basename(dir) })}\n`);
    });
    conn.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REPLY_BYTES) {
        conn.destroy();
        reject(new Error(`the dev server's reply is over ${MAX_REPLY_BYTES} bytes`));
      } else chunks.push(chunk);
    });
    conn.on('error', () => undefined);
    conn.on('close', () => {
      clearTimeout(timer);
      if (!connected) return resolve(undefined);
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as DevRunReply);
      } catch {
        reject(new Error('the dev server closed the connection without an answer'));
      }
    });
  });
}
