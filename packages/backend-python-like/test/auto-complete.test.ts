import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '@tritium/core';
import { pythonLikeBackend } from '../src/index.ts';
import { FIXTURES, fixtureConfig } from './helpers.ts';

describe('static autoCompleteConfig (Triton auto_complete_config)', () => {
  it('fills inputs, outputs, max_batch_size and dynamic batching from the model class', async () => {
    const config = await fixtureConfig('auto');
    const modelDir = path.join(FIXTURES, 'auto');
    const done = await pythonLikeBackend().autoComplete!({ config, modelDir, versionDir: path.join(modelDir, '1'), log: silentLogger });
    expect(done.max_batch_size).toBe(4);
    expect(done.input.map((i) => [i.name, i.data_type, i.dims])).toEqual([['IN', 'TYPE_FP32', [2]]]);
    expect(done.output.map((o) => [o.name, o.data_type, o.dims])).toEqual([['OUT', 'TYPE_FP32', [2]]]);
    expect(done.dynamic_batching).toBeDefined();
  });

  it('leaves a config alone when the class has no autoCompleteConfig', async () => {
    const config = await fixtureConfig('upper');
    const modelDir = path.join(FIXTURES, 'upper');
    const done = await pythonLikeBackend().autoComplete!({ config, modelDir, versionDir: path.join(modelDir, '1'), log: silentLogger });
    expect(done).toEqual(config);
  });

  it('runs in a sandboxed child process for uploaded files and process isolation, in a thread otherwise', async () => {
    const modelDir = path.join(FIXTURES, 'auto_where');
    const base = { modelDir, versionDir: path.join(modelDir, '1'), log: silentLogger };
    const config = await fixtureConfig('auto_where');
    const where = async (o: { uploadedFiles?: boolean; backend?: Parameters<typeof pythonLikeBackend>[0] }) =>
      (await pythonLikeBackend(o.backend).autoComplete!({ ...base, config, ...(o.uploadedFiles ? { uploadedFiles: true } : {}) })).output[0]!.name;
    expect(await where({})).toBe('RAN_IN_THREAD');
    expect(await where({ uploadedFiles: true })).toBe('RAN_IN_PROCESS');
    expect(await where({ backend: { defaultIsolation: 'process' } })).toBe('RAN_IN_PROCESS');
  });

  it("skips the throw-away worker when the model's files cannot define autoCompleteConfig, and runs it when a class extends another", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-autocomplete-'));
    try {
      // Importing this model leaves a marker file: it shows whether auto-complete imported it.
      const marker = path.join(dir, 'imported');
      const model = (extra: string) => `import { writeFileSync } from 'node:fs';
writeFileSync(${JSON.stringify(marker)}, 'x');
class Base {}
export default class TritonPythonModel ${extra} { execute() { return []; } }
`;
      mkdirSync(path.join(dir, '1'));
      const config = { ...(await fixtureConfig('upper')), name: 'm' };
      const spec = { config, modelDir: dir, versionDir: path.join(dir, '1'), log: silentLogger };
      writeFileSync(path.join(dir, '1', 'model.ts'), model(''));
      expect(await pythonLikeBackend().autoComplete!(spec)).toEqual(config);
      expect(existsSync(marker)).toBe(false);
      // `extends` could inherit a static autoCompleteConfig: the worker runs.
      writeFileSync(path.join(dir, '1', 'model.ts'), model('extends Base'));
      expect(await pythonLikeBackend().autoComplete!(spec)).toEqual(config);
      expect(existsSync(marker)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
