/**
 * Core's TypeScript types of the ModelConfig (packages/core/src/config/generated/model-config-types.ts),
 * one interface per message and one string union per enum, named after the proto path without dots
 * (`ModelEnsembling.Step` → `ModelEnsemblingStep`). Field names are the proto's own, so an object of
 * these types is Triton's JSON form. The mapping:
 *
 * - singular message fields and oneof members are optional (proto3 presence); every other field is
 *   always present once core has filled the defaults;
 * - repeated → `T[]`, map → `Record<string, T>` (JSON map keys are strings, integer keys included);
 * - string → string, bool → boolean, 32-bit integers and floats → number, enums → their value names;
 * - 64-bit integers → `Int64` (number, or bigint past 2^53), except the fields in NUMBER_TYPED_INT64;
 * - `inference.DataType` → `ConfigDataType`, from the datatype table (tensor/generated/data-types.ts).
 */
import type { ProtoField, ProtoSchema } from './proto-schema.ts';
import { generatedHeader } from './header.ts';

/**
 * 64-bit fields typed `number`: shapes, dims and version numbers, which core uses as array lengths
 * and indices. Every other 64-bit field keeps `Int64`, so a value past 2^53 (a priority level of
 * 2^64-1) reaches its user exact.
 */
export const NUMBER_TYPED_INT64: readonly string[] = [
  'inference.ModelTensorReshape.shape',
  'inference.ModelInput.dims',
  'inference.ModelOutput.dims',
  'inference.ModelVersionPolicy.Specific.versions',
  'inference.ModelSequenceBatching.InitialState.dims',
  'inference.ModelSequenceBatching.State.dims',
  'inference.ModelWarmup.Input.dims',
];

const DATA_TYPE_ENUM = 'inference.DataType';

/** `inference.ModelEnsembling.Step` → `ModelEnsemblingStep`. */
export function typeName(fullName: string, packageName: string): string {
  if (fullName === DATA_TYPE_ENUM) return 'ConfigDataType';
  return fullName.slice(packageName.length + 1).replace(/\./g, '');
}

export function docComment(text: string | undefined, indent: string): string[] {
  if (!text) return [];
  const lines = text.split('\n');
  return lines.length === 1 ? [`${indent}/** ${lines[0]} */`] : [`${indent}/**`, ...lines.map((l) => `${indent} * ${l}`.trimEnd()), `${indent} */`];
}

export function renderTypes(schema: ProtoSchema, source: string): string {
  const pkg = schema.packageName;
  for (const name of NUMBER_TYPED_INT64) {
    const [message, field] = [name.slice(0, name.lastIndexOf('.')), name.slice(name.lastIndexOf('.') + 1)];
    const f = schema.messages.find((m) => m.name === message)?.fields.find((x) => x.name === field);
    if (!f || f.value.kind !== 'scalar' || (f.value.scalar !== 'int64' && f.value.scalar !== 'uint64')) {
      throw new Error(`codegen: NUMBER_TYPED_INT64 names ${name}, which is not a 64-bit field of the proto`);
    }
  }
  const valueType = (owner: string, f: ProtoField): string => {
    const v = f.value;
    if (v.kind === 'enum' || v.kind === 'message') return typeName(v.kind === 'enum' ? v.enumName : v.messageName, pkg);
    switch (v.scalar) {
      case 'string':
        return 'string';
      case 'bool':
        return 'boolean';
      case 'int64':
      case 'uint64':
        return NUMBER_TYPED_INT64.includes(`${owner}.${f.name}`) ? 'number' : 'Int64';
      default:
        return 'number';
    }
  };

  const out: string[] = [generatedHeader(source)];
  out.push("import type { ConfigDataType } from '../../tensor/generated/data-types.ts';", '');
  out.push('/** A 64-bit integer of the config: a number while it fits a double exactly, a bigint past that. */');
  out.push('export type Int64 = number | bigint;', '');
  for (const e of schema.enums) {
    if (e.name === DATA_TYPE_ENUM) continue;
    out.push(`export type ${typeName(e.name, pkg)} = ${e.values.map(([n]) => `'${n}'`).join(' | ')};`, '');
  }
  for (const m of schema.messages) {
    const name = typeName(m.name, pkg);
    out.push(...docComment(m.comment, ''));
    if (m.fields.length === 0) {
      out.push(`export type ${name} = Record<string, never>;`, '');
      continue;
    }
    out.push(`export interface ${name} {`);
    for (const f of m.fields) {
      const presence = f.label === 'singular' && (f.value.kind === 'message' || f.oneof !== undefined);
      const t = valueType(m.name, f);
      const type = f.label === 'repeated' ? `${t}[]` : f.label === 'map' ? `Record<string, ${t}>` : t;
      const comment = f.label === 'map' && f.mapKey !== 'string' ? `${f.comment ? `${f.comment}\n` : ''}Map keys are ${f.mapKey} values written as decimal strings (JSON map keys).` : f.comment;
      out.push(...docComment(comment, '  '));
      out.push(`  ${f.name}${presence ? '?' : ''}: ${type};`);
    }
    out.push('}', '');
  }
  return out.join('\n');
}
