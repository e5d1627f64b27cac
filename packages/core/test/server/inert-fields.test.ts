/**
 * `response_cache` and `rate_limiter` take effect only on a server started with `--cache-config` /
 * `--rate-limit execution_count`: loading a model that sets them on a server without logs one
 * warning per field naming it and the flag (once per load, not on every poll); with them, none.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { captureLog, identityBackend } from '@tritium/core/testing';
import { InferenceServer } from '../../src/server/inference-server.ts';
import { identityConfig, makeRepo, removeRepo } from './repo-fixture.ts';

const repos: string[] = [];
const servers: InferenceServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
  for (const r of repos) await removeRepo(r);
});

const warnings = (lines: readonly string[]) => lines.filter((l) => l.startsWith('W ') && l.includes('has no effect'));

describe('config fields accepted without effect', () => {
  it('warns about response_cache and each rate_limiter, naming the field and the flag, once per load', async () => {
    const cached = identityConfig('cached', { extra: 'response_cache { enable: true }' });
    const limited = identityConfig('limited').replace(
      'instance_group [ { kind: KIND_CPU count: 1 } ]',
      'instance_group [ { kind: KIND_CPU count: 1 }, { kind: KIND_CPU count: 1 rate_limiter { resources [ { name: "R1" count: 2 } ] priority: 2 } } ]',
    );
    const repo = await makeRepo({
      cached: { config: cached },
      limited: { config: limited },
      off: { config: identityConfig('off', { extra: 'response_cache { enable: false }' }) },
      plain: { config: identityConfig('plain') },
    });
    repos.push(repo);
    const log = captureLog();
    const server = new InferenceServer({ repositories: [repo], backends: [identityBackend()], modelControlMode: 'poll', repositoryPollSecs: 0, log });
    servers.push(server);
    await server.start();
    // Models load concurrently: compare in a fixed order.
    expect(warnings(log.lines).sort()).toEqual([
      "W model 'cached': 'response_cache' is accepted but has no effect: the server has no response cache (start it with --cache-config local,size=<bytes>), every request runs the model",
      "W model 'limited': 'instance_group[1].rate_limiter' is accepted but has no effect: rate limiting is off (start the server with --rate-limit execution_count), each instance runs whenever it is free",
    ]);
    // The models serve all the same.
    expect(server.modelReady('cached')).toBe(true);
    expect(server.modelReady('limited')).toBe(true);
    // An unchanged model is not reloaded by a poll, so it does not warn again; a changed one does.
    await server.pollNow();
    expect(warnings(log.lines)).toHaveLength(2);
    await writeFile(path.join(repo, 'cached', 'config.pbtxt'), cached.replace('max_batch_size: 8', 'max_batch_size: 4'));
    await server.pollNow();
    expect(warnings(log.lines)).toHaveLength(3);
    expect(warnings(log.lines)[2]).toContain("model 'cached': 'response_cache'");
  });

  it('does not warn on a server started with a response cache and rate limiting', async () => {
    const limited = identityConfig('limited').replace(
      'instance_group [ { kind: KIND_CPU count: 1 } ]',
      'instance_group [ { kind: KIND_CPU count: 1 rate_limiter { resources [ { name: "R1" count: 2 } ] } } ]',
    );
    const repo = await makeRepo({ cached: { config: identityConfig('cached', { extra: 'response_cache { enable: true }' }) }, limited: { config: limited } });
    repos.push(repo);
    const log = captureLog();
    const server = new InferenceServer({ repositories: [repo], backends: [identityBackend()], responseCacheBytes: 4096, rateLimit: {}, log });
    servers.push(server);
    await server.start();
    expect(warnings(log.lines)).toEqual([]);
  });
});
