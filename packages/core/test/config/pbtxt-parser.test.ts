import { describe, expect, it } from 'vitest';
import { InferError } from '../../src/index.ts';
import { ConfigError, configSourcePosition, modelConfigFromJson, parseModelConfigText } from '../../src/config/index.ts';

function parseError(text: string, file?: string): ConfigError {
  try {
    parseModelConfigText(text, file === undefined ? {} : { file });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error(`expected a parse error for: ${text}`);
}

describe('parseModelConfigText: syntax', () => {
  it('returns proto3 defaults for every scalar/repeated/map field and leaves sub-messages absent', () => {
    const c = parseModelConfigText('');
    expect(c).toMatchObject({ name: '', platform: '', max_batch_size: 0, input: [], instance_group: [], parameters: {} });
    expect(c.dynamic_batching).toBeUndefined();
    expect(c.version_policy).toBeUndefined();
    expect('optimization' in c).toBe(false);
  });

  it('takes comments, optional colons before messages, <> delimiters and separators', () => {
    const c = parseModelConfigText(`
      # a comment
      name: "m" ; max_batch_size : 4,   # trailing comment
      dynamic_batching: { max_queue_delay_microseconds: 100 }
      version_policy < specific < versions: 1 versions: 3 > >
    `);
    expect(c.name).toBe('m');
    expect(c.max_batch_size).toBe(4);
    expect(c.dynamic_batching?.max_queue_delay_microseconds).toBe(100);
    expect(c.dynamic_batching?.preferred_batch_size).toEqual([]);
    expect(c.version_policy).toEqual({ specific: { versions: [1, 3] } });
  });

  it('takes list syntax for scalars and messages, and repeated fields as repeated blocks', () => {
    const c = parseModelConfigText(`
      input [ { name: "a" dims: [ 1, 2 ] }, { name: "b" dims: 3 dims: 4 } ]
      input { name: "c" dims: [] }
      output { name: "o" }
      output { name: "p" }
    `);
    expect(c.input.map((i) => i.name)).toEqual(['a', 'b', 'c']);
    expect(c.input.map((i) => i.dims)).toEqual([[1, 2], [3, 4], []]);
    expect(c.output.map((o) => o.name)).toEqual(['o', 'p']);
  });

  it('takes map entries as repeated blocks or as a list, with message values', () => {
    const c = parseModelConfigText(`
      parameters { key: "a" value: { string_value: "1" } }
      parameters [ { key: "b", value { string_value: "2" } }, { key: "c" } ]
      ensemble_scheduling { step { model_name: "x" input_map { key: "IN" value: "t" } output_map [ { key: "OUT", value: "u" } ] } }
      dynamic_batching { priority_queue_policy { key: 2 value { max_queue_size: 5 } } }
    `);
    expect(c.parameters).toEqual({ a: { string_value: '1' }, b: { string_value: '2' }, c: { string_value: '' } });
    expect(c.ensemble_scheduling?.step[0]).toMatchObject({ input_map: { IN: 't' }, output_map: { OUT: 'u' } });
    expect(c.dynamic_batching?.priority_queue_policy['2']).toMatchObject({ max_queue_size: 5, timeout_action: 'REJECT' });
  });

  it('takes enums by name or number and every bool spelling', () => {
    const c = parseModelConfigText(`
      input { data_type: TYPE_FP32 format: 2 }
      input { data_type: 13 }
      instance_group [ { kind: KIND_CPU passive: true }, { passive: True }, { passive: t }, { passive: 1 },
                       { passive: false }, { passive: False }, { passive: f }, { passive: 0 } ]
    `);
    expect(c.input.map((i) => [i.data_type, i.format])).toEqual([
      ['TYPE_FP32', 'FORMAT_NCHW'],
      ['TYPE_STRING', 'FORMAT_NONE'],
    ]);
    expect(c.instance_group.map((g) => g.passive)).toEqual([true, true, true, true, false, false, false, false]);
  });

  it('reads a UTF-16 surrogate pair written as two \\u escapes as one character, as protobuf does', () => {
    // e.g. JSON-minded tools write an emoji as "\ud83d\ude00"; protobuf's FetchUnicodePoint joins them.
    expect(parseModelConfigText('name: "a\\ud83d\\ude00b" platform: "\\U0001F600"').name).toBe('a\u{1F600}b');
    expect(parseModelConfigText('name: "\\ud83d\\ude00"').name).toBe(parseModelConfigText('platform: "\\U0001F600"').platform);
  });

  it('reads strings in either quote with C escapes, \\u escapes and adjacent concatenation', () => {
    const c = parseModelConfigText(
      `name: 'it\\'s' platform: "a\\"b\\\\c\\n\\t" backend: "\\x41\\102\\u00e9" "-" 'x'  runtime: "\\303\\251"`,
    );
    expect(c.name).toBe("it's");
    expect(c.platform).toBe('a"b\\c\n\t');
    expect(c.backend).toBe('ABé-x');
    expect(c.runtime).toBe('é');
  });

  it('reads integers in decimal, hex, octal and negative, and keeps 64-bit values exact', () => {
    const c = parseModelConfigText(`
      input { dims: [ 16, 0x10, 020, -1 ] }
      dynamic_batching {
        priority_levels: 18446744073709551615
        default_priority_level: 9007199254740993
        max_queue_delay_microseconds: 9007199254740991
      }
      ensemble_scheduling { step { model_version: -9223372036854775808 } }
    `);
    expect(c.input[0]!.dims).toEqual([16, 16, 16, -1]);
    expect(c.dynamic_batching?.priority_levels).toBe(18446744073709551615n);
    expect(c.dynamic_batching?.default_priority_level).toBe(9007199254740993n);
    expect(c.dynamic_batching?.max_queue_delay_microseconds).toBe(9007199254740991);
    expect(c.ensemble_scheduling?.step[0]!.model_version).toBe(-9223372036854775808n);
  });

  it('reads floats: decimals, exponents, f suffix, inf and nan', () => {
    const c = parseModelConfigText(`
      sequence_batching { control_input { control { fp32_false_true: [ 1e-3, 1.5f, -inf, .5, 2 ] } } }
      model_metrics { metric_control { histogram_options { buckets: [ -5.0, nan, Infinity, 1E2 ] } } }
    `);
    expect(c.sequence_batching?.control_input[0]!.control[0]!.fp32_false_true).toEqual([
      Math.fround(1e-3),
      1.5,
      -Infinity,
      0.5,
      2,
    ]);
    const buckets = c.model_metrics?.metric_control[0]!.histogram_options!.buckets;
    expect(buckets?.[0]).toBe(-5);
    expect(Number.isNaN(buckets?.[1])).toBe(true);
    expect(buckets?.slice(2)).toEqual([Infinity, 100]);
  });

  it('allows dynamic_batching beside ensemble_scheduling (pipeline batching), no other oneof pair', () => {
    const c = parseModelConfigText('ensemble_scheduling { step {} } dynamic_batching { }');
    expect(c.dynamic_batching).toBeDefined();
    expect(c.ensemble_scheduling?.step).toHaveLength(1);
    expect(parseError('ensemble_scheduling { } sequence_batching { }').reason).toBe(
      'Field "sequence_batching" is specified along with field "ensemble_scheduling", another member of oneof "scheduling_choice".',
    );
  });

  it('accepts the newer name max_inflight_responses for ModelEnsembling field 2', () => {
    expect(parseModelConfigText('ensemble_scheduling { max_inflight_responses: 3 }').ensemble_scheduling?.max_inflight_requests).toBe(3);
  });
});

describe('parseModelConfigText: errors', () => {
  it('is a ConfigError (InferError INVALID_ARG) with file:line:column, line, column and fieldPath', () => {
    const e = parseError('name: "m"\n\ndynamic_batching {\n  preferred_batch_size: [ 4, x ]\n}\n', 'models/m/config.pbtxt');
    expect(InferError.is(e)).toBe(true);
    expect(e.code).toBe('INVALID_ARG');
    expect(e.line).toBe(4);
    expect(e.column).toBe(30);
    expect(e.fieldPath).toBe('dynamic_batching.preferred_batch_size');
    expect(e.message).toBe('models/m/config.pbtxt:4:30: Expected integer, got: x');
  });

  it('suggests the nearest field name for an unknown field', () => {
    const e = parseError('max_batch_size: 1\ndynamic_batchig { }');
    expect(e.message).toBe(
      `config.pbtxt:2:1: Message type "inference.ModelConfig" has no field named "dynamic_batchig"; did you mean 'dynamic_batching'?`,
    );
    expect(parseError('input { nmae: "x" }').reason).toContain(`did you mean 'name'?`);
    expect(parseError('zzzzzzzz: 1').reason).toBe('Message type "inference.ModelConfig" has no field named "zzzzzzzz".');
  });

  it('refuses a singular field set twice, as C++ TextFormat does (HasField: a proto3 default does not count)', () => {
    expect(parseError('name: "a"\nname: "b"').reason).toBe('Non-repeated field "name" is specified multiple times.');
    expect(parseError('dynamic_batching { } dynamic_batching { }').reason).toBe(
      'Non-repeated field "dynamic_batching" is specified multiple times.',
    );
    expect(parseModelConfigText('max_batch_size: 0 max_batch_size: 8').max_batch_size).toBe(8);
  });

  it('refuses two members of one oneof', () => {
    const e = parseError('model_warmup { inputs { key: "i" value: { zero_data: true random_data: true } } }');
    expect(e.reason).toBe('Field "random_data" is specified along with field "zero_data", another member of oneof "input_data_type".');
    expect(parseError('version_policy { latest { } all { } }').reason).toContain('oneof "policy_choice"');
  });

  it('suggests a data type by meaning, not by spelling, and lists the valid ones', () => {
    const types =
      'TYPE_BOOL, TYPE_UINT8, TYPE_UINT16, TYPE_UINT32, TYPE_UINT64, TYPE_INT8, TYPE_INT16, TYPE_INT32, TYPE_INT64, TYPE_FP16, TYPE_FP32, TYPE_FP64, TYPE_STRING, TYPE_BF16';
    const cases: [string, string][] = [
      ['TYPE_FLOAT32', 'TYPE_FP32'], // the nearest spelling is TYPE_UINT32
      ['FP32', 'TYPE_FP32'],
      ['TYPE_FLOAT', 'TYPE_FP32'],
      ['TYPE_BYTES', 'TYPE_STRING'], // BYTES on the wire, STRING in the config
      ['TYPE_FLOAT16', 'TYPE_FP16'],
      ['TYPE_DOUBLE', 'TYPE_FP64'],
      ['INT64', 'TYPE_INT64'],
      ['type_fp32', 'TYPE_FP32'],
      ['TYPE_BOOLEAN', 'TYPE_BOOL'],
    ];
    for (const [written, meant] of cases) {
      expect(parseError(`input { data_type: ${written} }`).reason).toBe(
        `Unknown enumeration value of "${written}" for field "data_type". Did you mean '${meant}'? Valid values: ${types}.`,
      );
    }
    expect(parseError('input { data_type: TYPE_COMPLEX }').reason).toBe(
      `Unknown enumeration value of "TYPE_COMPLEX" for field "data_type". Valid values: ${types}.`,
    );
    // The load API's JSON config words it the same way.
    expect(() => modelConfigFromJson('{"name":"m","input":[{"name":"x","data_type":"TYPE_FLOAT32","dims":[1]}]}')).toThrow(
      /Invalid value for enum field .*"TYPE_FLOAT32"\. Did you mean 'TYPE_FP32'\? Valid values: TYPE_BOOL, /,
    );
  });

  it('names the problem for malformed values', () => {
    expect(parseError('max_batch_size: 4294967296').reason).toBe('Integer out of range (4294967296)');
    expect(parseError('dynamic_batching { max_queue_delay_microseconds: -1 }').reason).toBe('Expected integer, got: -');
    expect(parseError('instance_group { kind: KIND_CPUU }').reason).toBe(
      `Unknown enumeration value of "KIND_CPUU" for field "kind". Did you mean 'KIND_CPU'? Valid values: KIND_AUTO, KIND_GPU, KIND_CPU, KIND_MODEL.`,
    );
    expect(parseError('input { data_type: 99 }').reason).toBe('Unknown enumeration value of "99" for field "data_type".');
    expect(parseError('instance_group { passive: yes }').reason).toBe('Invalid value for boolean field "passive". Value: "yes".');
    // After "got:" protobuf prints the token as written: a string keeps its quotes, nothing is added.
    expect(parseError('max_batch_size: "8"').reason).toBe('Expected integer, got: "8"');
    expect(parseError('input { data_type: "TYPE_FP32" }').reason).toBe('Expected integer or identifier, got: "TYPE_FP32"');
    expect(parseError('name: m').reason).toBe('Expected string, got: m');
    expect(parseError('sequence_batching { direct { minimum_slot_utilization: Half } }').reason).toBe('Expected double, got: half');
    expect(parseError('model_transaction_policy { decoupled: 2 }').reason).toBe('Integer out of range (2)');
    expect(parseError('model_transaction_policy { decoupled: "true" }').reason).toBe('Expected identifier, got: "true"');
    expect(parseError('name "x"').reason).toBe('Expected ":", found ""x"".');
    expect(parseError('name: "x').reason).toBe('Unexpected end of string.');
    expect(parseError('name: "a\nb"').reason).toBe('String literals cannot cross line boundaries.');
    expect(parseError('input { name: "x"').reason).toBe('Expected "}", found end of input.');
    expect(parseError('max_batch_size: 089').reason).toBe('Numbers starting with leading zero must be in octal.');
    expect(parseError('max_batch_size: 12abc').reason).toBe('Need space between number and identifier.');
    expect(parseError('name: [ "a" ]').reason).toBe('Non-repeated field "name" cannot use list syntax.');
    expect(parseError('name: "\\q"').reason).toBe('Invalid escape sequence in string literal.');
    // protobuf's tokenizer: only a lowercase \x takes hex digits, \U takes eight up to 10ffff.
    expect(parseError('name: "\\X41"').reason).toBe('Invalid escape sequence in string literal.');
    expect(parseError('name: "\\xg"').reason).toBe('Expected hex digits for escape sequence.');
    expect(parseError('name: "\\u12"').reason).toBe('Expected four hex digits for \\u escape sequence.');
    expect(parseError('name: "\\U00110000"').reason).toBe('Expected eight hex digits up to 10ffff for \\U escape sequence');
  });

  it('records where each field was written, for later validation errors', () => {
    const c = parseModelConfigText('name: "m"\ninput [\n  { name: "a" },\n  { name: "b"\n    dims: [ 0 ] }\n]\n');
    expect(configSourcePosition(c, 'input[1].dims')).toEqual({ line: 5, column: 5 });
    expect(configSourcePosition(c, 'input[1].reshape')).toEqual({ line: 4, column: 3 });
    expect(configSourcePosition(c, 'name')).toEqual({ line: 1, column: 1 });
    expect(configSourcePosition({}, 'name')).toBeUndefined();
  });
});
