/**
 * ModelConfig → protobuf text format, as C++ TextFormat prints it: fields in field-number order,
 * proto3 defaults omitted, sub-messages as `name {` blocks, map entries as `{ key: .. value: .. }`
 * blocks in key order, strings C-escaped. `parseModelConfigText(printModelConfigText(c))` gives `c`
 * back.
 */
import type { ModelConfig } from './model-config.ts';
import { formatFloat32 } from './json-printer.ts';
import {
  MODEL_CONFIG,
  defaultValue,
  hasPresence,
  messageDescriptor,
  type FieldDescriptor,
  type MessageDescriptor,
  type ScalarType,
  type ValueType,
} from './schema.ts';

function escapeString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += `\\${c.toString(8).padStart(3, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function formatScalar(scalar: ScalarType, v: unknown): string {
  switch (scalar) {
    case 'string':
      return escapeString(String(v));
    case 'bool':
      return v ? 'true' : 'false';
    case 'float':
    case 'double': {
      const n = Number(v);
      if (Number.isNaN(n)) return 'nan';
      if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
      return scalar === 'float' ? formatFloat32(n) : String(n);
    }
    default:
      return String(v);
  }
}

function isDefault(f: FieldDescriptor, v: unknown): boolean {
  if (v === undefined) return true;
  if (hasPresence(f)) return false;
  return v === defaultValue(f.value) || v === 0n;
}

function keyOrder(keys: string[], keyType: ScalarType): string[] {
  if (keyType === 'string') return keys.sort();
  return keys.sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
}

class TextPrinter {
  private out: string[] = [];

  print(desc: MessageDescriptor, obj: Record<string, unknown>, indent: string): void {
    const fields = [...desc.fields].sort((a, b) => a.number - b.number);
    for (const f of fields) {
      const v = obj[f.name];
      if (f.label === 'repeated') {
        for (const x of (v as unknown[] | undefined) ?? []) this.value(f.name, f.value, x, indent);
      } else if (f.label === 'map') {
        const map = (v as Record<string, unknown> | undefined) ?? {};
        for (const k of keyOrder(Object.keys(map), f.mapKey!)) {
          this.out.push(`${indent}${f.name} {\n`);
          this.out.push(`${indent}  key: ${f.mapKey === 'string' ? escapeString(k) : k}\n`);
          this.value('value', f.value, map[k], `${indent}  `);
          this.out.push(`${indent}}\n`);
        }
      } else if (!isDefault(f, v)) {
        this.value(f.name, f.value, v, indent);
      }
    }
  }

  private value(name: string, type: ValueType, v: unknown, indent: string): void {
    if (type.kind === 'message') {
      this.out.push(`${indent}${name} {\n`);
      this.print(messageDescriptor(type.messageName), v as Record<string, unknown>, `${indent}  `);
      this.out.push(`${indent}}\n`);
    } else if (type.kind === 'enum') {
      this.out.push(`${indent}${name}: ${String(v)}\n`);
    } else {
      this.out.push(`${indent}${name}: ${formatScalar(type.scalar, v)}\n`);
    }
  }

  text(): string {
    return this.out.join('');
  }
}

/** The config in protobuf text format (config.pbtxt), defaults omitted. */
export function printModelConfigText(config: ModelConfig): string {
  const p = new TextPrinter();
  p.print(messageDescriptor(MODEL_CONFIG), config as unknown as Record<string, unknown>, '');
  return p.text();
}
