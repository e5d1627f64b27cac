/** Unit checks of ensemble validation beyond Triton's corpus: pipeline mode, decoupled inheritance, cycles. */
import { describe, expect, it } from 'vitest';
import { parseModelConfigText } from '../../src/config/pbtxt-parser.ts';
import { normalizeModelConfig } from '../../src/config/normalize.ts';
import { validateModelConfig } from '../../src/config/validate.ts';
import type { ModelConfig } from '../../src/config/model-config.ts';
import { validateEnsembleModels } from '../../src/ensemble/validate/ensemble-models.ts';
import { composingModels, findCircularDependency } from '../../src/ensemble/validate/ensemble-dependencies.ts';

const config = (text: string): ModelConfig => normalizeModelConfig(parseModelConfigText(text));

const step = `name: "tok" backend: "identity" max_batch_size: 8
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "IDS" data_type: TYPE_INT64 dims: [ -1 ] } ]`;
const head = `name: "cls" backend: "identity" max_batch_size: 8
input [ { name: "IDS" data_type: TYPE_INT64 dims: [ 16 ] } ]
output [ { name: "LOGITS" data_type: TYPE_FP32 dims: [ 2 ] } ]`;
const pipeline = `name: "pipe" platform: "ensemble" max_batch_size: 8
dynamic_batching { max_queue_delay_microseconds: 1000 }
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "LOGITS" data_type: TYPE_FP32 dims: [ 2 ] } ]
ensemble_scheduling { step [
  { model_name: "tok" model_version: -1 input_map { key: "TEXT" value: "TEXT" } output_map { key: "IDS" value: "ids" } },
  { model_name: "cls" model_version: -1 input_map { key: "IDS" value: "ids" } output_map { key: "LOGITS" value: "LOGITS" } }
] }`;

describe('ensemble validation', () => {
  const models = new Map([
    ['tok', config(step)],
    ['cls', config(head)],
  ]);

  it('accepts a pipeline-batching ensemble (dynamic_batching on the ensemble)', () => {
    const pipe = config(pipeline);
    expect(() => validateModelConfig(pipe)).not.toThrow();
    // [-1] from the tokenizer meets [16] of the classifier: -1 is a wildcard.
    expect(validateEnsembleModels(pipe, (m) => models.get(m)!)).toEqual({ decoupled: false });
  });

  it('makes an ensemble decoupled when a composing model is', () => {
    const decoupledTok = { ...models.get('tok')!, model_transaction_policy: { decoupled: true } };
    expect(validateEnsembleModels(config(pipeline), (m) => (m === 'tok' ? decoupledTok : models.get(m)!))).toEqual({ decoupled: true });
  });

  it('refuses a step input fed from two tensors of different dtypes', () => {
    const wrong = { ...models.get('cls')!, input: [{ ...models.get('cls')!.input[0]!, data_type: 'TYPE_INT32' as const }] };
    expect(() => validateEnsembleModels(config(pipeline), (m) => (m === 'cls' ? wrong : models.get(m)!))).toThrow(
      'in ensemble pipe, ensemble tensor ids: inconsistent data type: TYPE_INT64 is inferred from model tok while TYPE_INT32 is inferred from model cls',
    );
  });

  it('reports cycles through nested ensembles and lists composing models', () => {
    const a = config(pipeline.replace('"pipe"', '"a"').replace('"cls"', '"b"'));
    const b = config(pipeline.replace('"pipe"', '"b"').replace('"tok"', '"a"'));
    const byName = new Map([
      ['a', a],
      ['b', b],
    ]);
    expect(composingModels(a)).toEqual(['tok', 'b']);
    expect(findCircularDependency('a', (n) => byName.get(n))?.message).toBe('circular dependency between ensembles: a -> ... -> b -> a');
    expect(findCircularDependency('pipe', (n) => (n === 'pipe' ? config(pipeline) : models.get(n)))).toBeUndefined();
  });
});
