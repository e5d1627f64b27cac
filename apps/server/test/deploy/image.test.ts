/**
 * The container image (deploy/Containerfile) installs one set of packed packages as a user does:
 * tools/image-project.mjs chooses them (the set's packages with the workspace packages they depend on,
 * plus what the example's model.ts files import), and the image holds only that installed project.
 * The first part needs only Node; the second reads the built image where podman and the image are
 * there (deploy/container/build-and-run.sh builds it and answers an inference from inside it;
 * kube-play.test.ts serves from it) and skips, saying which is missing, elsewhere.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { publishable, ROOT } from '../support/pack-install.ts';

const SCRIPT = path.join(ROOT, 'tools/image-project.mjs');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'apps/server/package.json'), 'utf8')) as { version: string }).version;
const IMAGE = `localhost/tritium:${VERSION}`;
const env = { ...process.env, CONTAINERS_CONF: path.join(ROOT, 'deploy/container/containers.conf') };

function list(set?: string): { packages: string[]; imports: Record<string, string> } {
  const run = spawnSync(process.execPath, [SCRIPT, 'list', ...(set ? [set] : [])], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as { packages: string[]; imports: Record<string, string> };
}

describe('tools/image-project.mjs: what the image installs', () => {
  it('installs by default the server, ONNX and the workspace packages they need, and nothing optional', () => {
    expect(list().packages).toEqual([
      '@tritium/backend-examples',
      '@tritium/backend-onnx',
      '@tritium/backend-python-like',
      '@tritium/client',
      '@tritium/core',
      '@tritium/perf',
      '@tritium/server',
    ]);
  });

  it('installs every publishable package for the set `all`', () => {
    expect(list('all').packages).toEqual(publishable());
  });

  it("adds what the example's model.ts files import, at the workspace's version", () => {
    const tokenizers = JSON.parse(readFileSync(path.join(ROOT, 'node_modules/@huggingface/tokenizers/package.json'), 'utf8')) as { version: string };
    expect(list().imports).toEqual({ '@huggingface/tokenizers': tokenizers.version });
  });

  it('refuses an unknown set by name', () => {
    const run = spawnSync(process.execPath, [SCRIPT, 'list', 'gpu'], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("unknown install set 'gpu' (one of: onnx, all)");
  });
});

function skipReason(): string | undefined {
  if (spawnSync('sh', ['-c', 'command -v podman'], { encoding: 'utf8' }).status !== 0) return 'podman is not installed (Debian packages podman and runc)';
  if (spawnSync('podman', ['image', 'exists', IMAGE], { env }).status !== 0) return `image ${IMAGE} is not built (deploy/container/build-and-run.sh builds it)`;
  return undefined;
}

const reason = skipReason();
if (reason) console.warn(`skipping the container image's contents: ${reason}`);

/** Run inside the image as root (to see every folder): one line per fact the test checks. */
const INSPECT = String.raw`
cd /opt/tritium
echo "top: $(ls -A | tr '\n' ' ')"
for p in /src /tarballs /root/.npm /opt/tritium/.npm /tmp/npm-cache; do [ -e "$p" ] && echo "present: $p"; done
for c in gcc cc g++ make python3 tsc; do command -v "$c" >/dev/null && echo "compiler: $c"; done
for d in vitest eslint nx typedoc @nx tsx @tritium/onnx-gen @tritium/backend-tensorrt @aws-sdk ioredis; do [ -e "node_modules/$d" ] && echo "extra: $d"; done
[ -L node_modules/@tritium/server ] && echo "linked: @tritium/server"
echo "ort: $(cd node_modules/onnxruntime-node/bin/napi-v6 && ls -d */* | tr '\n' ' ')"
for f in model_repository/bert_classifier/1/model.onnx model_repository/tokenizer/1/tokenizer model_repository/sentiment_ensemble/config.pbtxt; do [ -e "$f" ] || echo "missing: $f"; done
echo "tritium: $(readlink -f /usr/local/bin/tritium)"
`;

describe.skipIf(reason !== undefined)('the built image', () => {
  it('holds Node, the installed packages and the example only, and runs as uid 1000 under tini with a health check', () => {
    const inspect = spawnSync('podman', ['image', 'inspect', IMAGE, '--format', '{{.Size}} {{.Config.User}} {{json .Config.Entrypoint}} {{json .Config.Healthcheck.Test}}'], {
      env,
      encoding: 'utf8',
    });
    expect(inspect.status, inspect.stderr).toBe(0);
    const [size, user, entrypoint, health] = inspect.stdout.trim().split(' ');
    console.log(`${IMAGE}: ${(Number(size) / 1e6).toFixed(0)} MB (podman image inspect --format '{{.Size}}')`);
    expect(user).toBe('1000:1000');
    expect(JSON.parse(entrypoint!)).toEqual(['/usr/bin/tini', '--', 'tritium']);
    expect(health).toContain('/v2/health/ready');

    const run = spawnSync('podman', ['run', '--rm', '--read-only', '--user', '0', '--entrypoint', 'sh', IMAGE, '-c', INSPECT], { env, encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toContain('top: model_repository node_modules package.json ');
    expect(lines.filter((l) => /^(present|compiler|extra|linked|missing): /.test(l))).toEqual([]);
    expect(lines).toContain(`ort: linux/${process.arch === 'arm64' ? 'arm64' : 'x64'} `);
    expect(lines).toContain('tritium: /opt/tritium/node_modules/@tritium/server/bin/tritium.mjs');
  }, 90_000);
});
