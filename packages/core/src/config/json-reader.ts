/**
 * Triton's JSON form of a ModelConfig, reading side (JsonToModelConfig, the load API's `config`
 * parameter): proto or lowerCamelCase names, unknown fields rejected, enums case-insensitive,
 * 64-bit values as numbers or strings (kept exact: numbers are read as text, never through a double).
 */
import { InferError } from '../errors.ts';
import type { ModelConfig } from './model-config.ts';
import { enumValueHint } from './enum-hint.ts';
import {
  MODEL_CONFIG,
  enumDescriptor,
  fillDefaults,
  messageDescriptor,
  oneofConflictAllowed,
  type FieldDescriptor,
  type MessageDescriptor,
  type ScalarType,
  type ValueType,
} from './schema.ts';

/** A parsed JSON number, kept as text so 64-bit values stay exact. */
class JsonNumber {
  constructor(readonly text: string) {}
}
type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | { [key: string]: JsonValue };

function jsonError(message: string): InferError {
  return new InferError('INVALID_ARG', message);
}

const NUMBER = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

/** A small JSON reader that keeps number literals as text (JSON.parse would round 64-bit values). */
function readJson(text: string): JsonValue {
  return new JsonTextReader(text).read();
}

class JsonTextReader {
  /** The offset read next. */
  private i = 0;
  /** Objects and arrays open now (at most 100). */
  private depth = 0;

  constructor(private readonly text: string) {}

  read(): JsonValue {
    const v = this.value();
    this.ws();
    if (this.i !== this.text.length) this.fail('trailing characters');
    return v;
  }

  private ws(): void {
    for (;;) {
      const c = this.text.charCodeAt(this.i);
      if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return;
      this.i++;
    }
  }

  private fail(what: string): never {
    throw jsonError(`Invalid JSON at offset ${this.i}: ${what}`);
  }

  private value(): JsonValue {
    this.ws();
    const c = this.text[this.i];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    return this.literal();
  }

  private object(): { [key: string]: JsonValue } {
    const obj: { [key: string]: JsonValue } = {};
    if (this.open('}')) return obj;
    do {
      this.ws();
      if (this.text[this.i] !== '"') this.fail('expected a string key');
      const key = this.string();
      this.ws();
      if (this.text[this.i] !== ':') this.fail("expected ':'");
      this.i++;
      obj[key] = this.value();
    } while (!this.closeOrComma('}'));
    return obj;
  }

  private array(): JsonValue[] {
    const arr: JsonValue[] = [];
    if (this.open(']')) return arr;
    do arr.push(this.value());
    while (!this.closeOrComma(']'));
    return arr;
  }

  /** Enters an object or array at its opening character; true when it closes at once with `close` (consumed). */
  private open(close: '}' | ']'): boolean {
    if (++this.depth > 100) this.fail('nesting too deep');
    this.i++;
    this.ws();
    if (this.text[this.i] !== close) return false;
    this.i++;
    this.depth--;
    return true;
  }

  /** After a member or element: true at `close` (consumed: the object or array ends), false after a `,`. */
  private closeOrComma(close: '}' | ']'): boolean {
    this.ws();
    if (this.text[this.i] === ',') {
      this.i++;
      return false;
    }
    if (this.text[this.i] === close) {
      this.i++;
      this.depth--;
      return true;
    }
    return this.fail(`expected ',' or '${close}'`);
  }

  /** A number (kept as text), true, false or null. */
  private literal(): JsonValue {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.text);
    if (m && m[0].length > 0) {
      this.i += m[0].length;
      return new JsonNumber(m[0]);
    }
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.text.startsWith(word, this.i)) {
        this.i += word.length;
        return v;
      }
    }
    return this.fail('unexpected character');
  }

  private string(): string {
    const text = this.text;
    const start = this.i;
    this.i++;
    let escaped = false;
    for (;;) {
      const c = text.charCodeAt(this.i);
      if (Number.isNaN(c)) this.fail('unterminated string');
      if (c === 34) break;
      if (c === 92) {
        escaped = true;
        this.i += 2;
      } else {
        if (c < 0x20) this.fail('control character in string');
        this.i++;
      }
    }
    this.i++;
    if (!escaped) return text.slice(start + 1, this.i - 1);
    try {
      return JSON.parse(text.slice(start, this.i)) as string;
    } catch {
      return this.fail('bad string');
    }
  }
}

const RANGES: Record<'int32' | 'uint32' | 'int64' | 'uint64', readonly [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};

function toInteger(v: JsonValue, scalar: 'int32' | 'uint32' | 'int64' | 'uint64', where: string): number | bigint {
  let big: bigint;
  const text = v instanceof JsonNumber ? v.text : typeof v === 'string' ? v.trim() : undefined;
  if (text === undefined) throw jsonError(`Invalid value for ${where}: expected an integer`);
  try {
    big = BigInt(text);
  } catch {
    const num = Number(text);
    if (text === '' || !Number.isInteger(num)) throw jsonError(`Invalid value for ${where}: ${text} is not an integer`);
    big = BigInt(num);
  }
  const [lo, hi] = RANGES[scalar];
  if (big < lo || big > hi) throw jsonError(`Integer out of range for ${where}: ${text}`);
  const n = Number(big);
  return Number.isSafeInteger(n) ? n : big;
}

function readScalar(scalar: ScalarType, v: JsonValue, where: string): unknown {
  switch (scalar) {
    case 'string':
      if (typeof v !== 'string') throw jsonError(`Invalid value for ${where}: expected a string`);
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw jsonError(`Invalid value for ${where}: expected true or false`);
      return v;
    case 'float':
    case 'double': {
      let num: number;
      if (v instanceof JsonNumber) num = Number(v.text);
      else if (v === 'NaN') num = NaN;
      else if (v === 'Infinity') num = Infinity;
      else if (v === '-Infinity') num = -Infinity;
      else if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) num = Number(v);
      else throw jsonError(`Invalid value for ${where}: expected a number`);
      return scalar === 'float' ? Math.fround(num) : num;
    }
    default:
      return toInteger(v, scalar, where);
  }
}

function readValue(type: ValueType, v: JsonValue, where: string): unknown {
  if (type.kind === 'message') {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof JsonNumber) {
      throw jsonError(`Invalid value for ${where}: expected an object`);
    }
    return readMessage(messageDescriptor(type.messageName), v, where);
  }
  if (type.kind === 'enum') {
    const e = enumDescriptor(type.enumName);
    if (typeof v === 'string') {
      const name = e.values.find((x) => x.toLowerCase() === v.toLowerCase());
      if (name) return name;
    } else if (v instanceof JsonNumber) {
      const name = e.byNumber.get(Number(v.text));
      if (name) return name;
    }
    const hint = typeof v === 'string' ? enumValueHint(type.enumName, v) : '';
    throw jsonError(`Invalid value for enum field ${where}: ${v instanceof JsonNumber ? v.text : JSON.stringify(v)}${hint ? `.${hint}` : ''}`);
  }
  return readScalar(type.scalar, v, where);
}

function findField(desc: MessageDescriptor, key: string): FieldDescriptor | undefined {
  return desc.byName.get(key) ?? desc.byJsonName.get(key);
}

function readMessage(desc: MessageDescriptor, obj: { [key: string]: JsonValue }, where: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const oneofs = new Map<string, string>();
  for (const [key, v] of Object.entries(obj)) {
    const f = findField(desc, key);
    if (!f) throw jsonError(`Cannot find field: ${key} in message ${desc.name}`);
    const path = where ? `${where}.${f.name}` : f.name;
    if (v === null) continue;
    if (f.oneof) {
      const other = oneofs.get(f.oneof);
      if (other !== undefined && !oneofConflictAllowed(desc.name, f.name, other)) {
        throw jsonError(`Message ${desc.name} has multiple oneof fields set: ${other}, ${f.name}`);
      }
      oneofs.set(f.oneof, f.name);
    }
    if (f.label === 'repeated') {
      if (!Array.isArray(v)) throw jsonError(`Invalid value for ${path}: expected an array`);
      out[f.name] = v.map((x, i) => readValue(f.value, x, `${path}[${i}]`));
    } else if (f.label === 'map') {
      if (typeof v !== 'object' || Array.isArray(v) || v instanceof JsonNumber) {
        throw jsonError(`Invalid value for ${path}: expected an object`);
      }
      const map: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        const key = f.mapKey === 'string' ? k : String(toInteger(k, f.mapKey as 'int32', `${path} key`));
        map[key] = readValue(f.value, x, `${path}[${k}]`);
      }
      out[f.name] = map;
    } else {
      out[f.name] = readValue(f.value, v, path);
    }
  }
  fillDefaults(desc, out);
  return out;
}

/**
 * Reads Triton's JSON form (as the load API's `config` parameter takes it) into a ModelConfig with
 * proto3 defaults filled, like `parseModelConfigText`.
 *
 * @throws InferError INVALID_ARG on malformed JSON, unknown fields or ill-typed values.
 */
export function modelConfigFromJson(text: string): ModelConfig {
  const v = readJson(text);
  if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof JsonNumber) {
    throw jsonError('model configuration JSON must be an object');
  }
  return readMessage(messageDescriptor(MODEL_CONFIG), v, '') as unknown as ModelConfig;
}
