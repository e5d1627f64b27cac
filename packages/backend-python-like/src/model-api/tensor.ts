import { isDataType, typedView, type DataType, type DataTypeMap, type Tensor as WireTensor, type TypedArray } from '@tritium/core';
import {
  DATA_TYPE_SIZE,
  countBytesElements,
  decodeBytesElements,
  encodeBytesElements,
  elementCount,
  TYPED_ARRAY_CONSTRUCTORS,
} from '@tritium/core/tensor';
import { TritonError } from './errors.ts';

/** What a `Tensor` can be built from. */
export type TensorData =
  | TypedArray
  | Uint8ClampedArray
  | readonly (string | Uint8Array)[]
  | readonly number[]
  | readonly bigint[]
  | readonly boolean[];

/** One element as `asArray()` gives it: numbers, bigints (64-bit ints), booleans (BOOL), bytes (BYTES). */
export type TensorElement = number | bigint | boolean | Uint8Array;

/** A nested array as `toArray()` gives it (BYTES decoded as UTF-8 strings where valid). */
export type NestedArray = Array<number | bigint | boolean | string | Uint8Array | NestedArray>;

/** Typed array class per datatype, from core (one table for the whole server). */
const CTOR: Readonly<Record<DataType, new (length: number) => TypedArray>> = TYPED_ARRAY_CONSTRUCTORS;

function inferDatatype(data: TensorData): DataType {
  if (data instanceof Float32Array) return 'FP32';
  if (data instanceof Float64Array) return 'FP64';
  if (data instanceof Int8Array) return 'INT8';
  if (data instanceof Int16Array) return 'INT16';
  if (data instanceof Int32Array) return 'INT32';
  if (data instanceof BigInt64Array) return 'INT64';
  if (data instanceof Uint8Array || data instanceof Uint8ClampedArray) return 'UINT8';
  if (data instanceof Uint16Array) return 'UINT16';
  if (data instanceof Uint32Array) return 'UINT32';
  if (data instanceof BigUint64Array) return 'UINT64';
  const array = data as readonly unknown[];
  if (array.length === 0) return 'FP32';
  const first = array[0];
  if (typeof first === 'string' || first instanceof Uint8Array) return 'BYTES';
  if (typeof first === 'bigint') return 'INT64';
  if (typeof first === 'boolean') return 'BOOL';
  // numpy's rule: all integers → int64, otherwise float64.
  return array.every((v) => Number.isInteger(v)) ? 'INT64' : 'FP64';
}

function isBigIntType(datatype: DataType): boolean {
  return datatype === 'INT64' || datatype === 'UINT64';
}

/** Converts element values into a fresh typed array of `datatype` (numpy's `astype`). */
function convert(name: string, values: ArrayLike<unknown>, datatype: DataType): TypedArray {
  if (datatype === 'FP16' || datatype === 'BF16') {
    throw new TritonError(
      `tensor '${name}': ${datatype} data must be given as a Uint16Array of raw bits`,
      TritonError.INTERNAL,
    );
  }
  const out = new CTOR[datatype](values.length);
  const big = isBigIntType(datatype);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'number' && typeof v !== 'bigint' && typeof v !== 'boolean') {
      throw new TritonError(
        `tensor '${name}': element ${i} is ${typeof v}, expected a number for ${datatype}`,
        TritonError.INTERNAL,
      );
    }
    if (big) {
      (out as BigInt64Array)[i] = typeof v === 'bigint' ? v : BigInt(Math.trunc(Number(v)));
    } else {
      (out as Float64Array)[i] = Number(v);
    }
  }
  return out;
}

function bytesOfView(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/** Set by `Tensor.fromWire` for the one constructor call it makes (keeps `#` fields usable). */
let adopting: WireTensor | undefined;

/**
 * `pb_utils.Tensor`: a named, typed, shaped array. Build one from a typed array (datatype inferred:
 * `BigInt64Array` → INT64, `Float32Array` → FP32, ...), from strings or byte arrays (BYTES), or
 * from plain numbers with a datatype (converted like numpy's `astype`). Reading never copies when
 * the bytes are aligned.
 *
 * ```ts
 * new Tensor('INPUT_IDS', BigInt64Array.from([101n, 102n]), [1, 2]);
 * new Tensor('TEXT', ['hello'], [1, 1]);
 * new Tensor('SCORES', [0.5, 0.25], [2], 'FP32');
 * ```
 *
 * Model code builds tensors, so a bad argument (a shape like `[NaN, -1]`, a wrong element count) is
 * the model's fault: these errors are INTERNAL (HTTP 500), as Triton's python backend answers for
 * anything `execute` raises, never INVALID_ARG, which would blame the client. Only decoding a
 * client's BYTES input (invalid UTF-8) is INVALID_ARG.
 */
export class Tensor<D extends DataType = DataType> {
  readonly name: string;
  readonly datatype: D;
  readonly shape: readonly number[];
  /** Row-major little-endian bytes; BYTES as u32-LE-length-prefixed elements (the wire layout). */
  readonly #wire: Uint8Array;
  #view: TypedArray | undefined;

  /**
   * @param data typed array, BYTES elements (strings/Uint8Arrays), or plain numbers/bigints/booleans.
   *   With `datatype: 'BYTES'` a single Uint8Array is taken as already-serialized BYTES data.
   * @param shape defaults to `[elementCount]`; must hold exactly the given number of elements.
   * @param datatype defaults to the one the data implies; a different one converts the values.
   */
  constructor(name: string, data: TensorData, shape?: readonly number[], datatype?: DataType) {
    if (adopting) {
      // Tensor.fromWire: wrap the wire tensor as it is (validated by the server already).
      const wire = adopting;
      adopting = undefined;
      this.name = wire.name;
      this.datatype = wire.datatype as D;
      this.shape = [...wire.shape];
      this.#wire = wire.data;
      return;
    }
    if (typeof name !== 'string' || name === '') {
      throw new TritonError('Tensor name must be a non-empty string', TritonError.INTERNAL);
    }
    if (datatype !== undefined && !isDataType(datatype)) {
      throw new TritonError(`tensor '${name}': unknown datatype '${String(datatype)}'`, TritonError.INTERNAL);
    }
    this.name = name;
    const type = datatype ?? inferDatatype(data);
    this.datatype = type as D;
    let count: number;
    if (type === 'BYTES') {
      if (data instanceof Uint8Array) {
        this.#wire = data;
        count = countBytesElements(data, name);
      } else if (Array.isArray(data) && data.every((e) => typeof e === 'string' || e instanceof Uint8Array)) {
        this.#wire = encodeBytesElements(data as readonly (string | Uint8Array)[]);
        count = data.length;
      } else {
        throw new TritonError(
          `tensor '${name}': BYTES data must be strings or Uint8Arrays (or serialized BYTES in one Uint8Array)`,
          TritonError.INTERNAL,
        );
      }
    } else {
      let typed: TypedArray;
      if (ArrayBuffer.isView(data) && data.constructor === CTOR[type] && !(data instanceof Uint8ClampedArray)) {
        typed = data as TypedArray;
      } else if (ArrayBuffer.isView(data) && (type === 'FP16' || type === 'BF16' || type === 'BOOL') && data instanceof CTOR[type]) {
        typed = data as TypedArray;
      } else {
        typed = convert(name, data as ArrayLike<unknown>, type);
      }
      if (type === 'BOOL') typed = (typed as Uint8Array).map((v) => (v ? 1 : 0));
      this.#view = typed;
      this.#wire = bytesOfView(typed);
      count = typed.length;
    }
    const finalShape = shape ? [...shape] : [count];
    if (!finalShape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new TritonError(`tensor '${name}': invalid shape [${finalShape.join(',')}]`, TritonError.INTERNAL);
    }
    if (elementCount(finalShape) !== count) {
      throw new TritonError(
        `tensor '${name}': shape [${finalShape.join(',')}] holds ${elementCount(finalShape)} elements but ${count} were given`,
        TritonError.INTERNAL,
      );
    }
    this.shape = finalShape;
  }

  /** Wraps a wire tensor without copying its bytes. */
  static fromWire(wire: WireTensor): Tensor {
    adopting = wire;
    return new Tensor(wire.name, []);
  }

  /** Typed view of the elements (`BigInt64Array` for INT64, raw bits for FP16/BF16, wire bytes for BYTES). */
  get data(): DataTypeMap[D] {
    if (this.datatype === 'BYTES') return this.#wireBytes() as DataTypeMap[D];
    this.#view ??= typedView({ name: this.name, datatype: this.datatype, shape: this.shape, data: this.#wireBytes() });
    return this.#view as DataTypeMap[D];
  }

  /** `triton_dtype()` (a wire datatype string). */
  tritonDtype(): D {
    return this.datatype;
  }

  /** Elements as a flat plain array (BYTES elements as Uint8Arrays, BOOL as booleans). */
  asArray(): TensorElement[] {
    if (this.datatype === 'BYTES') return this.bytes();
    if (this.datatype === 'BOOL') return Array.from(this.data as Uint8Array, (v) => v !== 0);
    return Array.from(this.data as ArrayLike<number | bigint>);
  }

  /** Elements nested by shape (`as_numpy().tolist()`); BYTES as UTF-8 strings where valid. */
  toArray(): NestedArray | number | bigint | boolean | string | Uint8Array {
    const flat: Array<number | bigint | boolean | string | Uint8Array> =
      this.datatype === 'BYTES'
        ? this.bytes().map((b) => {
            try {
              return utf8Strict.decode(b);
            } catch {
              return b;
            }
          })
        : this.asArray();
    if (this.shape.length === 0) return flat[0]!;
    let offset = 0;
    const build = (dim: number): NestedArray => {
      const out: NestedArray = [];
      const n = this.shape[dim]!;
      for (let i = 0; i < n; i++) {
        if (dim === this.shape.length - 1) out.push(flat[offset++]!);
        else out.push(build(dim + 1));
      }
      return out;
    };
    return build(0);
  }

  /** BYTES elements decoded as UTF-8 (INVALID_ARG on invalid UTF-8). */
  strings(): string[] {
    this.#requireBytes('strings');
    return decodeBytesElements(this.#wireBytes(), this.name).map((e) => {
      try {
        return utf8Strict.decode(e);
      } catch {
        throw new TritonError(`invalid UTF-8 in BYTES element of '${this.name}'`, TritonError.INVALID_ARG);
      }
    });
  }

  /** BYTES elements as byte arrays (views, no copy). */
  bytes(): Uint8Array[] {
    this.#requireBytes('bytes');
    return decodeBytesElements(this.#wireBytes(), this.name);
  }

  /** The wire form (`{name, datatype, shape, data}`) the server carries; no copy. */
  toWire(name: string = this.name): WireTensor {
    return { name, datatype: this.datatype, shape: [...this.shape], data: this.#wireBytes() };
  }

  /** Byte size of one element (0 for BYTES). */
  get elementSize(): number {
    return DATA_TYPE_SIZE[this.datatype];
  }

  #wireBytes(): Uint8Array {
    return this.#wire;
  }

  #requireBytes(method: string): void {
    if (this.datatype !== 'BYTES') {
      throw new TritonError(
        `tensor '${this.name}' is ${this.datatype}; ${method}() is for BYTES tensors (use .data)`,
        TritonError.INTERNAL,
      );
    }
  }
}
