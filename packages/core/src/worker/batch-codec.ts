/**
 * Packs a batch (requests or results) for the trip across the worker boundary. Each item is written
 * field by field, in an order its packer and unpacker agree on, into a table of float64s (numbers,
 * and indices into a table of the batch's distinct strings); the table and the small tensors' bytes
 * share ONE fresh ArrayBuffer (the table first, then the tensors 8-byte aligned, so typed views need
 * no copy), large tensors go as their own buffers, and the rare fields that are neither (parameters,
 * requested outputs, errors) as one JSON string.
 * Structured-cloning a batch's object graph costs ~10 µs per request (bench/worker.bench.ts), and
 * JSON with a key per field still ~1.5 µs per result (JSON.parse alone 46 µs for 32 tokenizer
 * results); reading numbers back into object literals costs a fraction of that. An ArrayBuffer costs
 * a few µs to allocate however small (its memory lives outside the JS heap), hence one per batch:
 * the table is written into a reused scratch array and copied in once its length is known.
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
  /**
   * The table (item count, then each item's fields as its packer wrote them: `tableLength` float64s
   * from byte 0), then the pool of small tensors' bytes; tensor offsets are relative to the pool.
   * One ArrayBuffer, not views: V8 serialization (a child process's channel) copies each view on its
   * own and may leave it unaligned, while an ArrayBuffer arrives whole at offset 0.
   */
  readonly buffer: ArrayBuffer;
  readonly tableLength: number;
  /** Large tensors' bytes, referenced from the table by index. */
  readonly large: readonly Uint8Array[];
}

/** What a packer writes one item with. */
export interface ItemWriter {
  /** A string that may repeat within the batch (a model, tensor name or datatype): stored once. */
  string(value: string): void;
  /**
   * A string that is rarely repeated within the batch (a request id): stored without looking it up,
   * which costs more than the few bytes a repeat would save (the reader reads both with `string()`).
   */
  uniqueString(value: string): void;
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

/** Where every batch's table is written before its length is known (one thread packs one batch at a time). */
let scratch = new Float64Array(1024);

/**
 * Packs `items`, each written by `writeItem`. Large buffers are transferred per
 * {@link prepareTensor}'s rules (`transferWhole`); the buffer of the table and the pool always is.
 */
export function packBatch<T>(
  items: readonly T[],
  writeItem: (item: T, out: ItemWriter) => void,
  transferList: ArrayBuffer[] | undefined,
  transferWhole: boolean,
): PackedBatch | undefined {
  let used = 0;
  const put = (value: number): void => {
    if (used === scratch.length) {
      const grown = new Float64Array(scratch.length * 2);
      grown.set(scratch);
      scratch = grown;
    }
    scratch[used++] = value;
  };
  put(items.length);
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
    put(i);
  };
  const out: ItemWriter = {
    string,
    uniqueString(value) {
      put(strings.push(value) - 1);
    },
    number: put,
    tensors(tensors) {
      put(tensors.length);
      for (const tensor of tensors) {
        string(tensor.name);
        string(tensor.datatype);
        const shape = tensor.shape;
        put(shape.length);
        for (let d = 0; d < shape.length; d++) put(shape[d]!);
        const data = tensor.data;
        if (data.byteLength >= POOL_LIMIT) {
          put(-1);
          put(large.length);
          large.push(prepareTensor(tensor, transferList, transferWhole).data);
        } else {
          put(poolSize);
          put(data.byteLength);
          small.push(data);
          poolSize += (data.byteLength + 7) & ~7;
        }
      }
    },
    json(value) {
      put(value === undefined ? -1 : extras.push(value) - 1);
    },
  };
  for (const item of items) writeItem(item, out);
  let json: string;
  try {
    json = JSON.stringify([strings, extras]);
  } catch {
    return undefined; // a bigint or another non-JSON value: send the batch by structured clone instead
  }
  const buffer = new ArrayBuffer(used * 8 + poolSize);
  new Float64Array(buffer, 0, used).set(scratch.subarray(0, used));
  if (poolSize > 0) {
    const pool = new Uint8Array(buffer, used * 8, poolSize);
    let offset = 0;
    for (const data of small) {
      pool.set(data, offset);
      offset += (data.byteLength + 7) & ~7;
    }
  }
  transferList?.push(buffer);
  return { json, buffer, tableLength: used, large };
}

function malformed(what: string): never {
  throw new RangeError(`malformed packed batch: ${what}`);
}

/** Unpacks what {@link packBatch} built; tensors are views into the pool (no copy). */
export function unpackBatch<T>(packed: PackedBatch, readItem: (input: ItemReader) => T): T[] {
  const { buffer, tableLength, large } = packed;
  if (!(buffer instanceof ArrayBuffer)) malformed('no buffer');
  if (!(Number.isInteger(tableLength) && tableLength >= 0 && tableLength * 8 <= buffer.byteLength)) malformed(`table length ${tableLength}`);
  const table = new Float64Array(buffer, 0, tableLength);
  const pool = new Uint8Array(buffer, tableLength * 8);
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
    // The pool shares its buffer with the table: its own bounds are checked here.
    if (!(Number.isInteger(offset) && Number.isInteger(length) && offset >= 0 && length >= 0 && offset + length <= pool.byteLength)) {
      malformed(`pool bytes ${offset}+${length} outside its ${pool.byteLength}`);
    }
    return new Uint8Array(buffer, pool.byteOffset + offset, length);
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
