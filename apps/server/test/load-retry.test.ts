/**
 * Triton's `--model-load-retry-count`: a version whose load fails is tried again, up to the count,
 * through a real server. The models' `initialize` fail until they have failed `fail_times` times
 * (a marker file per failure in their own folder): with one retry, a model failing once loads and
 * one failing twice does not, with the second failure as its reason.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pythonLikeBackend } from '@tritium/backend-python-like';
import { startTestServer, type TestServer } from './support/start-server.ts';

const config = (name: string, failTimes: number) => `name: "${name}"
backend: "python"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 1 ] } ]
parameters { key: "fail_times" value: { string_value: "${failTimes}" } }
`;

const MODEL = `import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest, type InitializeArgs } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  initialize(args: InitializeArgs) {
    const times = Number(args.modelConfig.parameters?.['fail_times']?.string_value ?? 0);
    for (let k = 1; k <= times; k++) {
      const marker = join(args.model_repository, 'failed-' + k);
      if (!existsSync(marker)) {
        writeFileSync(marker, '');
        throw new Error('initialize failure ' + k + ' of ' + times);
      }
    }
  }
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => new InferenceResponse({ outputTensors: [new Tensor('Y', getInputTensorByName(r, 'X')!.data as Int32Array, [1])] }));
  }
}
`;

let repo: string;
let s: TestServer;
beforeAll(async () => {
  repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-load-retry-'));
  for (const [name, failTimes] of [['fails_once', 1], ['fails_twice', 2]] as const) {
    mkdirSync(path.join(repo, name, '1'), { recursive: true });
    writeFileSync(path.join(repo, name, 'config.pbtxt'), config(name, failTimes));
    writeFileSync(path.join(repo, name, '1', 'model.ts'), MODEL);
  }
  s = await startTestServer({ modelRepositories: [repo], modelLoadRetryCount: 1, exitOnError: false, strictReadiness: false }, undefined, undefined, [pythonLikeBackend()]);
}, 120_000);
afterAll(async () => {
  await s?.close();
  rmSync(repo, { recursive: true, force: true });
});

it('with --model-load-retry-count 1, a model that fails its first load serves; one that fails twice does not', async () => {
  expect(await s.http.isModelReady('fails_once')).toBe(true);
  expect(await s.http.isModelReady('fails_twice')).toBe(false);
  const index = await s.http.getModelRepositoryIndex();
  const twice = index.find((m) => m.name === 'fails_twice');
  expect(twice?.state).toBe('UNAVAILABLE');
  expect(twice?.reason).toContain('initialize failure 2 of 2');
});
