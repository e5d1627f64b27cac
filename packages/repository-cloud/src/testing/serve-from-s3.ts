/**
 * Serves a local model repository from object storage, end to end, on this machine (run from the
 * repository root after `npm run build`; not exported, not imported by the testing entry): starts an
 * S3-compatible server (fauxqs) on 127.0.0.1, uploads the folder, starts `tritium serve` on
 * `s3://127.0.0.1:<port>/models/<folder>` with a fresh cache, and prints the time from the spawn to
 * `GET /v2/health/ready` answering 200 (time to first ready). Keeps serving until Ctrl-C unless
 * `--exit` is given.
 *
 *   node packages/repository-cloud/dist/testing/serve-from-s3.js [model_repository] [--exit] [-- <serve flags>]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { S3_TEST_CREDENTIALS, startS3Emulator } from './s3-emulator.ts';

const root = process.cwd();
const bin = path.join(root, 'apps/server/bin/tritium.mjs');
if (!existsSync(bin)) throw new Error(`run this from the repository root: ${bin} not found`);
const args = process.argv.slice(2);
const dash = args.indexOf('--');
const serveFlags = dash >= 0 ? args.slice(dash + 1) : [];
const own = dash >= 0 ? args.slice(0, dash) : args;
const exitWhenReady = own.includes('--exit');
const folder = path.resolve(own.find((a) => !a.startsWith('--')) ?? path.join(root, 'model_repository'));

const s3 = await startS3Emulator();
await s3.createBucket('models');
const prefix = `${path.basename(folder)}/`;
const files = await s3.uploadFolder('models', prefix, folder);
const url = `s3://${s3.hostPort}/models/${path.basename(folder)}`;
const cache = mkdtempSync(path.join(os.tmpdir(), 'tritium-s3-example-cache-'));
console.log(`uploaded ${files} files of ${folder} to ${url}`);

const flags = ['--model-repository', url, `--repository-cache-dir=${cache}`, ...serveFlags];
console.log(`AWS_ACCESS_KEY_ID=${S3_TEST_CREDENTIALS.AWS_ACCESS_KEY_ID} AWS_SECRET_ACCESS_KEY=… tritium serve ${flags.join(' ')}`);
const started = performance.now();
const child = spawn(process.execPath, [bin, 'serve', ...flags], {
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, ...S3_TEST_CREDENTIALS },
});
let log = '';
// Triton's log lines go to stderr; both streams are echoed and searched for the bound port.
for (const stream of [child.stdout, child.stderr]) {
  stream.on('data', (c: Buffer) => {
    log += c.toString();
    process.stdout.write(c);
  });
}
const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
const cleanup = async (): Promise<void> => {
  child.kill('SIGTERM');
  await exited;
  await s3.stop();
  rmSync(cache, { recursive: true, force: true });
};
process.on('SIGINT', () => void cleanup().then(() => process.exit(0)));

for (;;) {
  if (child.exitCode !== null) {
    await cleanup();
    throw new Error('tritium serve exited before it was ready');
  }
  const port = /Started HTTPService at [\d.]+:(\d+)/.exec(log)?.[1];
  if (port) {
    const ok = await fetch(`http://127.0.0.1:${port}/v2/health/ready`).then((r) => r.status === 200, () => false);
    if (ok) {
      console.log(`time to first ready from ${url}: ${((performance.now() - started) / 1000).toFixed(2)} s (${files} files downloaded into ${cache})`);
      break;
    }
  }
  await new Promise((r) => setTimeout(r, 25));
}
if (exitWhenReady) {
  await cleanup();
  process.exit(0);
}
