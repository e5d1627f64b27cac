/**
 * Triton's JSON form of a ModelConfig, printing side (core:src/model_config_utils.cc
 * ModelConfigToJson): protobuf's JSON printer with `preserve_proto_field_names` and
 * `always_print_primitive_fields` (every scalar, repeated and map field printed, set sub-messages
 * and set oneof members only), enums by name, 64-bit integers as JSON strings except the fields
 * Triton rewrites to numbers (schema `jsonNumber`), map keys as strings. bigints print exactly.
 */
import type { ModelConfig } from './model-config.ts';
import {
  MODEL_CONFIG,
  enumDescriptor,
  hasPresence,
  messageDescriptor,
  type MessageDescriptor,
  type ScalarType,
  type ValueType,
} from './schema.ts';

/** A JSON tree whose leaves are already-serialized text (so bigints stay exact). */
type Node = { raw: string } | Node[] | { object: Array<[string, Node]> };

/** Shortest decimal that reads back to the same float32 (protobuf prints floats this way). */
export function formatFloat32(value: number): string {
  const f = Math.fround(value);
  if (!Number.isFinite(f)) return String(f);
  for (let p = 1; p <= 9; p++) {
    const s = Number(f.toPrecision(p));
    if (Math.fround(s) === f) return String(s);
  }
  return String(f);
}

function specialFloat(v: number): string | undefined {
  if (Number.isNaN(v)) return '"NaN"';
  if (v === Infinity) return '"Infinity"';
  if (v === -Infinity) return '"-Infinity"';
  return undefined;
}

function scalarJson(scalar: ScalarType, v: unknown, asNumber: boolean): string {
  switch (scalar) {
    case 'string':
      return JSON.stringify(v ?? '');
    case 'bool':
      return v ? 'true' : 'false';
    case 'int32':
    case 'uint32':
      return String(v ?? 0);
    case 'int64':
    case 'uint64':
      return asNumber ? String(v ?? 0) : `"${String(v ?? 0)}"`;
    case 'float':
      return specialFloat(Number(v ?? 0)) ?? formatFloat32(Number(v ?? 0));
    case 'double':
      return specialFloat(Number(v ?? 0)) ?? String(Number(v ?? 0));
  }
}

function valueNode(type: ValueType, v: unknown, asNumber: boolean): Node {
  if (type.kind === 'message') return messageNode(messageDescriptor(type.messageName), v as Record<string, unknown>);
  if (type.kind === 'enum') return { raw: JSON.stringify(v ?? enumDescriptor(type.enumName).values[0]) };
  return { raw: scalarJson(type.scalar, v, asNumber) };
}

function sortedKeys(keys: string[], keyType: ScalarType): string[] {
  if (keyType === 'string') return keys.sort();
  if (keyType === 'bool') return keys.sort();
  return keys.sort((a, b) => {
    const d = BigInt(a) - BigInt(b);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  });
}

function messageNode(desc: MessageDescriptor, obj: Record<string, unknown>): Node {
  const members: Array<[string, Node]> = [];
  for (const f of desc.fields) {
    const v = obj[f.name];
    const asNumber = f.jsonNumber === true;
    if (f.label === 'repeated') {
      const list = (v as unknown[] | undefined) ?? [];
      members.push([f.name, list.map((x) => valueNode(f.value, x, asNumber))]);
    } else if (f.label === 'map') {
      const map = (v as Record<string, unknown> | undefined) ?? {};
      const entries = sortedKeys(Object.keys(map), f.mapKey!).map((k): [string, Node] => [
        k,
        valueNode(f.value, map[k], asNumber),
      ]);
      members.push([f.name, { object: entries }]);
    } else if (hasPresence(f)) {
      if (v !== undefined) members.push([f.name, valueNode(f.value, v, asNumber)]);
    } else {
      members.push([f.name, valueNode(f.value, v, asNumber)]);
    }
  }
  return { object: members };
}

function serialize(node: Node, indent: string, depth: number): string {
  const nl = indent ? `\n${indent.repeat(depth + 1)}` : '';
  const close = indent ? `\n${indent.repeat(depth)}` : '';
  const colon = indent ? ': ' : ':';
  if ('raw' in node) return node.raw;
  if ('object' in node) {
    if (node.object.length === 0) return '{}';
    const parts = node.object.map(([k, v]) => `${nl}${JSON.stringify(k)}${colon}${serialize(v, indent, depth + 1)}`);
    return `{${parts.join(',')}${close}}`;
  }
  if (node.length === 0) return '[]';
  const parts = (node as Node[]).map((v) => `${nl}${serialize(v, indent, depth + 1)}`);
  return `[${parts.join(',')}${close}]`;
}

export interface JsonPrintOptions {
  /** Indentation for pretty output (e.g. 2); omitted = compact, as Triton's HTTP endpoint sends it. */
  indent?: number;
}

/** The config as Triton's JSON (`GET /v2/models/<m>/config`, `tritonserver` logs). */
export function modelConfigToJson(config: ModelConfig, options: JsonPrintOptions = {}): string {
  const node = messageNode(messageDescriptor(MODEL_CONFIG), config as unknown as Record<string, unknown>);
  return serialize(node, ' '.repeat(options.indent ?? 0), 0);
}
