/**
 * The manifests run: deploy/container/kube-play.sh plays `tritium deploy kubernetes` output with
 * `podman kube play` and the project's image, waits for the probes, infers on each pod, scales to
 * two pods and takes them down (exit code 0 after the drain). Where podman or the image is missing
 * (the image is built by deploy/container/build-and-run.sh, ~15 min) the test skips, saying why.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const SCRIPT = path.join(ROOT, 'deploy/container/kube-play.sh');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'apps/server/package.json'), 'utf8')) as { version: string }).version;
const IMAGE = `localhost/tritium:${VERSION}`;
const env = { ...process.env, CONTAINERS_CONF: path.join(ROOT, 'deploy/container/containers.conf') };

function skipReason(): string | undefined {
  if (spawnSync('sh', ['-c', 'command -v podman'], { encoding: 'utf8' }).status !== 0) return 'podman is not installed (Debian packages podman and runc)';
  if (spawnSync('podman', ['image', 'exists', IMAGE], { env }).status !== 0) return `image ${IMAGE} is not built (deploy/container/build-and-run.sh builds it)`;
  return undefined;
}

const reason = skipReason();
if (reason) console.warn(`skipping podman kube play of the manifests: ${reason}`);

describe.skipIf(reason !== undefined)('tritium deploy kubernetes under podman kube play', () => {
  it('serves from two pods with their probes passing and takes them down cleanly', () => {
    const run = spawnSync('bash', [SCRIPT], { cwd: ROOT, env, encoding: 'utf8', timeout: 580_000 });
    const out = `${run.stdout}\n${run.stderr}`;
    expect(run.status, out).toBe(0);
    for (const pod of ['tritium', 'tritium-2']) {
      expect(out).toMatch(new RegExp(`pod ${pod} \\([0-9.]+\\): startup/readiness probe GET :8003/v2/health/ready \\(published 127\\.0\\.0\\.1:\\d+\\) passed`));
      expect(out).toContain(`pod ${pod}: livenessProbe GET :8003/v2/health/live 200`);
      expect(out).toMatch(new RegExp(`pod ${pod}: POST 127\\.0\\.0\\.1:\\d+/v2/models/sentiment_ensemble/infer 200 .*"name":"LOGITS"`));
      expect(out).toContain(`pod ${pod}: exit code 0`);
    }
    expect(out).toContain('both pods stopped with exit code 0 and removed');
    // What the runtime did not honour, read off the run: the grace period's stop timeout and the preStop delay.
    expect(out).toMatch(/- terminationGracePeriodSeconds 40: stop timeout \d+ s/);
    expect(out).toMatch(/- preStop sleep 5: SIGTERM reached the server tritium -?[\d.]+ s, tritium-2 -?[\d.]+ s after podman pod stop/);
  }, 600_000);
});
