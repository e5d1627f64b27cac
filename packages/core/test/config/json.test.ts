/**
 * Triton's JSON form and the text printer. Golden files (golden/*.json) hold what Triton's printer
 * rules give for the normalized real configs: declaration-order fields, every primitive printed,
 * enums by name, 64-bit ints as numbers only where ModelConfigToJson rewrites them.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InferError } from '../../src/index.ts';
import { modelConfigFromJson, modelConfigToJson, normalizeModelConfig, parseModelConfigText, printModelConfigText } from '../../src/config/index.ts';
import { EXAMPLES_ROOT, SEED_ROOT } from './corpus-cases.ts';

const GOLDEN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'golden');

function realConfigs(): Array<{ name: string; file: string }> {
  const out: Array<{ name: string; file: string }> = [];
  for (const dir of [EXAMPLES_ROOT, SEED_ROOT]) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.pbtxt')).sort()) {
      out.push({ name: f.replace(/\.pbtxt$/, ''), file: path.join(dir, f) });
    }
  }
  return out;
}

const configs = realConfigs();

describe('real configs (triton-examples, seed): parse, JSON form, round trips', () => {
  if (configs.length === 0) {
    console.warn(`skipped: corpus not found at ${EXAMPLES_ROOT} (shared/ is cloned beside the repo in CI)`);
    it.skip(`skipped: corpus not found at ${EXAMPLES_ROOT}`, () => {});
    return;
  }

  it('covers all ten Triton examples and the three seed configs', () => {
    expect(configs.length).toBe(13);
  });

  for (const { name, file } of configs) {
    it(`${name}: parses and prints Triton's JSON (golden)`, () => {
      const normalized = normalizeModelConfig(parseModelConfigText(readFileSync(file, 'utf8'), { file }));
      const golden = readFileSync(path.join(GOLDEN, `${name}.json`), 'utf8');
      expect(modelConfigToJson(normalized, { indent: 2 }) + '\n').toBe(golden);
      // The compact form (what the HTTP endpoint sends) is the same document.
      expect(JSON.parse(modelConfigToJson(normalized))).toEqual(JSON.parse(golden));
    });

    it(`${name}: JSON → config and text → config round trips`, () => {
      const normalized = normalizeModelConfig(parseModelConfigText(readFileSync(file, 'utf8'), { file }));
      const json = modelConfigToJson(normalized);
      expect(modelConfigFromJson(json)).toEqual(normalized);
      expect(parseModelConfigText(printModelConfigText(normalized))).toEqual(normalized);
    });
  }
});

describe('modelConfigToJson', () => {
  it('prints 64-bit values exactly, as numbers where Triton rewrites them and strings elsewhere', () => {
    const c = parseModelConfigText(`
      input { dims: [ -1, 3 ] }
      dynamic_batching { priority_levels: 18446744073709551615 default_priority_level: 1
        priority_queue_policy { key: 1 value { default_timeout_microseconds: 9223372036854775807 } } }
      instance_group { secondary_devices { device_id: 7 } }
      optimization { cuda { graph_spec { input { key: "x" value { dim: [ 4 ] } } } } }
    `);
    const json = modelConfigToJson(c);
    expect(json).toContain('"dims":[-1,3]');
    expect(json).toContain('"priority_levels":18446744073709551615');
    expect(json).toContain('"priority_queue_policy":{"1":{"timeout_action":"REJECT","default_timeout_microseconds":9223372036854775807');
    expect(json).toContain('"secondary_devices":[{"kind":"KIND_NVDLA","device_id":"7"}]');
    expect(json).toContain('"input":{"x":{"dim":["4"]}}');
  });

  it('keeps initial_state dims as strings (Triton looks for them in the wrong object) and state dims as numbers', () => {
    const c = parseModelConfigText(
      'sequence_batching { state { input_name: "i" dims: [ 2 ] initial_state { dims: [ 2 ] zero_data: true } } }',
    );
    const json = modelConfigToJson(c);
    expect(json).toContain('"dims":[2],"initial_state":[{"data_type":"TYPE_INVALID","dims":["2"],"zero_data":true,"name":""}]');
  });

  it('prints floats the way protobuf does, and non-finite values as strings', () => {
    const c = parseModelConfigText(
      'sequence_batching { direct { minimum_slot_utilization: 0.1 } control_input { control { fp32_false_true: [ 0, 1.5, inf, nan ] } } }',
    );
    const json = modelConfigToJson(c);
    expect(json).toContain('"minimum_slot_utilization":0.1');
    expect(json).toContain('"fp32_false_true":[0,1.5,"Infinity","NaN"]');
  });
});

describe('modelConfigFromJson (the load API override)', () => {
  it('takes proto or camelCase names, enums in any case, 64-bit values as numbers or strings', () => {
    const c = modelConfigFromJson(
      '{"name":"m","maxBatchSize":4,"input":[{"name":"x","data_type":"type_fp32","dims":["-1",3]}],' +
        '"dynamic_batching":{"priority_levels":"18446744073709551615","default_priority_level":2}}',
    );
    expect(c.max_batch_size).toBe(4);
    expect(c.input[0]).toMatchObject({ data_type: 'TYPE_FP32', dims: [-1, 3], format: 'FORMAT_NONE' });
    expect(c.dynamic_batching?.priority_levels).toBe(18446744073709551615n);
    expect(c.dynamic_batching?.default_priority_level).toBe(2);
    expect(c.output).toEqual([]);
  });

  it('rejects unknown fields and ill-typed values with INVALID_ARG', () => {
    const bad = (json: string): string => {
      try {
        modelConfigFromJson(json);
      } catch (e) {
        expect(InferError.is(e)).toBe(true);
        expect((e as InferError).code).toBe('INVALID_ARG');
        return (e as InferError).message;
      }
      throw new Error('expected an error');
    };
    expect(bad('{"max_batch_sizes":1}')).toBe('Cannot find field: max_batch_sizes in message inference.ModelConfig');
    expect(bad('{"max_batch_size":"x"}')).toContain('max_batch_size');
    expect(bad('{"max_batch_size":4294967296}')).toContain('out of range');
    expect(bad('{"input":[{"data_type":"TYPE_NOPE"}]}')).toContain('input[0].data_type');
    expect(bad('{"dynamic_batching":{},"sequence_batching":{}}')).toContain('multiple oneof fields');
    expect(bad('[1]')).toBe('model configuration JSON must be an object');
    expect(bad('{"name":')).toContain('Invalid JSON');
  });
});

describe('printModelConfigText', () => {
  it('omits defaults, escapes strings and prints map entries in key order', () => {
    const c = parseModelConfigText(`name: "a\\"b\\n" max_batch_size: 0 parameters { key: "z" value { string_value: "1" } }
      parameters { key: "a" value { string_value: "2" } } input { name: "x" dims: [ 1 ] }`);
    expect(printModelConfigText(c)).toBe(
      'name: "a\\"b\\n"\ninput {\n  name: "x"\n  dims: 1\n}\n' +
        'parameters {\n  key: "a"\n  value {\n    string_value: "2"\n  }\n}\n' +
        'parameters {\n  key: "z"\n  value {\n    string_value: "1"\n  }\n}\n',
    );
  });
});
