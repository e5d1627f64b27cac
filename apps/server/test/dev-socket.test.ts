/**
 * `tritium dev`'s socket for `tritium model run`, on a real Unix socket: what it refuses (a request
 * over its size bound, one that is not JSON or not a run, a folder others could use) and that a
 * second dev server of the same repository is refused while a stale socket is replaced.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEV_MAX_REQUEST_BYTES, type DevRunReply } from '../src/dev/dev-protocol.ts';
import { DevSocket } from '../src/dev/dev-socket.ts';
import { ensureDevSocketDir } from '../src/dev/dev-socket-path.ts';

const root = mkdtempSync(path.join(tmpdir(), 'tritium-dev-socket-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Sends `payload` and resolves with the reply line, parsed. */
function ask(socketPath: string, payload: string | Buffer): Promise<DevRunReply> {
  return new Promise((resolve, reject) => {
    const conn = net.connect(socketPath);
    let text = '';
    conn.on('data', (d: Buffer) => (text += d.toString()));
    conn.on('error', () => undefined);
    conn.on('close', () => {
      try {
        resolve(JSON.parse(text) as DevRunReply);
      } catch {
        reject(new Error(`no reply: '${text}'`));
      }
    });
    conn.write(payload);
  });
}

describe('the dev socket', () => {
  it('answers a run; refuses oversized, non-JSON and malformed requests by name; a second listener is refused', async () => {
    const dir = path.join(root, 'ok');
    const socketPath = path.join(dir, 'repo.sock');
    const socket = await DevSocket.listen(socketPath, async (request) => ({ ok: true, result: { model: request.model }, logs: [] }));
    try {
      expect(statSync(socketPath).mode & 0o777).toBe(0o600);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(await ask(socketPath, `${JSON.stringify({ model: 'm', inputs: {}, outputs: [] })}\n`)).toEqual({ ok: true, result: { model: 'm' }, logs: [] });
      expect(await ask(socketPath, 'nope\n')).toMatchObject({ ok: false, code: 'INVALID_ARG', message: 'the run request is not JSON' });
      expect(await ask(socketPath, `${JSON.stringify({ model: 'm', inputs: [], outputs: [1] })}\n`)).toMatchObject({
        ok: false,
        message: 'the run request must be { model, version?, inputs, outputs }',
      });
      expect(await ask(socketPath, Buffer.alloc(DEV_MAX_REQUEST_BYTES + 1, 0x20))).toMatchObject({
        ok: false,
        message: `the run's request is over ${DEV_MAX_REQUEST_BYTES} bytes`,
      });
      await expect(DevSocket.listen(socketPath, async () => ({ ok: true, result: null, logs: [] }))).rejects.toThrow('another tritium dev serves this repository');
    } finally {
      await socket.close();
    }
    // A socket file nobody answers on (a dev server that was killed) is replaced.
    writeFileSync(socketPath, '');
    const again = await DevSocket.listen(socketPath, async () => ({ ok: true, result: 1, logs: [] }));
    await again.close();
  });

  it('refuses a socket folder others may use', () => {
    const open = path.join(root, 'open');
    mkdirSync(open, { mode: 0o700 });
    chmodSync(open, 0o777);
    expect(ensureDevSocketDir(open)).toBe(`others may use ${open} (mode 777)`);
  });
});
