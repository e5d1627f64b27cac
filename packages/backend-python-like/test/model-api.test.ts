import { describe, expect, it } from 'vitest';
import { InferError } from '@tritium/core';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
import {
  AutoCompleteConfig,
  InferenceRequest,
  InferenceResponse,
  Tensor,
  TritonError,
  getInputConfigByName,
  getOutputConfigByName,
  getOutputTensorByName,
} from '../src/model-api/index.ts';

describe('Tensor', () => {
  it('infers datatypes from typed arrays, strings and numbers', () => {
    expect(new Tensor('a', BigInt64Array.of(1n, 2n)).datatype).toBe('INT64');
    expect(new Tensor('a', Float32Array.of(1)).datatype).toBe('FP32');
    expect(new Tensor('a', ['x', 'y']).datatype).toBe('BYTES');
    expect(new Tensor('a', [1, 2]).datatype).toBe('INT64');
    expect(new Tensor('a', [1.5]).datatype).toBe('FP64');
    expect(new Tensor('a', [true, false]).asArray()).toEqual([true, false]);
  });

  it('converts with an explicit datatype (astype) and keeps views of matching typed arrays', () => {
    const src = Int32Array.of(1, 2, 3, 4);
    expect(new Tensor('a', src, [2, 2]).data).toBe(src);
    const t = new Tensor('a', src, [2, 2], 'INT64');
    expect(t.data).toEqual(BigInt64Array.of(1n, 2n, 3n, 4n));
    expect(t.toArray()).toEqual([
      [1n, 2n],
      [3n, 4n],
    ]);
  });

  it('round-trips BYTES through the wire form, with strings and raw bytes', () => {
    const t = new Tensor('s', ['héllo', new Uint8Array([0xff])], [2, 1]);
    const back = Tensor.fromWire(t.toWire('renamed'));
    expect(back.name).toBe('renamed');
    expect(back.bytes()[1]).toEqual(new Uint8Array([0xff]));
    expect(back.toArray()).toEqual([['héllo'], [new Uint8Array([0xff])]]);
    expect(() => back.strings()).toThrow("invalid UTF-8 in BYTES element of 'renamed'");
    // Serialized BYTES in one Uint8Array with datatype BYTES is taken as is.
    expect(new Tensor('c', t.data, t.shape, 'BYTES').toArray()).toEqual(back.toArray());
  });

  it('names the tensor and the problem on bad input', () => {
    expect(() => new Tensor('x', [1, 2, 3], [2])).toThrow("tensor 'x': shape [2] holds 2 elements but 3 were given");
    expect(() => new Tensor('x', [1], [1], 'FP16')).toThrow("tensor 'x': FP16 data must be given as a Uint16Array of raw bits");
    expect(() => new Tensor('x', Int32Array.of(1)).strings()).toThrow("tensor 'x' is INT32; strings() is for BYTES tensors");
    expect(() => new Tensor('', [1])).toThrow('Tensor name must be a non-empty string');
  });
});

describe('responses, errors, requests', () => {
  it('InferenceResponse accepts the options and the positional form', () => {
    const y = new Tensor('Y', Float32Array.of(1));
    const a = new InferenceResponse({ outputTensors: [y] });
    const b = new InferenceResponse([y], new TritonError('no', TritonError.NOT_FOUND));
    expect(getOutputTensorByName(a, 'Y')).toBe(y);
    expect(a.hasError()).toBe(false);
    expect(b.error()).toMatchObject({ code: 'NOT_FOUND', message: 'no' });
    expect(InferError.is(b.error())).toBe(true);
    expect(() => new InferenceResponse({ outputTensors: [{} as Tensor] })).toThrow('outputTensors[0] is not a Tensor');
  });

  it('TritonError defaults to INTERNAL', () => {
    expect(new TritonError('x').code).toBe('INTERNAL');
  });

  it('exec() outside a server answers with an UNAVAILABLE error response', async () => {
    const r = await new InferenceRequest({ modelName: 'm', inputs: [new Tensor('X', Int32Array.of(1))] }).exec();
    expect(r.hasError()).toBe(true);
    expect(r.error()?.code).toBe('UNAVAILABLE');
  });
});

describe('config helpers and AutoCompleteConfig', () => {
  const config = normalizeModelConfig(
    parseModelConfigText(`name: "m" backend: "python" sequence_batching {}
      input [ { name: "A" data_type: TYPE_FP32 dims: [ 1 ] } ] output [ { name: "B" data_type: TYPE_INT64 dims: [ -1 ] } ]`),
  );

  it('looks inputs and outputs up by name, from the object or its JSON', () => {
    expect(getInputConfigByName(config, 'A')?.data_type).toBe('TYPE_FP32');
    expect(getOutputConfigByName(JSON.stringify(config), 'B')?.dims).toEqual([-1]);
    expect(getOutputConfigByName(config, 'nope')).toBeUndefined();
  });

  it("rejects what Triton rejects, with Triton's words", () => {
    const c = new AutoCompleteConfig(config);
    expect(() => c.setDynamicBatching()).toThrow(
      "Configuration specified scheduling_choice as 'sequence_batching', but auto-complete-config function for model 'm' tries to set scheduling_choice as 'dynamic_batching'",
    );
    c.addInput({ name: 'A', data_type: 'TYPE_FP32', dims: [1] }); // already declared the same: kept
    expect(() => c.addInput({ name: 'A', data_type: 'TYPE_INT32', dims: [1] })).toThrow('configuration expects datatype TYPE_FP32');
    expect(c.asDict().input).toHaveLength(1);
  });
});
