/** The hand-written ModelInfer codec against protobufjs reading/writing the same messages. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  checkWireFormat,
  decodeInferRequest,
  decodeInferResponse,
  decodeStreamResponse,
  encodeInferRequest,
  encodeInferResponse,
  encodeStreamResponse,
  tritonProtoRoot,
  WireFormatError,
  type WireInferRequest,
} from '../src/proto/index.ts';

const root = tritonProtoRoot();
const RequestType = root.lookupType('inference.ModelInferRequest');
const ResponseType = root.lookupType('inference.ModelInferResponse');

const request: WireInferRequest = {
  model_name: 'm',
  model_version: '2',
  id: 'req',
  parameters: { a: 1, s: 'x', b: false, d: 1.5, big: 2n ** 63n + 5n, neg: -3 },
  inputs: [
    { name: 'X', datatype: 'FP32', shape: [1, -1, 2 ** 40], parameters: { shared_memory_offset: 8 } },
    { name: 'Y', datatype: 'INT32', shape: [2], parameters: {}, contents: { int_contents: [-1, 7], bytes_contents: [Buffer.from('hi')] } },
  ],
  outputs: [{ name: 'Z', parameters: { classification: 2 } }],
  raw_input_contents: [Buffer.from([1, 2, 3]), Buffer.alloc(0)],
};

describe('ModelInferRequest codec', () => {
  it('writes what protobufjs reads', () => {
    const obj = RequestType.toObject(RequestType.decode(encodeInferRequest(request)), { longs: String, bytes: Array });
    expect(obj['model_version']).toBe('2');
    expect(obj['parameters']).toEqual({
      a: { int64_param: '1' },
      s: { string_param: 'x' },
      b: { bool_param: false },
      d: { double_param: 1.5 },
      big: { uint64_param: '9223372036854775813' },
      neg: { int64_param: '-3' },
    });
    expect(obj['inputs'][0].shape).toEqual(['1', '-1', '1099511627776']);
    expect(obj['inputs'][1].contents.int_contents).toEqual([-1, 7]);
    expect(obj['raw_input_contents']).toEqual([[1, 2, 3], []]);
  });

  it('reads what protobufjs writes, raw contents as views into the buffer', () => {
    const buf = Buffer.from(RequestType.encode(RequestType.fromObject({
      model_name: 'm',
      inputs: [{ name: 'X', datatype: 'UINT64', shape: [2], contents: { uint64_contents: ['18446744073709551615', '3'] } }],
      raw_input_contents: [Buffer.from([9, 8])],
      parameters: { p: { uint64_param: '5' } },
    })).finish());
    const m = decodeInferRequest(buf);
    expect(m.inputs[0]!.contents!.uint64_contents).toEqual([18446744073709551615n, 3]);
    expect(m.parameters).toEqual({ p: 5 });
    expect(m.raw_input_contents[0]!.buffer).toBe(buf.buffer);
  });

  it('round-trips and skips unknown fields', () => {
    const enc = encodeInferRequest(request);
    const withUnknown = Buffer.concat([Buffer.from([0xf8, 0x01, 0x05, 0x92, 0x02, 0x01, 0x00]), enc]);
    const back = decodeInferRequest(withUnknown);
    expect(back.id).toBe('req');
    expect(back.inputs[0]!.shape).toEqual([1, -1, 2 ** 40]);
    expect(back.parameters['big']).toBe(2n ** 63n + 5n);
    expect(Buffer.from(back.raw_input_contents[0]!)).toEqual(Buffer.from([1, 2, 3]));
  });

  it('bytes_contents decode packed (u32 length + bytes each, in one buffer), whatever else sits between them', () => {
    const buf = Buffer.from(RequestType.encode(RequestType.fromObject({
      model_name: 'm',
      inputs: [{ name: 'T', datatype: 'BYTES', shape: [3], contents: { bytes_contents: [Buffer.from('ab'), Buffer.alloc(0), Buffer.from('xyz')], int_contents: [4] } }],
    })).finish());
    const contents = decodeInferRequest(buf).inputs[0]!.contents!;
    expect(contents.bytes_contents).toBeUndefined();
    expect(contents.bytes_packed!.count).toBe(3);
    expect(Buffer.from(contents.bytes_packed!.data)).toEqual(Buffer.from([2, 0, 0, 0, 97, 98, 0, 0, 0, 0, 3, 0, 0, 0, 120, 121, 122]));
    expect(contents.int_contents).toEqual([4]);
    // Encoding takes the packed form too: protobufjs reads the elements back.
    const again = RequestType.toObject(RequestType.decode(encodeInferRequest(decodeInferRequest(buf))), { bytes: String });
    expect(again['inputs'][0].contents.bytes_contents).toEqual(['YWI=', '', 'eHl6']);
  });

  it('responses and stream responses round-trip; protobufjs agrees', () => {
    const res = {
      model_name: 'm',
      model_version: '1',
      id: '',
      parameters: { triton_final_response: true },
      outputs: [{ name: 'O', datatype: 'BYTES', shape: [1], parameters: {} }],
      raw_output_contents: [Buffer.from([1, 0, 0, 0, 65])],
    };
    const enc = encodeInferResponse(res);
    expect(ResponseType.toObject(ResponseType.decode(enc))['outputs'][0].name).toBe('O');
    expect(decodeInferResponse(enc).parameters).toEqual({ triton_final_response: true });
    const s = decodeStreamResponse(encodeStreamResponse({ error_message: 'bad', infer_response: res }));
    expect(s.error_message).toBe('bad');
    expect(s.infer_response!.raw_output_contents[0]![4]).toBe(65);
  });

  it('rejects malformed input with WireFormatError, never anything else', () => {
    const enc = encodeInferRequest(request);
    fc.assert(
      fc.property(fc.nat(enc.length - 1), fc.nat(255), fc.nat(enc.length), (pos, byte, cut) => {
        const mutated = Buffer.from(enc);
        mutated[pos] = byte;
        for (const b of [mutated, mutated.subarray(0, cut)]) {
          try {
            decodeInferRequest(b);
          } catch (e) {
            expect(e).toBeInstanceOf(WireFormatError);
          }
        }
      }),
      { numRuns: 500 },
    );
    expect(() => checkWireFormat(Buffer.from([0x0a, 0x09, 0x61]))).toThrow(WireFormatError);
    expect(() => checkWireFormat(Buffer.from([0x0f]))).toThrow(/wire type 7/);
  });
});
