/**
 * The response cache's store (LRU within its byte size, copies in and out) and its key (what makes
 * two requests the same answer).
 */
import { describe, expect, it } from 'vitest';
import { MIN_RESPONSE_CACHE_BYTES, ResponseCache } from '../../src/cache/response-cache.ts';
import { responseCacheKey } from '../../src/cache/cache-key.ts';
import type { InferRequest } from '../../src/types.ts';
import type { Tensor } from '../../src/tensor/tensor.ts';

const tensor = (name: string, bytes: number, fill = 1): Tensor => ({ name, datatype: 'UINT8', shape: [bytes], data: new Uint8Array(bytes).fill(fill) });

describe('ResponseCache', () => {
  it('refuses a size below what it needs to keep anything, or not an integer', () => {
    expect(() => new ResponseCache(MIN_RESPONSE_CACHE_BYTES - 1)).toThrow(/at least 1024 bytes, got 1023/);
    expect(() => new ResponseCache(2048.5)).toThrow(RangeError);
    expect(() => new ResponseCache(Number.NaN)).toThrow(RangeError);
  });

  it('evicts the least recently used entries to stay within its size, and never stores what exceeds it', () => {
    const cache = new ResponseCache(4096);
    expect(cache.insert('a', { outputs: [tensor('OUT', 1000)] })).toBe('inserted');
    expect(cache.insert('b', { outputs: [tensor('OUT', 1000)] })).toBe('inserted');
    expect(cache.insert('c', { outputs: [tensor('OUT', 1000)] })).toBe('inserted');
    expect(cache.stats().entries).toBe(3);
    cache.lookup('a'); // a is now the most recently used: b goes first
    expect(cache.insert('d', { outputs: [tensor('OUT', 1000)] })).toBe('inserted');
    expect(cache.lookup('b')).toBeUndefined();
    expect(cache.lookup('a')).toBeDefined();
    expect(cache.lookup('c')).toBeDefined();
    expect(cache.lookup('d')).toBeDefined();
    expect(cache.stats().usedBytes).toBeLessThanOrEqual(4096);
    expect(cache.stats().evictions).toBe(1);
    expect(cache.insert('huge', { outputs: [tensor('OUT', 5000)] })).toBe('too-large');
    expect(cache.stats().entries).toBe(3);
    expect(cache.insert('a', { outputs: [tensor('OUT', 10)] })).toBe('exists');
  });

  it('hands out copies: changing a response changes neither the entry nor the next hit', () => {
    const cache = new ResponseCache(4096);
    const original = tensor('OUT', 4, 7);
    cache.insert('k', { outputs: [original], parameters: { p: 1 } });
    original.data.fill(0);
    const first = cache.lookup('k')!;
    expect([...first.outputs[0]!.data]).toEqual([7, 7, 7, 7]);
    first.outputs[0]!.data.fill(9);
    expect([...cache.lookup('k')!.outputs[0]!.data]).toEqual([7, 7, 7, 7]);
    expect(cache.lookup('k')!.parameters).toEqual({ p: 1 });
  });
});

describe('responseCacheKey', () => {
  const base: InferRequest = {
    id: '1',
    model: 'm',
    inputs: [
      { name: 'A', datatype: 'FP32', shape: [1, 2], data: new Uint8Array(8).fill(1) },
      { name: 'B', datatype: 'INT32', shape: [1, 1], data: new Uint8Array(4).fill(2) },
    ],
  };
  const key = (r: Partial<InferRequest>, version = 1, stamp = 's') => responseCacheKey({ ...base, ...r }, version, stamp);

  it('is the same for the same model, version and inputs, whatever the id or input order', () => {
    expect(key({ id: 'other' })).toBe(key({}));
    expect(key({ inputs: [...base.inputs].reverse() })).toBe(key({}));
  });

  it('differs by model, version, files, input bytes, shape, datatype, name, requested outputs and parameters', () => {
    const k = key({});
    const [a, b] = base.inputs;
    const variants = [
      key({ model: 'n' }),
      key({}, 2),
      key({}, 1, 'changed files'),
      key({ inputs: [{ ...a!, data: new Uint8Array(8).fill(3) }, b!] }),
      key({ inputs: [{ ...a!, shape: [2, 1] }, b!] }),
      key({ inputs: [{ ...a!, datatype: 'INT32' }, b!] }),
      key({ inputs: [{ ...a!, name: 'C' }, b!] }),
      key({ outputs: [{ name: 'OUT0' }] }),
      key({ parameters: { temperature: 1 } }),
      key({ parameters: { temperature: '1' } }),
    ];
    for (const v of variants) expect(v).not.toBe(k);
    expect(new Set(variants).size).toBe(variants.length);
  });
});
