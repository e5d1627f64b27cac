/**
 * Triton's `local` response cache (`--cache-config local,size=<bytes>`): one LRU store of successful
 * responses shared by every model whose config has `response_cache { enable: true }`. The size is
 * the bound on what it holds (outputs' bytes plus a fixed charge per entry and tensor for the key,
 * names and shapes); inserting past it evicts the least recently used entries, and a response larger
 * than the whole cache is not stored. Entries hold their own copies of the output bytes and hand out
 * copies, so nothing a transport does to a response can change what the next hit returns.
 */
import type { Tensor } from '../tensor/tensor.ts';
import type { CachedResponse, ResponseCacheStore } from './response-cache-store.ts';

export type { CachedResponse } from './response-cache-store.ts';

interface Entry {
  readonly response: CachedResponse;
  readonly bytes: number;
}

/** Charged per entry (key, map slot, object headers) and per tensor (name, datatype, shape). */
const ENTRY_OVERHEAD_BYTES = 128;
const TENSOR_OVERHEAD_BYTES = 64;

/** Triton's local cache refuses sizes too small to hold its own bookkeeping (~1 KB). */
export const MIN_RESPONSE_CACHE_BYTES = 1024;

export interface ResponseCacheStats {
  readonly sizeBytes: number;
  readonly usedBytes: number;
  readonly entries: number;
  readonly evictions: number;
}

function cost(response: CachedResponse): number {
  let bytes = ENTRY_OVERHEAD_BYTES;
  for (const t of response.outputs) bytes += TENSOR_OVERHEAD_BYTES + t.name.length + t.shape.length * 8 + t.data.byteLength;
  return bytes;
}

const copyTensors = (outputs: readonly Tensor[]): Tensor[] =>
  outputs.map((t) => ({ name: t.name, datatype: t.datatype, shape: [...t.shape], data: new Uint8Array(t.data) }));

export class ResponseCache implements ResponseCacheStore {
  readonly name = 'local';
  private readonly entries = new Map<string, Entry>();
  private used = 0;
  private evicted = 0;

  constructor(readonly sizeBytes: number) {
    if (!Number.isSafeInteger(sizeBytes) || sizeBytes < MIN_RESPONSE_CACHE_BYTES) {
      throw new RangeError(`response cache size must be an integer of at least ${MIN_RESPONSE_CACHE_BYTES} bytes, got ${sizeBytes}`);
    }
  }

  /** A copy of the response cached under `key` (now the most recently used), or undefined. */
  lookup(key: string): CachedResponse | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    const { outputs, parameters } = entry.response;
    return { outputs: copyTensors(outputs), ...(parameters ? { parameters: { ...parameters } } : {}) };
  }

  /**
   * Stores a copy of `response` under `key`, evicting least recently used entries to make room.
   * Returns 'exists' when another request already stored this key (Triton's ALREADY_EXISTS: not a
   * miss of its own), 'too-large' when the response alone exceeds the cache.
   */
  insert(key: string, response: CachedResponse): 'inserted' | 'exists' | 'too-large' {
    if (this.entries.has(key)) return 'exists';
    const bytes = cost(response);
    if (bytes > this.sizeBytes) return 'too-large';
    while (this.used + bytes > this.sizeBytes) {
      const oldest = this.entries.keys().next().value as string;
      this.used -= this.entries.get(oldest)!.bytes;
      this.entries.delete(oldest);
      this.evicted++;
    }
    const stored: CachedResponse = {
      outputs: copyTensors(response.outputs),
      ...(response.parameters ? { parameters: { ...response.parameters } } : {}),
    };
    this.entries.set(key, { response: stored, bytes });
    this.used += bytes;
    return 'inserted';
  }

  stats(): ResponseCacheStats {
    return { sizeBytes: this.sizeBytes, usedBytes: this.used, entries: this.entries.size, evictions: this.evicted };
  }
}
