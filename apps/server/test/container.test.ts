/** The composition root: backends are multi-injected; no backend bound is an empty list. */
import { expect, it } from 'vitest';
import { type InferenceServerApi } from '@tritium/core';
import { BACKEND_API_VERSION, type Backend } from '@tritium/core/backend';
import { createContainer } from '../src/container.ts';
import { defaultServeOptions } from '../src/cli/serve-options.ts';
import { TOKENS } from '../src/tokens.ts';

const backend = (name: string): Backend => ({ name, apiVersion: BACKEND_API_VERSION, loadModel: () => Promise.reject(new Error('unused')) });

it('hands every bound backend, in binding order, to the InferenceServer factory', () => {
  const seen: string[][] = [];
  const options = { ...defaultServeOptions(), modelRepositories: ['unused'] };
  const factory = ({ backends }: { backends: Backend[] }) => {
    seen.push(backends.map((b) => b.name));
    return {} as InferenceServerApi;
  };
  const c = createContainer({ options, backends: [backend('a')], inferenceServer: factory });
  c.bind<Backend>(TOKENS.Backend).toConstantValue(backend('b'));
  c.get(TOKENS.InferenceServer);
  c.get(TOKENS.InferenceServer);
  expect(seen).toEqual([['a', 'b']]);
  const empty = createContainer({ options, inferenceServer: factory });
  empty.get(TOKENS.InferenceServer);
  expect(seen[1]).toEqual([]);
});
