/**
 * Packs a batch (requests or results) for the trip across the worker boundary. Each item is written
 * field by field, in an order its packer and unpacker agree on, into ONE Float64Array (numbers, and
 * indices into a table of the batch's distinct strings); the small tensors' bytes go into ONE fresh
 * ArrayBuffer (8-byte aligned, so typed views need no copy), large tensors as their own buffers, and
 * the rare fields that are neither (parameters, requested outputs, errors) as one JSON string.
 * Structured-cloning a batch's object graph costs ~10 µs per request (bench/worker.bench.ts), and
 * JSON with a key per field still ~1.5 µs per result (JSON.parse alone 46 µs for 32 tokenizer
 * results); reading numbers back into object literals costs a fraction of that.
 *
 * A result batch comes from a worker, whose code may forge it: reading never trusts a count or an
 * index (each is checked against what is there) and throws a RangeError on anything malformed.
 * Returns undefined when a field cannot be JSON (a bigint parameter, which JSON.stringify refuses):
 * callers then send the batch as is, by structured clone.
 */
import type { Tensor } from '../tensor/tensor.ts';
import { prepareTensor } from './protocol.ts';

/** Tensors at least this large travel as their own buffer (transferred), not copied into the pool. */
export const POOL_LIMIT = 64 * 1024;

export interface PackedBatch {
  /** `[strings, extras]`: the distinct strings the table indexes, and the JSON-only fields. */
  readonly json: string;
  /** Item count, then each item's fields as its packer wrote them. */
  readonly table: Float64Array;
  /** The small tensors' bytes. */
  readonly pool: ArrayBuffer | null;
  /** Large tensors' bytes, referenced from the table by index. */
  readonly large: readonly Uint8Array[];
}

/** What a packer writes one item with. */
export interface ItemWriter {
  string(value: string): void;
  number(value: number): void;
  tensors(tensors: readonly Tensor[]): void;
  /** Anything JSON can carry, or undefined. */
  json(value: unknown): void;
}

/** What an unpacker reads one item with, in the order it was written. */
export interface ItemReader {
  string(): string;
  number(): number;
  tensors(): Tensor[];
  json(): unknown;
}

/**
 * Packs `items`, each written by `writeItem`. Large buffers are transferred per
 * {@link prepareTensor}'s rules (`transferWhole`); the pool and the table are always transferred.
 */
export function packBatch<T>(
  items: readonly T[],
  writeItem: (item: T, out: ItemWriter) => void,
  transferList: ArrayBuffer[] | undefined,
  transferWhole: boolean,
): PackedBatch | undefined {
  const table: number[] = [items.length];
  const strings: string[] = [];
  const stringIndex = new Map<string, number>();
  const extras: unknown[] = [];
  const small: Uint8Array[] = [];
  const large: Uint8Array[] = [];
  let poolSize = 0;
  const string = (value: string): void => {
    let i = stringIndex.get(value);
    if (i === undefined) {
      i = strings.length;
      strings.push(value);
      stringIndex.set(value, i);
    }
    table.push(i);
  };
  const out: ItemWriter = {
    string,
    number: (value) => void table.push(value),
    tensors(tensors) {
      table.push(tensors.length);
      for (const tensor of tensors) {
        string(tensor.name);
        string(tensor.datatype);
        table.push(tensor.shape.length, ...tensor.shape);
        const data = tensor.data;
        if (data.byteLength >= POOL_LIMIT) {
          table.push(-1, large.length);
          large.push(prepareTensor(tensor, transferList, transferWhole).data);
        } else {
          table.push(poolSize, data.byteLength);
          small.push(data);
          poolSize += (data.byteLength + 7) & ~7;
        }
      }
    },
    json(value) {
      if (value === undefined) table.push(-1);
      else table.push(extras.push(value) - 1);
    },
  };
  for (const item of items) writeItem(item, out);
  let json: string;
  try {
    json = JSON.stringify([strings, extras]);
  } catch {
    return undefined; // a bigint or another non-JSON value: send the batch by structured clone instead
  }
  let pool: ArrayBuffer | null = null;
  if (poolSize > 0) {
    const bytes = new Uint8Array(poolSize);
    let offset = 0;
    for (const data of small) {
      bytes.set(data, offset);
      offset += (data.byteLength + 7) & ~7;
    }
    pool = bytes.buffer;
    transferList?.push(pool);
  }
  const packedTable = new Float64Array(table);
  transferList?.push(packedTable.buffer);
  return { json, table: packedTable, pool, large };
}

function malformed(what: string): never {
  throw new RangeError(`malformed packed batch: ${what}`);
}

/** Unpacks what {@link packBatch} built; tensors are views into the pool (no copy). */
export function unpackBatch<T>(packed: PackedBatch, readItem: (input: ItemReader) => T): T[] {
  const { table, pool, large } = packed;
  if (!(table instanceof Float64Array)) malformed('no table');
  const parsed: unknown = JSON.parse(packed.json);
  if (!Array.isArray(parsed) || !Array.isArray(parsed[0]) || !Array.isArray(parsed[1])) malformed('its JSON is not [strings, extras]');
  const [strings, extras] = parsed as [unknown[], unknown[]];
  let pos = 0;
  const number = (): number => (pos < table.length ? table[pos++]! : malformed('the table ends early'));
  /** A count of things still to be read, each taking at least one table slot. */
  const count = (): number => {
    const n = number();
    return Number.isInteger(n) && n >= 0 && n <= table.length - pos ? n : malformed(`count ${n} at ${pos - 1}`);
  };
  const string = (): string => {
    const s = strings[number()];
    return typeof s === 'string' ? s : malformed(`no string for index ${table[pos - 1]}`);
  };
  const view = (offset: number, length: number): Uint8Array => {
    if (offset === -1) {
      const data = large[length];
      if (!ArrayBuffer.isView(data)) malformed(`no large tensor ${length}`);
      return data.constructor === Uint8Array ? (data as Uint8Array) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    }
    if (!pool) return offset === 0 && length === 0 ? new Uint8Array(0) : malformed('a tensor in the pool, but no pool');
    return new Uint8Array(pool, offset, length); // RangeError when out of the pool's bounds
  };
  const input: ItemReader = {
    string,
    number,
    tensors() {
      const n = count();
      const out: Tensor[] = new Array(n);
      for (let i = 0; i < n; i++) {
        const name = string();
        const datatype = string() as Tensor['datatype'];
        const rank = count();
        const shape: number[] = new Array(rank);
        for (let d = 0; d < rank; d++) shape[d] = number();
        const offset = number();
        out[i] = { name, datatype, shape, data: view(offset, number()) };
      }
      return out;
    },
    json() {
      const i = number();
      if (i === -1) return undefined;
      return i >= 0 && i < extras.length ? extras[i] : malformed(`no JSON field ${i}`);
    },
  };
  const n = count();
  const items: T[] = new Array(n);
  for (let i = 0; i < n; i++) items[i] = readItem(input);
  if (pos !== table.length) malformed(`${table.length - pos} table slots left over`);
  return items;
}
