/**
 * `--health-port`: Triton's health endpoints on a listener of their own, served by a worker thread,
 * agreeing with the main listener (200 / 400, empty bodies) and refusing anything else. That they stay
 * answered while the main thread is swamped is measured by `OVERLOAD_PROBE=health node bench/dist/overload.bench.js`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseServeFlags } from '../src/cli/flags.ts';
import https from 'node:https';
import { startServeProcess } from './support/serve-process.ts';
import { makeTestPki } from './support/certificates.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'tritium-health-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function repository(name: string, config: string): string {
  const repo = path.join(root, name);
  mkdirSync(path.join(repo, 'm', '1'), { recursive: true });
  writeFileSync(path.join(repo, 'm', 'config.pbtxt'), config);
  return repo;
}

const GOOD = `backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
`;

async function statuses(port: number): Promise<Record<string, number>> {
  const get = async (p: string, method = 'GET') => {
    const r = await fetch(`http://127.0.0.1:${port}${p}`, { method });
    expect(await r.text()).toBe('');
    return r.status;
  };
  return { live: await get('/v2/health/live'), ready: await get('/v2/health/ready'), other: await get('/v2/models/m'), post: await get('/v2/health/live', 'POST') };
}

async function serveWithHealth(repo: string, ...extra: string[]) {
  const serve = startServeProcess([`--model-repository=${repo}`, '--health-port=0', '--health-address=127.0.0.1', ...extra]);
  const { http } = await serve.started;
  let health: number | undefined;
  for (let i = 0; i < 100 && health === undefined; i++) {
    const m = /Started Health Service at 127\.0\.0\.1:(\d+)/.exec(serve.log());
    if (m) health = Number(m[1]);
    else await new Promise((r) => setTimeout(r, 50));
  }
  return { serve, http, health: health! };
}

describe('--health-port', () => {
  it('answers live and ready as the HTTP port does, and nothing else', async () => {
    const { serve, http, health } = await serveWithHealth(repository('good', GOOD));
    try {
      expect(await statuses(health)).toEqual({ live: 200, ready: 200, other: 404, post: 405 });
      const main = await fetch(`http://127.0.0.1:${http}/v2/health/ready`);
      expect(main.status).toBe(200);
    } finally {
      await serve.stop();
    }
  });

  it('reports not ready (400) while a model failed to load, as Triton with strict readiness', async () => {
    const { serve, http, health } = await serveWithHealth(repository('bad', GOOD.replace('"identity"', '"nosuch"')), '--exit-on-error=false');
    try {
      const s = await statuses(health);
      expect(s.live).toBe(200);
      expect(s.ready).toBe(400);
      expect((await fetch(`http://127.0.0.1:${http}/v2/health/ready`)).status).toBe(400);
    } finally {
      await serve.stop();
    }
  });

  it("keeps the HTTP port's policy: HTTPS with its certificate and the restricted health header; no client certificate is asked for, even with mutual TLS", async () => {
    const pki = makeTestPki();
    const { serve, health } = await serveWithHealth(
      repository('policy', GOOD),
      '--http-use-ssl-mutual=true',
      `--http-server-cert=${pki.files.serverCert}`,
      `--http-server-key=${pki.files.serverKey}`,
      `--http-root-cert=${pki.files.caCert}`,
      '--http-restricted-api=health:probe-token=s3cret',
    );
    /** A GET over HTTPS as kubelet makes it: no client certificate, the server's not verified. */
    const get = (headers: Record<string, string> = {}) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = https.get({ host: '127.0.0.1', port: health, path: '/v2/health/ready', rejectUnauthorized: false, headers }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
      });
    try {
      await expect(fetch(`http://127.0.0.1:${health}/v2/health/ready`)).rejects.toThrow();
      expect(await get()).toEqual({ status: 403, body: JSON.stringify({ error: "This API is restricted, expecting header 'probe-token'" }) });
      expect(await get({ 'probe-token': 'wrong' })).toMatchObject({ status: 403 });
      expect(await get({ 'probe-token': 's3cret' })).toEqual({ status: 200, body: '' });
    } finally {
      await serve.stop();
      pki.remove();
    }
  });

  it('is off unless asked, and checks its flag', () => {
    expect(parseServeFlags(['--model-repository=/r']).healthPort).toBeUndefined();
    expect(parseServeFlags(['--model-repository=/r', '--health-port=8003']).healthPort).toBe(8003);
    expect(() => parseServeFlags(['--model-repository=/r', '--health-port=99999'])).toThrow(/--health-port/);
  });
});
