/**
 * The datatype table, written once: for each value of model_config.proto's `inference.DataType`, its
 * KServe v2 wire name (Triton's DataTypeToProtocolString: TYPE_STRING is BYTES on the wire), bytes
 * per element (0 for BYTES, whose elements are length-prefixed) and the typed array its elements are
 * held in (FP16 and BF16 as raw Uint16 bits, BOOL and BYTES as Uint8). Rendered twice: into core
 * (tensor/generated/data-types.ts) and into the client (src/generated/data-types.ts), which imports
 * no internal package. A proto value missing here, or a row the proto lacks, fails the generator.
 */
import type { ProtoSchema } from './proto-schema.ts';
import { generatedHeader } from './header.ts';

interface DataTypeRow {
  readonly wire: string;
  readonly size: number;
  readonly array: string;
}

/** Keyed by the proto's value names; TYPE_INVALID has no wire name. */
const DATA_TYPES: Readonly<Record<string, DataTypeRow | undefined>> = {
  TYPE_INVALID: undefined,
  TYPE_BOOL: { wire: 'BOOL', size: 1, array: 'Uint8Array' },
  TYPE_UINT8: { wire: 'UINT8', size: 1, array: 'Uint8Array' },
  TYPE_UINT16: { wire: 'UINT16', size: 2, array: 'Uint16Array' },
  TYPE_UINT32: { wire: 'UINT32', size: 4, array: 'Uint32Array' },
  TYPE_UINT64: { wire: 'UINT64', size: 8, array: 'BigUint64Array' },
  TYPE_INT8: { wire: 'INT8', size: 1, array: 'Int8Array' },
  TYPE_INT16: { wire: 'INT16', size: 2, array: 'Int16Array' },
  TYPE_INT32: { wire: 'INT32', size: 4, array: 'Int32Array' },
  TYPE_INT64: { wire: 'INT64', size: 8, array: 'BigInt64Array' },
  TYPE_FP16: { wire: 'FP16', size: 2, array: 'Uint16Array' },
  TYPE_FP32: { wire: 'FP32', size: 4, array: 'Float32Array' },
  TYPE_FP64: { wire: 'FP64', size: 8, array: 'Float64Array' },
  TYPE_STRING: { wire: 'BYTES', size: 0, array: 'Uint8Array' },
  TYPE_BF16: { wire: 'BF16', size: 2, array: 'Uint16Array' },
};

const ENUM = 'inference.DataType';

/** The proto's datatypes in declaration order, each with its row. */
function dataTypes(schema: ProtoSchema): { name: string; number: number; row: DataTypeRow | undefined }[] {
  const e = schema.enums.find((x) => x.name === ENUM);
  if (!e) throw new Error(`codegen: ${ENUM} not found in the proto`);
  const names = new Set(e.values.map(([n]) => n));
  for (const name of Object.keys(DATA_TYPES)) if (!names.has(name)) throw new Error(`codegen: the datatype table has ${name}, which ${ENUM} lacks`);
  return e.values.map(([name, number]) => {
    if (!(name in DATA_TYPES)) throw new Error(`codegen: ${ENUM} value ${name} has no row in tools/codegen/src/data-types.ts`);
    return { name, number, row: DATA_TYPES[name] };
  });
}

function wireRows(schema: ProtoSchema): DataTypeRow[] {
  return dataTypes(schema).flatMap((d) => (d.row ? [d.row] : []));
}

const union = (rows: readonly DataTypeRow[]): string => rows.map((r) => `\n  | '${r.wire}'`).join('') + ';';

/** Core's tables: wire names, config names with their numbers, the config → wire map, sizes, typed arrays. */
export function renderCoreDataTypes(schema: ProtoSchema, source: string): string {
  const all = dataTypes(schema);
  const rows = wireRows(schema);
  return [
    generatedHeader(source),
    '/** Wire datatypes (KServe v2 strings). */',
    `export type DataType =${union(rows)}`,
    '',
    `/** Config enum \`${ENUM}\` names, with their proto numbers. */`,
    'export const CONFIG_DATA_TYPES = {',
    ...all.map((d) => `  ${d.name}: ${d.number},`),
    '} as const;',
    'export type ConfigDataType = keyof typeof CONFIG_DATA_TYPES;',
    '',
    '/** Config name → wire name (TYPE_STRING is BYTES on the wire); undefined for TYPE_INVALID. */',
    'export const CONFIG_TO_WIRE: Readonly<Record<ConfigDataType, DataType | undefined>> = {',
    ...all.map((d) => `  ${d.name}: ${d.row ? `'${d.row.wire}'` : 'undefined'},`),
    '};',
    '',
    '/** Bytes per element; 0 for BYTES (variable, length-prefixed). */',
    'export const DATA_TYPE_SIZE: Readonly<Record<DataType, number>> = {',
    ...rows.map((r) => `  ${r.wire}: ${r.size},`),
    '};',
    '',
    '/** The typed array each datatype is viewed as (FP16/BF16 as raw Uint16 bits, BOOL and BYTES as Uint8). */',
    'export interface DataTypeMap {',
    ...rows.map((r) => `  ${r.wire}: ${r.array};`),
    '}',
    '',
    '/** A typed array class: `new C(length)` or a view `new C(buffer, byteOffset, length)`. */',
    'export interface TypedArrayConstructor<T> {',
    '  new (length: number): T;',
    '  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T;',
    '}',
    '',
    '/** The typed array class each datatype is held in. */',
    'export const TYPED_ARRAY_CONSTRUCTORS: { readonly [K in DataType]: TypedArrayConstructor<DataTypeMap[K]> } = {',
    ...rows.map((r) => `  ${r.wire}: ${r.array},`),
    '};',
    '',
  ].join('\n');
}

/** The client's tables (it imports no internal package): wire names, sizes, typed arrays. */
export function renderClientDataTypes(schema: ProtoSchema, source: string): string {
  const rows = wireRows(schema);
  return [
    generatedHeader(source),
    '/** Wire datatypes (KServe v2 strings). */',
    `export type Datatype =${union(rows)}`,
    '',
    '/** The typed array each datatype is viewed as (FP16/BF16 as raw Uint16 bits, BOOL and BYTES as Uint8). */',
    'export type TypedArrayFor = {',
    ...rows.map((r) => `  ${r.wire}: ${r.array};`),
    '};',
    '',
    '/** Bytes per element; 0 for BYTES (variable, length-prefixed). */',
    'export const ELEMENT_SIZE: Readonly<Record<Datatype, number>> = {',
    ...rows.map((r) => `  ${r.wire}: ${r.size},`),
    '};',
    '',
    '/** A typed array class: `new C(length)` or a view `new C(buffer, byteOffset, length)`. */',
    'export interface TypedArrayClass<T> {',
    '  new (length: number): T;',
    '  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T;',
    '}',
    '',
    '/** The typed array class each datatype is held in. */',
    'export const TYPED_ARRAYS: { readonly [K in Datatype]: TypedArrayClass<TypedArrayFor[K]> } = {',
    ...rows.map((r) => `  ${r.wire}: ${r.array},`),
    '};',
    '',
  ].join('\n');
}
