/**
 * "Did you mean" for enum values, by meaning before spelling: `TYPE_FLOAT32` is `TYPE_FP32` (not
 * `TYPE_UINT32`, the nearest spelling), `FP32` is `TYPE_FP32`, `TYPE_BYTES` is `TYPE_STRING` (the
 * wire's BYTES is the config's STRING). Used by the text-format parser and the JSON reader, so both
 * word an unknown value the same way.
 */
import { enumDescriptor, nearestName } from './schema.ts';

/** Other names users write for a DataType, mapped to the enum's own suffix (after `TYPE_`). */
const DATA_TYPE_SYNONYMS: Readonly<Record<string, string>> = {
  FLOAT: 'FP32',
  FLOAT32: 'FP32',
  F32: 'FP32',
  SINGLE: 'FP32',
  FLOAT16: 'FP16',
  HALF: 'FP16',
  F16: 'FP16',
  FLOAT64: 'FP64',
  DOUBLE: 'FP64',
  F64: 'FP64',
  BFLOAT16: 'BF16',
  BYTES: 'STRING',
  STR: 'STRING',
  TEXT: 'STRING',
  OBJECT: 'STRING',
  BOOLEAN: 'BOOL',
  INT: 'INT32',
  LONG: 'INT64',
  UINT: 'UINT32',
  CHAR: 'INT8',
  BYTE: 'UINT8',
};

/** The value of `enumName` that `text` most likely means, or undefined. */
export function suggestEnumValue(enumName: string, text: string): string | undefined {
  const e = enumDescriptor(enumName);
  const upper = text.toUpperCase();
  if (enumName === 'inference.DataType') {
    const bare = upper.replace(/^TYPE_/, '');
    const meant = `TYPE_${DATA_TYPE_SYNONYMS[bare] ?? bare}`;
    if (e.byName.has(meant) && meant !== 'TYPE_INVALID') return meant;
  }
  // A value written without its prefix (`CPU` for `KIND_CPU`) or in the wrong case.
  const byCase = e.values.find((v) => v.toUpperCase() === upper || v.toUpperCase().endsWith(`_${upper}`));
  return byCase ?? nearestName(e.values, text);
}

/**
 * The hint appended to an unknown-value error: `Did you mean 'TYPE_FP32'? Valid values: ...`
 * (the list leaves out the proto3 placeholder `*_INVALID`). Starts with a space when not empty.
 */
export function enumValueHint(enumName: string, text: string): string {
  const e = enumDescriptor(enumName);
  const guess = suggestEnumValue(enumName, text);
  const valid = e.values.filter((v) => !v.endsWith('_INVALID'));
  return `${guess ? ` Did you mean '${guess}'?` : ''} Valid values: ${valid.join(', ')}.`;
}
