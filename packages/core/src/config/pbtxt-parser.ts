/**
 * Protobuf text format → `ModelConfig`, driven by the schema in `schema.ts`, with the rules of C++
 * `TextFormat::Parser` (what Triton uses for config.pbtxt): `:` optional before a message, `{}` or
 * `<>` around messages, `[ ... ]` lists for repeated scalars and messages, map entries as
 * `{ key: .. value: .. }` blocks or lists, enums by name or number, every bool spelling, 64-bit
 * integers kept exact (bigint past 2^53), a singular field set twice and two members of one oneof
 * are errors (protobuf's wording). Every error is a ConfigError with `file:line:column` and the
 * field path.
 *
 * Over 400 lines because it is one recursive-descent parser: each method of Parser reads one
 * production (fields, a field, a message body, a map entry, an enum, a scalar) through the same
 * lexer, position table and error wording, and they call each other; tokens are in pbtxt-lexer.ts,
 * the schema that drives it in schema.ts.
 */
import type { ModelConfig } from './model-config.ts';
import { ConfigError } from './config-error.ts';
import { Lexer, LexError, type Token } from './pbtxt-lexer.ts';
import { enumValueHint } from './enum-hint.ts';
import {
  FIELD_ALIASES,
  MODEL_CONFIG,
  defaultValue,
  enumDescriptor,
  fillDefaults,
  hasPresence,
  messageDescriptor,
  nearestFieldName,
  oneofConflictAllowed,
  type FieldDescriptor,
  type MessageDescriptor,
  type ScalarType,
  type ValueType,
} from './schema.ts';

export interface ParseOptions {
  /** File name used in error messages (default `config.pbtxt`). */
  file?: string;
}

/**
 * Where each field of a parsed config was written: path (as in ConfigError.fieldPath) → position,
 * packed as `line * 2^21 + column` (one number per field keeps parsing allocation-light).
 */
type PackedPositions = ReadonlyMap<string, number>;

const COLUMN_BITS = 2 ** 21;
const pack = (line: number, column: number): number => line * COLUMN_BITS + Math.min(column, COLUMN_BITS - 1);

const positionsByConfig = new WeakMap<object, PackedPositions>();

/**
 * The source position of a field of a config returned by `parseModelConfigText` (e.g.
 * `input[0].dims`, `dynamic_batching`), so a later validation error can point into the file.
 * Falls back to the nearest enclosing field that was written.
 */
export function configSourcePosition(config: object, fieldPath: string): { line: number; column: number } | undefined {
  const positions = positionsByConfig.get(config);
  if (!positions) return undefined;
  let path = fieldPath;
  for (;;) {
    const hit = positions.get(path);
    if (hit !== undefined) return { line: Math.floor(hit / COLUMN_BITS), column: hit % COLUMN_BITS };
    const cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['));
    if (cut <= 0) return undefined;
    path = path.slice(0, cut);
  }
}

const INT_LIMITS: Record<'int32' | 'uint32' | 'int64' | 'uint64', readonly [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};

const TRUE_WORDS = new Set(['true', 'True', 't']);
const FALSE_WORDS = new Set(['false', 'False', 'f']);

/** A token in an `Expected "x", found <token>.` message: quoted, as protobuf's Consume() prints it. */
function describe(t: Token): string {
  return t.type === 'eof' ? 'end of input' : `"${t.text}"`;
}

/**
 * A token in an `Expected <what>, got: <token>` message: its source text as it stands, as protobuf
 * prints it (`Expected integer, got: $` for an unfilled `${...}` template; a string keeps its quotes).
 */
function gotText(t: Token): string {
  return t.type === 'eof' ? 'end of input' : t.text;
}

class Parser {
  private readonly lexer: Lexer;
  private readonly positions = new Map<string, number>();
  private depth = 0;

  constructor(
    text: string,
    private readonly file: string | undefined,
  ) {
    this.lexer = new Lexer(text);
  }

  parse(): ModelConfig {
    const root: Record<string, unknown> = {};
    this.parseFields(messageDescriptor(MODEL_CONFIG), root, '', undefined);
    positionsByConfig.set(root, this.positions);
    return root as unknown as ModelConfig;
  }

  private fail(reason: string, at: { line: number; column: number }, fieldPath: string): never {
    throw new ConfigError(reason, { file: this.file, line: at.line, column: at.column, fieldPath });
  }

  private next(path: string): Token {
    try {
      return this.lexer.next();
    } catch (e) {
      if (e instanceof LexError) this.fail(e.message, e, path);
      throw e;
    }
  }

  private peek(path: string): Token {
    try {
      return this.lexer.peek();
    } catch (e) {
      if (e instanceof LexError) this.fail(e.message, e, path);
      throw e;
    }
  }

  private trySymbol(symbol: string, path: string): boolean {
    const t = this.peek(path);
    if (t.type === 'symbol' && t.text === symbol) {
      this.next(path);
      return true;
    }
    return false;
  }

  private expectSymbol(symbol: string, path: string): void {
    const t = this.next(path);
    if (t.type !== 'symbol' || t.text !== symbol) this.fail(`Expected "${symbol}", found ${describe(t)}.`, t, path);
  }

  /** Fields until `end` (a closing symbol) or, at top level, end of input. */
  private parseFields(desc: MessageDescriptor, target: Record<string, unknown>, path: string, end: string | undefined) {
    fillDefaults(desc, target);
    const present = new Set<string>();
    for (;;) {
      const t = this.peek(path);
      if (t.type === 'eof') {
        if (end !== undefined) this.fail(`Expected "${end}", found end of input.`, t, path);
        return;
      }
      if (end !== undefined && t.type === 'symbol' && t.text === end) {
        this.next(path);
        return;
      }
      this.parseField(desc, target, path, present);
      if (!this.trySymbol(';', path)) this.trySymbol(',', path);
    }
  }

  private lookupField(desc: MessageDescriptor, nameTok: Token, path: string): FieldDescriptor {
    if (nameTok.type !== 'ident') {
      if (nameTok.type === 'symbol' && nameTok.text === '[') {
        this.fail('Extensions and Any types are not supported in a model configuration.', nameTok, path);
      }
      this.fail(`Expected identifier, got: ${gotText(nameTok)}`, nameTok, path);
    }
    const alias = FIELD_ALIASES.get(desc.name)?.get(nameTok.text);
    const field = desc.byName.get(alias ?? nameTok.text);
    if (field) return field;
    const guess = nearestFieldName(desc, nameTok.text);
    const hint = guess ? `; did you mean '${guess}'?` : '.';
    this.fail(`Message type "${desc.name}" has no field named "${nameTok.text}"${hint}`, nameTok, path);
  }

  private parseField(desc: MessageDescriptor, target: Record<string, unknown>, path: string, present: Set<string>) {
    const nameTok = this.next(path);
    const field = this.lookupField(desc, nameTok, path);
    const fieldPath = path ? `${path}.${field.name}` : field.name;
    if (!this.positions.has(fieldPath)) this.positions.set(fieldPath, pack(nameTok.line, nameTok.column));

    if (field.label === 'singular') {
      // C++ TextFormat's check is HasField(): a proto3 scalar holding its default does not count as set.
      if (this.isSet(field, target, present)) {
        this.fail(`Non-repeated field "${field.name}" is specified multiple times.`, nameTok, fieldPath);
      }
      if (field.oneof !== undefined) {
        for (const other of desc.fields) {
          if (other === field || other.oneof !== field.oneof || !present.has(other.name)) continue;
          if (oneofConflictAllowed(desc.name, field.name, other.name)) continue;
          this.fail(
            `Field "${field.name}" is specified along with field "${other.name}", another member of oneof "${field.oneof}".`,
            nameTok,
            fieldPath,
          );
        }
      }
    }

    const isMessageLike = field.label === 'map' || field.value.kind === 'message';
    if (isMessageLike) {
      this.trySymbol(':', fieldPath);
    } else {
      const colon = this.peek(fieldPath);
      if (colon.type !== 'symbol' || colon.text !== ':') {
        this.fail(`Expected ":", found ${describe(colon)}.`, colon, fieldPath);
      }
      this.next(fieldPath);
    }

    const open = this.peek(fieldPath);
    if (open.type === 'symbol' && open.text === '[') {
      if (field.label === 'singular') {
        this.fail(`Non-repeated field "${field.name}" cannot use list syntax.`, open, fieldPath);
      }
      this.next(fieldPath);
      if (this.trySymbol(']', fieldPath)) {
        present.add(field.name);
        return;
      }
      for (;;) {
        this.parseOneValue(field, target, fieldPath);
        if (this.trySymbol(']', fieldPath)) break;
        this.expectSymbol(',', fieldPath);
      }
    } else {
      this.parseOneValue(field, target, fieldPath);
    }
    present.add(field.name);
  }

  private isSet(field: FieldDescriptor, target: Record<string, unknown>, present: Set<string>): boolean {
    if (!present.has(field.name)) return false;
    if (hasPresence(field)) return true;
    const v = target[field.name];
    const d = defaultValue(field.value);
    return v !== d && !(typeof v === 'bigint' && v === 0n);
  }

  /** One element of `field`: the value of a singular field, one element of a repeated one, one map entry. */
  private parseOneValue(field: FieldDescriptor, target: Record<string, unknown>, fieldPath: string): void {
    if (field.label === 'map') {
      this.parseMapEntry(field, target[field.name] as Record<string, unknown>, fieldPath);
      return;
    }
    if (field.label === 'repeated') {
      const list = target[field.name] as unknown[];
      if (field.value.kind !== 'message') {
        list.push(this.parseValue(field.value, field.name, fieldPath));
        return;
      }
      // Messages of a repeated field are addressed by index (`input[1].dims`).
      const elementPath = `${fieldPath}[${list.length}]`;
      const at = this.peek(fieldPath);
      this.positions.set(elementPath, pack(at.line, at.column));
      list.push(this.parseValue(field.value, field.name, elementPath));
      return;
    }
    target[field.name] = this.parseValue(field.value, field.name, fieldPath);
  }

  private parseMessageBody(messageName: string, path: string): Record<string, unknown> {
    const open = this.next(path);
    let end: string;
    if (open.type === 'symbol' && open.text === '{') end = '}';
    else if (open.type === 'symbol' && open.text === '<') end = '>';
    else this.fail(`Expected "{", found ${describe(open)}.`, open, path);
    if (++this.depth > 100) this.fail('Message is too deep', open, path);
    const msg: Record<string, unknown> = {};
    this.parseFields(messageDescriptor(messageName), msg, path, end);
    this.depth--;
    return msg;
  }

  private parseMapEntry(field: FieldDescriptor, map: Record<string, unknown>, fieldPath: string): void {
    const open = this.next(fieldPath);
    let end: string;
    if (open.type === 'symbol' && open.text === '{') end = '}';
    else if (open.type === 'symbol' && open.text === '<') end = '>';
    else this.fail(`Expected "{", found ${describe(open)}.`, open, fieldPath);
    let key: unknown;
    let value: unknown;
    let keySeen = false;
    let valueSeen = false;
    const keyType: ValueType = { kind: 'scalar', scalar: field.mapKey! };
    for (;;) {
      const t = this.next(fieldPath);
      if (t.type === 'symbol' && t.text === end) break;
      if (t.type !== 'ident' || (t.text !== 'key' && t.text !== 'value')) {
        if (t.type === 'eof') this.fail(`Expected "${end}", found end of input.`, t, fieldPath);
        this.fail(
          t.type === 'ident'
            ? `Message type "${field.name} entry" has no field named "${t.text}"; a map entry has 'key' and 'value'.`
            : `Expected identifier, got: ${gotText(t)}`,
          t,
          fieldPath,
        );
      }
      if (t.text === 'key') {
        if (keySeen) this.fail('Non-repeated field "key" is specified multiple times.', t, fieldPath);
        this.expectSymbol(':', fieldPath);
        key = this.parseValue(keyType, 'key', fieldPath);
        keySeen = true;
      } else {
        if (valueSeen) this.fail('Non-repeated field "value" is specified multiple times.', t, fieldPath);
        if (field.value.kind === 'message') this.trySymbol(':', fieldPath);
        else this.expectSymbol(':', fieldPath);
        value = this.parseValue(field.value, 'value', fieldPath);
        valueSeen = true;
      }
      if (!this.trySymbol(';', fieldPath)) this.trySymbol(',', fieldPath);
    }
    if (!keySeen) key = defaultValue(keyType);
    if (!valueSeen) {
      if (field.value.kind === 'message') {
        const empty: Record<string, unknown> = {};
        fillDefaults(messageDescriptor(field.value.messageName), empty);
        value = empty;
      } else {
        value = defaultValue(field.value);
      }
    }
    map[String(key)] = value;
  }

  private parseValue(type: ValueType, fieldName: string, path: string): unknown {
    switch (type.kind) {
      case 'message':
        return this.parseMessageBody(type.messageName, path);
      case 'enum':
        return this.parseEnum(type.enumName, fieldName, path);
      default:
        return this.parseScalar(type.scalar, fieldName, path);
    }
  }

  private parseEnum(enumName: string, fieldName: string, path: string): string {
    const e = enumDescriptor(enumName);
    const t = this.next(path);
    if (t.type === 'ident') {
      if (e.byName.has(t.text)) return t.text;
      this.fail(`Unknown enumeration value of "${t.text}" for field "${fieldName}".${enumValueHint(enumName, t.text)}`, t, path);
    }
    let negative = false;
    let num = t;
    if (t.type === 'symbol' && t.text === '-') {
      negative = true;
      num = this.next(path);
    }
    if (num.type === 'int') {
      const n = Number(this.integerValue(num, path)) * (negative ? -1 : 1);
      const name = e.byNumber.get(n);
      if (name !== undefined) return name;
      this.fail(`Unknown enumeration value of "${negative ? '-' : ''}${num.text}" for field "${fieldName}".`, t, path);
    }
    this.fail(`Expected integer or identifier, got: ${gotText(t)}`, t, path);
  }

  private integerValue(t: Token, path: string): bigint {
    const text = t.text;
    try {
      if (text.length > 1 && text[0] === '0' && text[1] !== 'x' && text[1] !== 'X') return BigInt(`0o${text.slice(1)}`);
      return BigInt(text);
    } catch {
      this.fail(`Expected integer, got: ${text}`, t, path);
    }
  }

  private parseScalar(scalar: ScalarType, fieldName: string, path: string): unknown {
    if (scalar === 'string') {
      const t = this.next(path);
      if (t.type !== 'string') this.fail(`Expected string, got: ${gotText(t)}`, t, path);
      let value = t.value;
      while (this.peek(path).type === 'string') value += this.next(path).value;
      return value;
    }
    if (scalar === 'bool') {
      // protobuf: an integer no greater than 1, else an identifier naming true or false.
      const t = this.next(path);
      if (t.type === 'int') {
        const v = this.integerValue(t, path);
        if (v > 1n) this.fail(`Integer out of range (${t.text})`, t, path);
        return v === 1n;
      }
      if (t.type !== 'ident') this.fail(`Expected identifier, got: ${gotText(t)}`, t, path);
      if (TRUE_WORDS.has(t.text)) return true;
      if (FALSE_WORDS.has(t.text)) return false;
      this.fail(`Invalid value for boolean field "${fieldName}". Value: "${t.text}".`, t, path);
    }
    const first = this.next(path);
    const negative = first.type === 'symbol' && first.text === '-';
    const t = negative ? this.next(path) : first;
    if (scalar === 'float' || scalar === 'double') {
      let v: number;
      if (t.type === 'int') v = Number(this.integerValue(t, path));
      else if (t.type === 'float') v = Number(t.text.replace(/[fF]$/, ''));
      else if (t.type === 'ident' && /^(inf|infinity)$/i.test(t.text)) v = Infinity;
      else if (t.type === 'ident' && /^nan$/i.test(t.text)) v = NaN;
      else this.fail(`Expected double, got: ${t.type === 'ident' ? t.text.toLowerCase() : gotText(t)}`, t, path);
      if (negative) v = -v;
      return scalar === 'float' ? Math.fround(v) : v;
    }
    // Integer types.
    if (t.type !== 'int') {
      this.fail(`Expected integer, got: ${gotText(t)}`, t, path);
    }
    if (negative && (scalar === 'uint32' || scalar === 'uint64')) {
      this.fail('Expected integer, got: -', first, path);
    }
    // Fast path: short decimal literals are exact as doubles.
    if (t.text.length < 16 && t.text[0] !== '0') {
      const n = Number(t.text);
      const v = negative ? -n : n;
      if (scalar === 'int32' || scalar === 'uint32') {
        const [lo, hi] = INT_LIMITS[scalar];
        if (v < Number(lo) || v > Number(hi)) this.fail(`Integer out of range (${negative ? '-' : ''}${t.text})`, t, path);
      }
      return v;
    }
    const big = negative ? -this.integerValue(t, path) : this.integerValue(t, path);
    const [lo, hi] = INT_LIMITS[scalar];
    if (big < lo || big > hi) this.fail(`Integer out of range (${negative ? '-' : ''}${t.text})`, t, path);
    const asNumber = Number(big);
    return Number.isSafeInteger(asNumber) ? asNumber : big;
  }
}

/**
 * Parses config.pbtxt text into a `ModelConfig`: every scalar, repeated and map field present with
 * its proto3 default (`''`, `0`, `false`, first enum value, `[]`, `{}`), sub-messages and oneof
 * members absent unless written. No Triton defaults are applied here (see normalizeModelConfig).
 *
 * @throws ConfigError (an InferError, code INVALID_ARG) on any syntax or schema error.
 */
export function parseModelConfigText(text: string, options: ParseOptions = {}): ModelConfig {
  return new Parser(text, options.file).parse();
}
