/** JSON and typed-contents conversions shared by the transports. */
import { describe, expect, it } from 'vitest';
import type { DataType } from '@tritium/core';
import { contentsToBytes, exactJson, jsonDataToBytes, tensorToJsonData } from '../src/protocol/tensors.ts';
import { liftParameters } from '../src/protocol/params.ts';

/** JSON values → tensor bytes → the JSON the server prints → values. */
const roundTrip = (datatype: DataType, data: unknown[], shape = [data.length]) =>
  JSON.parse(exactJson(tensorToJsonData({ name: 'x', datatype, shape, data: jsonDataToBytes(datatype, data, data.length, 'x') })));

describe('JSON tensor data', () => {
  it('round-trips every JSON-capable datatype', () => {
    expect(roundTrip('BOOL', [true, false, true])).toEqual([true, false, true]);
    expect(roundTrip('UINT8', [0, 255])).toEqual([0, 255]);
    expect(roundTrip('INT8', [-128, 127])).toEqual([-128, 127]);
    expect(roundTrip('UINT16', [65535])).toEqual([65535]);
    expect(roundTrip('INT16', [-2])).toEqual([-2]);
    expect(roundTrip('UINT32', [4294967295])).toEqual([4294967295]);
    expect(roundTrip('INT32', [-7, 7])).toEqual([-7, 7]);
    expect(roundTrip('INT64', [-(2 ** 40), 3])).toEqual([-(2 ** 40), 3]);
    expect(roundTrip('UINT64', [2 ** 50])).toEqual([2 ** 50]);
    expect(roundTrip('FP32', [1.5, -2])).toEqual([1.5, -2]);
    expect(roundTrip('FP64', [0.1])).toEqual([0.1]);
    expect(roundTrip('BYTES', ['a', 'ü', ''])).toEqual(['a', 'ü', '']);
  });

  it('prints BYTES straight from their bytes: escapes, invalid UTF-8 replaced, a client string never taken for a splice mark', () => {
    const strings = ['plain', 'quo"te', 'back\\slash', 'tab\t', 'ü€😀', '', '\u0000json:0'];
    expect(roundTrip('BYTES', strings)).toEqual(strings);
    const invalid = { name: 'x', datatype: 'BYTES' as const, shape: [1], data: Uint8Array.of(2, 0, 0, 0, 0xff, 0x41) };
    expect(JSON.parse(exactJson([tensorToJsonData(invalid), 'x']))).toEqual([['\ufffdA'], 'x']);
    const malformed = { name: 'x', datatype: 'BYTES' as const, shape: [1], data: Uint8Array.of(9, 0, 0, 0, 0x41) };
    expect(() => tensorToJsonData(malformed)).toThrow("malformed BYTES data for 'x'");
  });

  it('prints 64-bit integers exactly in JSON', () => {
    const big = { name: 'x', datatype: 'INT64' as const, shape: [3], data: new Uint8Array(BigInt64Array.of(2n ** 63n - 1n, -(2n ** 60n), 5n).buffer) };
    expect(exactJson({ data: tensorToJsonData(big), s: 'keep "\\u0000int:1" text' })).toBe(
      '{"data":[9223372036854775807,-1152921504606846976,5],"s":"keep \\"\\\\u0000int:1\\" text"}',
    );
  });

  it('flattens nested data and checks the element count', () => {
    expect(Array.from(new Int32Array(jsonDataToBytes('INT32', [[1, 2], [3, 4]], 4, 'x').buffer))).toEqual([1, 2, 3, 4]);
    expect(() => jsonDataToBytes('INT32', [1, 2, 3], 4, 'x')).toThrow("Unable to parse 'data': Shape does not match true shape of 'data' field");
    expect(() => jsonDataToBytes('INT32', [1, 2, 3, 4, 5], 4, 'x')).toThrow("Unable to parse 'data'");
    expect(() => jsonDataToBytes('INT32', [1.5], 1, 'x')).toThrow('unable to convert 1.5 to INT32');
    expect(() => jsonDataToBytes('BOOL', [1], 1, 'x')).toThrow('unable to convert 1 to BOOL');
    expect(() => jsonDataToBytes('FP16', [1], 1, 'x')).toThrow(/FP16 data for input 'x'/);
    expect(() => tensorToJsonData({ name: 'h', datatype: 'FP16', shape: [1], data: new Uint8Array(2) })).toThrow(
      "receiving FP16 data via JSON is not supported. Please use the binary data format for output 'h'",
    );
  });

  it('refuses integers a datatype cannot hold instead of wrapping them (INT32 2^40 and 1e300 became 0)', () => {
    const cases: [DataType, number | string, string][] = [
      ['INT32', 2 ** 40, '1099511627776 to INT32 for input \'x\': out of range [-2147483648, 2147483647]'],
      ['INT32', 1e300, 'to INT32 for input \'x\': out of range'],
      ['INT32', -(2 ** 31) - 1, '-2147483649 to INT32'],
      ['INT8', 128, '128 to INT8 for input \'x\': out of range [-128, 127]'],
      ['INT16', -32769, '-32769 to INT16'],
      ['UINT8', -1, '-1 to UINT8 for input \'x\': out of range [0, 255]'],
      ['UINT8', 256, '256 to UINT8'],
      ['UINT16', 65536, '65536 to UINT16'],
      ['UINT32', 2 ** 32, '4294967296 to UINT32'],
      ['UINT64', -1, '-1 to UINT64 for input \'x\': out of range [0, 18446744073709551615]'],
      ['UINT64', 1e300, 'to UINT64 for input \'x\': out of range'],
      ['INT64', 2 ** 63, '9223372036854776000 to INT64 for input \'x\': out of range [-9223372036854775808, 9223372036854775807]'],
      ['INT64', '-9223372036854775809', '"-9223372036854775809" to INT64'],
    ];
    for (const [datatype, v, message] of cases) expect(() => jsonDataToBytes(datatype, [v], 1, 'x'), `${datatype} ${v}`).toThrow(message);
    expect(() => jsonDataToBytes('INT32', [3.5], 1, 'x')).toThrow("unable to convert 3.5 to INT32 for input 'x'");
    // The ends of each range still pass.
    expect(roundTrip('INT32', [-(2 ** 31), 2 ** 31 - 1])).toEqual([-(2 ** 31), 2 ** 31 - 1]);
    expect(roundTrip('UINT32', [0, 2 ** 32 - 1])).toEqual([0, 2 ** 32 - 1]);
    expect(Array.from(new BigInt64Array(jsonDataToBytes('INT64', ['-9223372036854775808', '9223372036854775807'], 2, 'x').buffer))).toEqual([
      -(2n ** 63n),
      2n ** 63n - 1n,
    ]);
    // gRPC's int_contents carries int32 values: INT8 300 is refused the same way, never stored as 44 (300 mod 256).
    expect(() => contentsToBytes('INT8', { int_contents: [300] }, 1, 'x', 'm')).toThrow('300 to INT8 for input \'x\': out of range [-128, 127]');
  });

  it('converts typed gRPC contents and checks the field matches the datatype', () => {
    expect(Array.from(new Float32Array(contentsToBytes('FP32', { fp32_contents: [1, 2] }, 2, 'x', 'm').buffer))).toEqual([1, 2]);
    expect(Array.from(new BigUint64Array(contentsToBytes('UINT64', { uint64_contents: [18446744073709551615n] }, 1, 'x', 'm').buffer))).toEqual([
      18446744073709551615n,
    ]);
    expect(() => contentsToBytes('FP32', { int_contents: [1] }, 1, 'x', 'm')).toThrow(
      "unexpected number of elements in 'contents' for input 'x' for model 'm'. Expected 1, got 0",
    );
  });
});

describe('reserved parameters', () => {
  it('lifts priority/timeout and the sequence keys, keeps binary_data_output for the transport, forwards the rest', () => {
    expect(liftParameters({ priority: 2, timeout: 100, binary_data_output: true, sequence_id: 'abc', custom: 1.5 })).toEqual({
      parameters: { custom: 1.5 },
      sequence: { id: 'abc', start: false, end: false },
      priority: 2,
      timeoutUs: 100,
      binaryDataOutput: true,
      enableEmptyFinalResponse: false,
    });
    expect(liftParameters({ triton_enable_empty_final_response: true }).enableEmptyFinalResponse).toBe(true);
    expect(() => liftParameters({ triton_other: 1 })).toThrow("parameter keys starting with 'triton_' are reserved");
    expect(() => liftParameters({ priority: -1 })).toThrow(/'priority'/);
    expect(() => liftParameters({ x: { nested: 1 } })).toThrow(/parameter 'x'/);
  });
});
