/**
 * Core's schema table (packages/core/src/config/generated/model-config-schema.ts): every message's
 * fields and every enum's values as data, in the proto's declaration order, which is the order
 * protobuf's JSON printer (and Triton's `GET /v2/models/<m>/config`) writes fields in. The text
 * parser, the JSON reader and both printers are driven by it (core's config/schema.ts).
 */
import type { ProtoField, ProtoSchema, ProtoValue } from './proto-schema.ts';
import { generatedHeader } from './header.ts';

const q = (s: string): string => `'${s}'`;

function value(v: ProtoValue): string {
  if (v.kind === 'scalar') return `{ kind: 'scalar', scalar: ${q(v.scalar)} }`;
  if (v.kind === 'enum') return `{ kind: 'enum', enumName: ${q(v.enumName)} }`;
  return `{ kind: 'message', messageName: ${q(v.messageName)} }`;
}

function field(f: ProtoField): string {
  const parts = [`name: ${q(f.name)}`, `number: ${f.number}`, `label: ${q(f.label)}`, `value: ${value(f.value)}`];
  if (f.mapKey) parts.push(`mapKey: ${q(f.mapKey)}`);
  if (f.oneof) parts.push(`oneof: ${q(f.oneof)}`);
  return `{ ${parts.join(', ')} }`;
}

export function renderSchemaTable(schema: ProtoSchema, source: string): string {
  const out: string[] = [
    generatedHeader(source),
    "import type { SchemaEnumRow, SchemaMessageRow } from '../schema.ts';",
    '',
    `/** Every enum of package \`${schema.packageName}\`: value names and numbers in declaration order. */`,
    'export const ENUM_ROWS: readonly SchemaEnumRow[] = [',
  ];
  for (const e of schema.enums) {
    out.push(`  [${q(e.name)}, [${e.values.map(([n, v]) => `[${q(n)}, ${v}]`).join(', ')}]],`);
  }
  out.push('];', '');
  out.push(`/** Every message of package \`${schema.packageName}\`, nested types first, fields in declaration order. */`);
  out.push('export const MESSAGE_ROWS: readonly SchemaMessageRow[] = [');
  for (const m of schema.messages) {
    if (m.fields.length === 0) {
      out.push(`  [${q(m.name)}, []],`);
      continue;
    }
    out.push(`  [`, `    ${q(m.name)},`, '    [');
    for (const f of m.fields) out.push(`      ${field(f)},`);
    out.push('    ],', '  ],');
  }
  out.push('];', '');
  return out.join('\n');
}
