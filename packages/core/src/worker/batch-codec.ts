/**
 * Packs a batch (requests or results) for the trip across the worker boundary: the object graph as
 * ONE JSON string and the small tensors' bytes in ONE fresh ArrayBuffer (8-byte aligned, so typed
 * views need no copy), large tensors as their own buffers. Structured-cloning the object graph of a
 * batch costs ~10 µs per request (see bench/worker.bench.ts); this costs a fraction of that.
 * Returns undefined when the graph cannot be JSON (a bigint or non-finite parameter, which the
 * mapper signals by throwing): callers then send it as is.
 */
import type { Tensor } from '../tensor/tensor.ts';
import { prepareTensor } from './protocol.ts';

/** Tensors at least this large travel as their own buffer (transferred), not copied into the pool. */
export const POOL_LIMIT = 64 * 1024;

export interface PackedBatch {
  /** `{ items, slots }`; each tensor's `data` is an index into `slots`. */
  readonly json: string;
  /** The small tensors' bytes. */
  readonly pool: ArrayBuffer | null;
  /** Large tensors' bytes, referenced from slots as `[-1, index]`. */
  readonly large: readonly Uint8Array[];
}

type Slot = readonly [offset: number, length: number];

/** What a packer hands `mapItem` to turn each tensor into its JSON-able stand-in. */
export type TensorRef = (tensor: Tensor) => unknown;

/**
 * Packs `items`, with `mapItem` rebuilding each item with its tensors replaced through `ref`.
 * Large buffers are transferred per {@link prepareTensor}'s rules (`transferWhole`).
 */
export function packBatch<T>(
  items: readonly T[],
  mapItem: (item: T, ref: TensorRef) => unknown,
  transferList: ArrayBuffer[] | undefined,
  transferWhole: boolean,
): PackedBatch | undefined {
  const small: Uint8Array[] = [];
  const large: Uint8Array[] = [];
  const slots: Slot[] = [];
  let poolSize = 0;
  const ref: TensorRef = (tensor) => {
    const data = tensor.data;
    let slot: Slot;
    if (data.byteLength >= POOL_LIMIT) {
      const prepared = prepareTensor(tensor, transferList, transferWhole).data;
      slot = [-1, large.length];
      large.push(prepared);
    } else {
      slot = [poolSize, data.byteLength];
      small.push(data);
      poolSize += (data.byteLength + 7) & ~7;
    }
    slots.push(slot);
    return { name: tensor.name, datatype: tensor.datatype, shape: tensor.shape, data: slots.length - 1 };
  };
  let json: string;
  try {
    json = JSON.stringify({ items: items.map((item) => mapItem(item, ref)), slots });
  } catch {
    return undefined; // bigint, NaN or another non-JSON value: send the graph by structured clone instead
  }
  let pool: ArrayBuffer | null = null;
  if (poolSize > 0) {
    const bytes = new Uint8Array(poolSize);
    let s = 0;
    for (const slot of slots) {
      if (slot[0] < 0) continue;
      bytes.set(small[s++]!, slot[0]);
    }
    pool = bytes.buffer;
    transferList?.push(pool);
  }
  return { json, pool, large };
}

/**
 * Unpacks what {@link packBatch} built; `restoreItem` rebuilds each item, mapping every tensor
 * stand-in through `tensor` (views into the pool, no copy).
 */
export function unpackBatch<T>(packed: PackedBatch, restoreItem: (item: any, tensor: (stub: any) => Tensor) => T): T[] {
  const { items, slots } = JSON.parse(packed.json) as { items: unknown[]; slots: Slot[] };
  const pool = packed.pool;
  const toView = (data: Uint8Array): Uint8Array =>
    data.constructor === Uint8Array ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const tensor = (stub: { name: string; datatype: Tensor['datatype']; shape: number[]; data: number }): Tensor => {
    const [offset, length] = slots[stub.data]!;
    const data = offset < 0 ? toView(packed.large[length]!) : new Uint8Array(pool!, offset, length);
    return { name: stub.name, datatype: stub.datatype, shape: stub.shape, data };
  };
  return items.map((item) => restoreItem(item, tensor));
}
