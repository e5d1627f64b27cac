/** The batch codec the worker host uses on every execute: what goes in comes out. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { packRequests, unpackRequests, packResults, unpackResults, type WireResult } from '../../src/worker/protocol.ts';
import { POOL_LIMIT } from '../../src/worker/batch-codec.ts';
import type { InferRequest } from '../../src/types.ts';
import type { Tensor } from '../../src/tensor/tensor.ts';

const u8 = (name: string, n: number, fill = 1): Tensor => ({ name, datatype: 'UINT8', shape: [n], data: new Uint8Array(n).fill(fill) });

describe('batch codec', () => {
  it('round-trips requests: fields, parameters, requested outputs, aligned views', () => {
    const batch: InferRequest[] = [
      { id: 'a', model: 'm', version: 2, inputs: [u8('X', 3, 7), u8('Y', 5, 9)], outputs: [{ name: 'O', parameters: { classification: 2 } }], parameters: { s: 'é', n: -1.25, b: false }, priority: 1, timeoutUs: 10 },
      { id: 'b', model: 'm', inputs: [u8('X', 0)] },
    ];
    const transfer: ArrayBuffer[] = [];
    const packed = packRequests(batch, transfer, false)!;
    expect(packed).toBeDefined();
    expect(transfer).toEqual([packed.buffer]); // the table and the small tensors share one buffer
    const back = unpackRequests(packed);
    expect(back).toEqual(batch);
    for (const t of back.flatMap((r) => r.inputs)) expect(t.data.byteOffset % 8).toBe(0);
    // The caller's tensors were copied, not moved.
    expect(batch[0]!.inputs[0]!.data.byteLength).toBe(3);
  });

  it('sends large tensors on their own, transferring whole buffers only when allowed', () => {
    const big = u8('X', POOL_LIMIT, 3);
    const slice: Tensor = { name: 'Y', datatype: 'UINT8', shape: [POOL_LIMIT], data: new Uint8Array(POOL_LIMIT * 2).subarray(1, POOL_LIMIT + 1) };
    const kept: ArrayBuffer[] = [];
    const p1 = packRequests([{ id: 'a', model: 'm', inputs: [big, slice] }], kept, false)!;
    expect(p1.large).toHaveLength(2);
    expect(p1.large[0]).toBe(big.data); // cloned by the channel, caller keeps it
    expect(p1.large[1]!.byteOffset).toBe(0); // the slice was copied into its own buffer
    expect(kept).toContain(p1.large[1]!.buffer);
    expect(kept).not.toContain(big.data.buffer);
    const moved: ArrayBuffer[] = [];
    packRequests([{ id: 'a', model: 'm', inputs: [big] }], moved, true);
    expect(moved).toContain(big.data.buffer);
    expect(unpackRequests(p1)[0]!.inputs.map((t) => t.data.byteLength)).toEqual([POOL_LIMIT, POOL_LIMIT]);
  });

  it('declines what JSON cannot carry (bigint, NaN), so the batch goes by structured clone', () => {
    expect(packRequests([{ id: 'a', model: 'm', inputs: [], parameters: { x: 1n } }], undefined, false)).toBeUndefined();
    expect(packRequests([{ id: 'a', model: 'm', inputs: [], parameters: { x: Number.NaN } }], undefined, false)).toBeUndefined();
  });

  it('round-trips results with errors in their slots', () => {
    const results: WireResult[] = [
      { ok: true, response: { id: 'a', model: 'm', version: 1, outputs: [u8('O', 4, 2)], parameters: { k: 'v' } } },
      { ok: false, error: { code: 'INVALID_ARG', message: 'bad' } },
    ];
    const packed = packResults(results, [])!;
    expect(unpackResults(packed)).toEqual(results);
  });

  it('round-trips any batch of requests and results (property)', () => {
    const tensor = fc.record({
      name: fc.string(),
      datatype: fc.constantFrom('UINT8' as const, 'BYTES' as const, 'FP32' as const),
      shape: fc.array(fc.nat(1 << 20), { maxLength: 4 }),
      data: fc.oneof({ arbitrary: fc.uint8Array({ maxLength: 64 }), weight: 20 }, { arbitrary: fc.constant(new Uint8Array(POOL_LIMIT + 3)), weight: 1 }),
    });
    // -0 crosses as 0 (JSON, as before this codec); NaN and ±Infinity fall back to structured clone (tested above).
    const finite = fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => (Object.is(v, -0) ? 0 : v));
    const parameters = fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.boolean(), finite));
    const request = fc.record(
      {
        id: fc.string(),
        model: fc.string(),
        version: fc.nat(),
        inputs: fc.array(tensor, { maxLength: 3 }),
        outputs: fc.array(fc.record({ name: fc.string() }), { maxLength: 2 }),
        parameters,
        priority: fc.nat(),
        timeoutUs: fc.nat(),
        preformed: fc.boolean(),
      },
      { requiredKeys: ['id', 'model', 'inputs'] },
    );
    fc.assert(
      fc.property(fc.array(request, { maxLength: 5 }), (batch) => {
        expect(unpackRequests(packRequests(batch as InferRequest[], [], false)!)).toEqual(batch);
      }),
      { numRuns: Number(process.env.CODEC_RUNS ?? 60) },
    );
    const result = fc.oneof(
      fc.record({ ok: fc.constant(true as const), response: fc.record({ id: fc.string(), model: fc.string(), version: fc.nat(), outputs: fc.array(tensor, { maxLength: 3 }), parameters }, { requiredKeys: ['id', 'model', 'version', 'outputs'] }) }),
      fc.record({ ok: fc.constant(false as const), error: fc.record({ code: fc.constant('INTERNAL' as const), message: fc.string() }) }),
    );
    fc.assert(
      fc.property(fc.array(result, { maxLength: 5 }), (results) => {
        expect(unpackResults(packResults(results as WireResult[], [])!)).toEqual(results);
      }),
      { numRuns: Number(process.env.CODEC_RUNS ?? 60) },
    );
  });

  it('refuses a forged packed batch with a RangeError, whatever its counts and indices say', () => {
    const good = packResults([{ ok: true, response: { id: 'a', model: 'm', version: 1, outputs: [u8('O', 4, 2)] } }], [])!;
    const t = Array.from(new Float64Array(good.buffer, 0, good.tableLength));
    const pool = new Uint8Array(good.buffer, good.tableLength * 8);
    /** A batch with this table (and pool), laid out as packBatch lays it out. */
    const forged = (table: number[], json = good.json, poolBytes: Uint8Array = pool) => () => {
      const buffer = new ArrayBuffer(table.length * 8 + poolBytes.byteLength);
      new Float64Array(buffer, 0, table.length).set(table);
      new Uint8Array(buffer, table.length * 8).set(poolBytes);
      return unpackResults({ json, buffer, tableLength: table.length, large: [] });
    };
    expect(forged(t)).not.toThrow();
    expect(forged([1e15, ...t.slice(1)])).toThrow(/count 1000000000000000/); // items
    expect(forged(t.slice(0, -2))).toThrow(RangeError); // ends early
    expect(forged([...t, 0])).toThrow(/left over/);
    expect(forged(t.map((v, i) => (i === 2 ? 99 : v)))).toThrow(/no string for index 99/); // id
    expect(forged(t.map((v, i) => (i === t.length - 3 ? 1 << 30 : v)))).toThrow(/pool bytes 1073741824\+4 outside its 8/); // pool offset
    // An offset before the pool would read the table's own bytes as a tensor's.
    expect(forged(t.map((v, i) => (i === t.length - 3 ? -8 : v)))).toThrow(/pool bytes -8\+4/);
    expect(forged(t.map((v, i) => (i === t.length - 3 ? 0.5 : v)))).toThrow(/pool bytes 0.5\+4/);
    expect(forged(t.map((v, i) => (i === t.length - 3 ? -1 : v)))).toThrow(/no large tensor/);
    expect(forged(t, '{}')).toThrow(/not \[strings, extras\]/);
    expect(forged(t, good.json, new Uint8Array(0))).toThrow(/pool bytes 0\+4 outside its 0/);
    expect(forged(t, '[["a","m"],{}]')).toThrow(/not \[strings, extras\]/);
    const base = { json: good.json, large: [] };
    expect(() => unpackResults({ ...base, buffer: new Float64Array(t) as unknown as ArrayBuffer, tableLength: t.length })).toThrow(/no buffer/);
    expect(() => unpackResults({ ...base, buffer: good.buffer, tableLength: good.buffer.byteLength })).toThrow(/table length/);
    expect(() => unpackResults({ ...base, buffer: good.buffer, tableLength: -1 })).toThrow(/table length/);
  });
});
