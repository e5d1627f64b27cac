// `node --test` on the compiled testing entry: the model folder named by TRITIUM_TEST_MODEL (see testing-entry.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadModel } from '@tritium/backend-python-like/testing';

test('a model.ts runs from node --test', async () => {
  const model = await loadModel(process.env.TRITIUM_TEST_MODEL);
  const { responses, logs } = await model.execute([{ TEXT: ['abc', 'de'] }]);
  assert.deepEqual([...responses[0].outputs.LENGTH.data], [3n, 2n]);
  assert.deepEqual(logs, [{ level: 'info', message: 'batch of 1 requests, 2 rows' }]);
  await model.finalize();
});
