/**
 * Property tests: whatever text comes in (real configs mutated, token soup, random bytes), the
 * parser returns a config or throws a ConfigError, and normalize/validate throw only InferErrors.
 * Configs generated from the schema survive text and JSON round trips. Runs are bounded (~2 s).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InferError } from '../../src/index.ts';
import { enumDescriptor, messageDescriptor } from '../../src/config/schema.ts';
import {
  ConfigError,
  MESSAGES,
  modelConfigFromJson,
  modelConfigToJson,
  normalizeModelConfig,
  parseModelConfigText,
  printModelConfigText,
  validateModelConfig,
} from '../../src/config/index.ts';
import type { ModelConfig } from '../../src/index.ts';
import type { FieldDescriptor, ValueType } from '../../src/config/index.ts';
import { EXAMPLES_ROOT, L0_ROOT, SEED_ROOT } from './corpus-cases.ts';

function corpusTexts(): string[] {
  const texts: string[] = [];
  for (const dir of [EXAMPLES_ROOT, SEED_ROOT]) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.pbtxt'))) texts.push(readFileSync(path.join(dir, f), 'utf8'));
  }
  const reshape = path.join(L0_ROOT, 'noautofill_platform/reshape_variable1/config.pbtxt');
  if (existsSync(reshape)) texts.push(readFileSync(reshape, 'utf8'));
  // Always have something to mutate, even without the shared corpus.
  texts.push('name: "m"\nbackend: "onnxruntime"\nmax_batch_size: 8\ninput [ { name: "x" data_type: TYPE_FP32 dims: [ -1, 16 ] } ]\n' +
    'dynamic_batching { preferred_batch_size: [ 4, 8 ] priority_queue_policy { key: 1 value { max_queue_size: 3 } } }\n');
  return texts;
}

/** Parse, and if that works normalize + validate: only config errors may come out. */
function runPipeline(text: string): void {
  let config: ModelConfig;
  try {
    config = parseModelConfigText(text, { file: 'fuzz.pbtxt' });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    expect(e.message.startsWith('fuzz.pbtxt:')).toBe(true);
    expect(e.line).toBeGreaterThanOrEqual(1);
    expect(e.column).toBeGreaterThanOrEqual(1);
    return;
  }
  try {
    validateModelConfig(normalizeModelConfig(config, { modelName: 'fuzz' }));
    modelConfigToJson(config);
  } catch (e) {
    if (!InferError.is(e)) throw e;
  }
}

type Mutation = { kind: 'delete' | 'insert' | 'duplicate' | 'truncate'; at: number; len: number; char: string };

function mutate(text: string, mutations: Mutation[]): string {
  let t = text;
  for (const m of mutations) {
    const at = t.length === 0 ? 0 : m.at % (t.length + 1);
    if (m.kind === 'delete') t = t.slice(0, at) + t.slice(at + m.len);
    else if (m.kind === 'insert') t = t.slice(0, at) + m.char + t.slice(at);
    else if (m.kind === 'duplicate') t = t.slice(0, at + m.len) + t.slice(at, at + m.len) + t.slice(at + m.len);
    else t = t.slice(0, at);
  }
  return t;
}

const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('delete', 'insert', 'duplicate', 'truncate'),
  at: fc.nat(5000),
  len: fc.integer({ min: 1, max: 12 }),
  char: fc.constantFrom('{', '}', '[', ']', '<', '>', ':', ',', ';', '"', "'", '\\', '-', '#', '\n', ' ', '0', 'x', '.', 'e', 'é'),
});

const FIELD_NAMES = [...new Set([...MESSAGES.values()].flatMap((m) => m.fields.map((f) => f.name)))];
const tokenArb = fc.oneof(
  fc.constantFrom('{', '}', '[', ']', '<', '>', ':', ',', ';', '-', '\n', '# c\n', 'key', 'value', 'true', 'inf', 'nan'),
  fc.constantFrom(...FIELD_NAMES),
  fc.constantFrom('TYPE_FP32', 'KIND_CPU', 'REJECT', 'CONTROL_SEQUENCE_START'),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.double({ noNaN: false }).map(String),
  fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)),
);

/** A random value of a schema type (messages recurse up to `depth`). */
function valueArb(type: ValueType, depth: number): fc.Arbitrary<unknown> {
  if (type.kind === 'enum') return fc.constantFrom(...enumDescriptor(type.enumName).values);
  if (type.kind === 'message') return messageArb(type.messageName, depth + 1);
  switch (type.scalar) {
    case 'string':
      return fc.string({ maxLength: 8 });
    case 'bool':
      return fc.boolean();
    case 'int32':
      return fc.integer();
    case 'uint32':
      return fc.nat(2 ** 32 - 1);
    case 'int64':
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((b) => (Number.isSafeInteger(Number(b)) ? Number(b) : b));
    case 'uint64':
      return fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((b) => (Number.isSafeInteger(Number(b)) ? Number(b) : b));
    case 'float':
      return fc.float({ noNaN: true, noDefaultInfinity: false }).map((x) => (Object.is(x, -0) ? 0 : x));
    case 'double':
      return fc.double({ noNaN: true }).map((x) => (Object.is(x, -0) ? 0 : x));
  }
}

function fieldArb(f: FieldDescriptor, depth: number): fc.Arbitrary<unknown> {
  if (f.label === 'repeated') return fc.array(valueArb(f.value, depth), { maxLength: depth > 2 ? 0 : 2 });
  if (f.label === 'map') {
    const key = f.mapKey === 'string' ? fc.string({ maxLength: 5 }) : fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String);
    return fc.dictionary(key, valueArb(f.value, depth), { maxKeys: depth > 2 ? 0 : 2 });
  }
  return valueArb(f.value, depth);
}

/** A random message of `name`: every non-presence field, plus some sub-messages and one member per oneof. */
function messageArb(name: string, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const desc = messageDescriptor(name);
  const plain = desc.fields.filter((f) => f.label !== 'singular' || (f.value.kind !== 'message' && !f.oneof));
  const optional = desc.fields.filter((f) => f.label === 'singular' && (f.value.kind === 'message' || f.oneof));
  const base = fc.record(Object.fromEntries(plain.map((f) => [f.name, fieldArb(f, depth)])));
  if (depth > 3 || optional.length === 0) return base as fc.Arbitrary<Record<string, unknown>>;
  return fc
    .tuple(base, fc.subarray(optional, { maxLength: Math.min(2, optional.length) }))
    .chain(([b, chosen]) => {
      const oneofSeen = new Set<string>();
      const picked = chosen.filter((f) => (f.oneof ? !oneofSeen.has(f.oneof) && oneofSeen.add(f.oneof) : true));
      return fc
        .tuple(...picked.map((f) => valueArb(f.value, depth)))
        .map((values) => ({ ...b, ...Object.fromEntries(picked.map((f, i) => [f.name, values[i]])) }));
    });
}

describe('config parser fuzzing', () => {
  const texts = corpusTexts();

  it('mutated real configs: a config or a ConfigError, never anything else', () => {
    fc.assert(
      fc.property(fc.nat(texts.length - 1), fc.array(mutationArb, { minLength: 1, maxLength: 4 }), (i, muts) => {
        runPipeline(mutate(texts[i]!, muts));
      }),
      { numRuns: 200 },
    );
  });

  it('token soup and arbitrary strings: a config or a ConfigError', () => {
    fc.assert(
      fc.property(fc.array(tokenArb, { maxLength: 40 }), (tokens) => runPipeline(tokens.join(' '))),
      { numRuns: 250 },
    );
    fc.assert(fc.property(fc.string({ maxLength: 200 }), (s) => runPipeline(s)), { numRuns: 120 });
  });

  it('mutated Triton JSON: modelConfigFromJson returns a config or throws an InferError', () => {
    const jsons = texts.flatMap((t) => {
      try {
        return [modelConfigToJson(normalizeModelConfig(parseModelConfigText(t), { modelName: 'fuzz' }))];
      } catch {
        return [];
      }
    });
    // The built-in config above normalizes, so this never runs on an empty list (a fresh clone has no corpus).
    expect(jsons.length).toBeGreaterThan(0);
    fc.assert(
      fc.property(fc.nat(jsons.length - 1), fc.array(mutationArb, { minLength: 1, maxLength: 3 }), (i, muts) => {
        try {
          modelConfigFromJson(mutate(jsons[i]!, muts));
        } catch (e) {
          if (!InferError.is(e)) throw e;
        }
      }),
      { numRuns: 150 },
    );
  });

  it('deep nesting and long inputs end in bounded time with an error, not a stack overflow', () => {
    const deep = 'optimization '.concat('{ cuda '.repeat(5000));
    expect(() => parseModelConfigText(deep)).toThrow(ConfigError);
    const nested = 'input '.concat('['.repeat(10000));
    expect(() => parseModelConfigText(nested)).toThrow(ConfigError);
    expect(() => modelConfigFromJson('['.repeat(100000))).toThrow(InferError);
  });

  it('schema-generated configs survive text and JSON round trips', () => {
    fc.assert(
      fc.property(messageArb('inference.ModelConfig', 0), (generated) => {
        const config = generated as unknown as ModelConfig;
        const reparsed = parseModelConfigText(printModelConfigText(config));
        expect(modelConfigToJson(reparsed)).toBe(modelConfigToJson(config));
        expect(modelConfigToJson(modelConfigFromJson(modelConfigToJson(config)))).toBe(modelConfigToJson(config));
      }),
      { numRuns: 60 },
    );
  });
});
