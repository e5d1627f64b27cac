/** The local folder source through the repository-source conformance suite (@tritium/core/testing). */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { localRepositorySource } from '@tritium/core/repository';
import { repositorySourceConformanceSuite } from '@tritium/core/testing';

const suite = repositorySourceConformanceSuite({
  async open(files) {
    const root = await mkdtemp(path.join(tmpdir(), 'tritium-local-source-'));
    const write = async (rel: string, bytes: Uint8Array): Promise<void> => {
      await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
      await writeFile(path.join(root, rel), bytes);
    };
    for (const [rel, bytes] of files) await write(rel, bytes);
    return {
      source: localRepositorySource(root),
      write,
      remove: (rel) => rm(path.join(root, rel)),
      dispose: () => rm(root, { recursive: true, force: true }),
    };
  },
});

describe('repository source conformance: local folder', () => {
  afterAll(() => suite.close());
  for (const c of suite.cases) it(c.name, () => c.run());
});
