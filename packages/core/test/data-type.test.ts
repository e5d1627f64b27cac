/** Datatype lookups keyed by names from configs and requests: only the table's own rows answer. */
import { describe, expect, it } from 'vitest';
import { configToWireDataType, isDataType } from '../src/tensor/data-type.ts';

const INHERITED = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'isPrototypeOf'];

describe('datatype lookups', () => {
  it('maps config enum names to wire datatypes', () => {
    expect(configToWireDataType('TYPE_FP32')).toBe('FP32');
    expect(configToWireDataType('TYPE_STRING')).toBe('BYTES');
    expect(configToWireDataType('TYPE_BF16')).toBe('BF16');
    expect(configToWireDataType('TYPE_INVALID')).toBeUndefined();
    expect(configToWireDataType('FP32')).toBeUndefined();
  });

  it.each(INHERITED)("'%s' (a property every object inherits) is no datatype", (name) => {
    expect(configToWireDataType(name)).toBeUndefined();
    expect(configToWireDataType(`TYPE_${name}`)).toBeUndefined();
    expect(isDataType(name)).toBe(false);
  });
});
