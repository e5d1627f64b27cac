/**
 * Poll mode says a thing once: a model whose config or load fails is logged once until its error
 * changes (and not loaded again until its files change), and what reading a model logs along the
 * way (a backend's auto-complete notes) at most once per model, however many polls run.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { identityBackend } from '@tritium/core/testing';
import { InferError } from '../../src/errors.ts';
import { InferenceServer } from '../../src/server/inference-server.ts';
import type { Backend } from '../../src/backend/spi.ts';
import type { Logger } from '../../src/logger.ts';
import { identityConfig, makeRepo, removeRepo } from './repo-fixture.ts';

const repos: string[] = [];
const servers: InferenceServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
  for (const r of repos) await removeRepo(r);
});

function collect(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    log: {
      error: (m) => lines.push(`E ${m}`),
      warn: (m) => lines.push(`W ${m}`),
      info: (m) => lines.push(`I ${m}`),
      verbose: () => {},
    },
  };
}

/** The identity backend, noting in its auto-complete that it had nothing to do, and failing to load while `broken` says so. */
function notingBackend(broken: { now: string | undefined }): Backend {
  const identity = identityBackend();
  return {
    ...identity,
    autoComplete: async (spec) => {
      spec.log.info(`skipping model configuration auto-complete for '${spec.config.name}': inputs and outputs already specified`);
      return spec.config;
    },
    loadModel: async (spec) => {
      if (broken.now) throw new InferError('INVALID_ARG', broken.now);
      return identity.loadModel(spec);
    },
  };
}

async function pollServer(backend: Backend, models: Parameters<typeof makeRepo>[0]) {
  const repo = await makeRepo(models);
  repos.push(repo);
  const { log, lines } = collect();
  const server = new InferenceServer({ repositories: [repo], backends: [backend], modelControlMode: 'poll', repositoryPollSecs: 0, exitOnError: false, log });
  servers.push(server);
  await server.start();
  return { repo, server, lines };
}

const count = (lines: string[], pattern: RegExp): number => lines.filter((l) => pattern.test(l)).length;

describe('poll mode logs a thing once', () => {
  it('a config that fails to read: once until the error changes, once more when it changes, again after it was fixed and broke anew', async () => {
    const { repo, server, lines } = await pollServer(notingBackend({ now: undefined }), { a: { config: identityConfig('a') } });
    const config = path.join(repo, 'a', 'config.pbtxt');
    await writeFile(config, 'max_batch_size: banana');
    for (let i = 0; i < 5; i++) expect(await server.pollNow()).toHaveLength(1);
    expect(count(lines, /^E Poll failed for model directory 'a'/)).toBe(1);

    await writeFile(config, 'max_batch_size: [');
    for (let i = 0; i < 3; i++) await server.pollNow();
    expect(count(lines, /^E Poll failed for model directory 'a'/)).toBe(2);

    await writeFile(config, identityConfig('a'));
    expect(await server.pollNow()).toEqual([]);
    await writeFile(config, 'max_batch_size: [');
    await server.pollNow();
    expect(count(lines, /^E Poll failed for model directory 'a'/)).toBe(3);
  });

  it('a version that fails to load: logged once and not loaded again until its files change', async () => {
    const broken = { now: undefined as string | undefined };
    let loads = 0;
    const backend = notingBackend(broken);
    const counting: Backend = { ...backend, loadModel: (spec) => (loads++, backend.loadModel(spec)) };
    const { repo, server, lines } = await pollServer(counting, { b: { config: identityConfig('b') } });
    expect(server.modelReady('b')).toBe(true);
    broken.now = 'model.ts:3:7: error: Expected ";" but found "oops"';
    await writeFile(path.join(repo, 'b', '1', 'model.ts'), 'const x = 1 oops');
    const before = loads;
    for (let i = 0; i < 5; i++) await server.pollNow();
    expect(loads - before).toBe(1);
    expect(count(lines, /^E failed to load 'b' version 1: .*Expected ";"/)).toBe(1);
    // The version that was serving still serves.
    expect(server.modelReady('b')).toBe(true);

    broken.now = undefined;
    await writeFile(path.join(repo, 'b', '1', 'model.ts'), 'const x = 1;');
    expect(await server.pollNow()).toEqual([]);
    expect(loads - before).toBe(2);
  });

  it("the backend's routine auto-complete line: once per model, not once per poll", async () => {
    const { server, lines } = await pollServer(notingBackend({ now: undefined }), { c: { config: identityConfig('c') }, d: { config: identityConfig('d') } });
    for (let i = 0; i < 5; i++) await server.pollNow();
    expect(count(lines, /skipping model configuration auto-complete for 'c'/)).toBe(1);
    expect(count(lines, /skipping model configuration auto-complete for 'd'/)).toBe(1);
  });
});
