/**
 * The conformance suites themselves: an in-process identity backend that keeps the backend SPI's
 * contract passes every case, and backends or sources that break one clause fail the case for it.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InferError, tensorFromTyped, type InferRequest } from '@tritium/core';
import { BACKEND_API_VERSION, type Backend, type ExecuteResult } from '@tritium/core/backend';
import { localRepositorySource, type RepositorySource } from '@tritium/core/repository';
import { backendConformanceSuite, repositorySourceConformanceSuite, type BackendConformanceSubject, type ConformanceSuite } from '@tritium/core/testing';

type Answer = (batch: readonly InferRequest[], signal: AbortSignal) => ExecuteResult[];

/** OUTPUT0 = INPUT0 per request; a request whose first value is negative is refused (INVALID_ARG). */
const keepsTheContract: Answer = (batch, signal) =>
  batch.map((r) => {
    if (signal.aborted) return new InferError('CANCELLED', 'request cancelled');
    const input = r.inputs[0]!;
    if (new Float32Array(input.data.slice().buffer)[0]! < 0) return new InferError('INVALID_ARG', 'negative input');
    return { id: r.id, model: r.model, version: 1, outputs: [{ ...input, name: 'OUTPUT0' }] };
  });

/** A backend whose instances answer in process with `answer`; after dispose they refuse UNAVAILABLE. */
function inProcessBackend(answer: Answer): Backend {
  return {
    name: 'inproc',
    apiVersion: BACKEND_API_VERSION,
    async loadModel() {
      return {
        async createInstance() {
          let disposed = false;
          return {
            async execute(batch, signal) {
              if (disposed) throw new InferError('UNAVAILABLE', 'instance is unloaded');
              return { results: answer(batch, signal) };
            },
            async dispose() {
              disposed = true;
            },
          };
        },
        async dispose() {},
      };
    },
  };
}

function subject(answer: Answer): BackendConformanceSubject {
  return {
    backend: inProcessBackend(answer),
    backendName: 'inproc',
    writeIdentityModel: () =>
      'max_batch_size: 8\ninput [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]\ninstance_group [ { kind: KIND_CPU count: 1 } ]\n',
    refusedRequest: (model) => ({ id: 'refused', model, inputs: [tensorFromTyped('INPUT0', 'FP32', [1, 3], Float32Array.of(-1, 2, 3))] }),
  };
}

const suites: ConformanceSuite[] = [];
afterAll(async () => {
  for (const s of suites) await s.close();
});

/** The names of the cases of `suite` that fail. */
async function failing(suite: ConformanceSuite): Promise<string[]> {
  suites.push(suite);
  const failed: string[] = [];
  for (const c of suite.cases) await c.run().catch(() => failed.push(c.name));
  return failed;
}

describe('backend conformance suite', () => {
  it('passes a backend that keeps the contract', async () => {
    expect(await failing(backendConformanceSuite(subject(keepsTheContract)))).toEqual([]);
  });

  it('fails a backend that answers a batch out of order', async () => {
    const reversed: Answer = (batch, signal) => keepsTheContract(batch, signal).reverse();
    expect(await failing(backendConformanceSuite(subject(reversed)))).toContain('execute answers a batch: one result per request, in order, rows kept');
  });

  it('fails a backend that refuses a request with a plain Error', async () => {
    const plain: Answer = (batch, signal) => keepsTheContract(batch, signal).map((r) => (InferError.is(r) ? (new Error(r.message) as unknown as InferError) : r));
    expect(await failing(backendConformanceSuite(subject(plain)))).toContain('a request the model refuses fails alone, as an InferError with a Triton code');
  });

  it('fails a backend that runs a request whose signal is aborted', async () => {
    const deaf: Answer = (batch) => keepsTheContract(batch, new AbortController().signal);
    expect(await failing(backendConformanceSuite(subject(deaf)))).toContain(
      'an execute whose signal is already aborted is answered CANCELLED, and the instance serves on',
    );
  });
});

describe('repository source conformance suite', () => {
  const roots: string[] = [];
  afterAll(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));

  it('fails a source that lets a path leave the repository', async () => {
    const suite = repositorySourceConformanceSuite({
      async open(files) {
        const root = await mkdtemp(path.join(tmpdir(), 'tritium-leaky-source-'));
        roots.push(root);
        const write = async (rel: string, bytes: Uint8Array): Promise<void> => {
          await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
          await writeFile(path.join(root, rel), bytes);
        };
        for (const [rel, bytes] of files) await write(rel, bytes);
        const inner = localRepositorySource(root);
        // Answers "nothing there" for a path with `..` instead of refusing it.
        const leaky: RepositorySource = { ...inner, stat: async (p, o) => (p.includes('..') ? undefined : inner.stat(p, o)) };
        return { source: leaky, write, remove: (rel) => rm(path.join(root, rel)) };
      },
    });
    expect(await failing(suite)).toEqual(['paths that leave the repository are refused with INVALID_ARG by list, stat and fetch']);
  });
});
