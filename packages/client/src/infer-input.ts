/** Request-side tensors, as tritonclient's InferInput / InferRequestedOutput. */
import { bytesOf, ELEMENT_SIZE, serializeBytes, type AnyTypedArray, type Datatype } from './tensor-data.ts';

export type InputData = AnyTypedArray | readonly (string | Uint8Array)[] | readonly boolean[] | readonly number[];

export class InferInput {
  /** Raw bytes (binary/raw form), when set. */
  rawData: Uint8Array | undefined;
  /** JSON values (HTTP only), when set with `binary: false`. */
  jsonData: unknown[] | undefined;
  parameters: Record<string, string | number | boolean> = {};

  constructor(
    readonly name: string,
    public shape: number[],
    readonly datatype: Datatype,
  ) {}

  /**
   * Sets the data: a typed array for numeric types, strings/Uint8Arrays for BYTES, booleans for
   * BOOL. Binary by default (raw bytes on both protocols); `binary: false` sends JSON over HTTP.
   */
  setData(data: InputData, options: { binary?: boolean } = {}): this {
    const binary = options.binary ?? true;
    delete this.parameters['shared_memory_region'];
    delete this.parameters['shared_memory_byte_size'];
    delete this.parameters['shared_memory_offset'];
    let raw: Uint8Array;
    if (this.datatype === 'BYTES') {
      if (ArrayBuffer.isView(data) && !(data instanceof Uint8Array)) throw new Error('BYTES data must be strings or Uint8Arrays');
      const elements = data instanceof Uint8Array ? [data] : (data as (string | Uint8Array)[]);
      raw = serializeBytes(elements);
      this.jsonData = binary ? undefined : elements.map((e) => (typeof e === 'string' ? e : new TextDecoder().decode(e)));
    } else if (this.datatype === 'BOOL' && Array.isArray(data)) {
      raw = Uint8Array.from(data as boolean[], (b) => (b ? 1 : 0));
      this.jsonData = binary ? undefined : (data as boolean[]).slice();
    } else if (ArrayBuffer.isView(data)) {
      raw = bytesOf(data);
      this.jsonData = binary ? undefined : Array.from(data as ArrayLike<number | bigint>, (v) => (typeof v === 'bigint' ? Number(v) : v));
    } else {
      if (binary) throw new Error(`binary data for ${this.datatype} must be a typed array`);
      raw = new Uint8Array(0);
      this.jsonData = (data as unknown[]).slice();
    }
    const size = ELEMENT_SIZE[this.datatype];
    const count = this.shape.reduce((a, b) => a * b, 1);
    if (size && binary && raw.byteLength !== size * count) {
      throw new Error(`got unexpected number of bytes for '${this.name}': ${raw.byteLength}, expected ${size * count} for shape [${this.shape}]`);
    }
    this.rawData = binary ? raw : undefined;
    return this;
  }

  /** Reads this input from a registered shared-memory region instead of the request. */
  setSharedMemory(region: string, byteSize: number, offset = 0): this {
    this.rawData = undefined;
    this.jsonData = undefined;
    this.parameters['shared_memory_region'] = region;
    this.parameters['shared_memory_byte_size'] = byteSize;
    if (offset) this.parameters['shared_memory_offset'] = offset;
    return this;
  }
}

export class InferRequestedOutput {
  parameters: Record<string, string | number | boolean> = {};

  /** `binary` (HTTP): ask for binary data (default true). `classCount` > 0: top-k classification. */
  constructor(
    readonly name: string,
    options: { binary?: boolean; classCount?: number } = {},
  ) {
    this.parameters['binary_data'] = options.binary ?? true;
    if (options.classCount) this.parameters['classification'] = options.classCount;
  }

  setSharedMemory(region: string, byteSize: number, offset = 0): this {
    this.parameters['shared_memory_region'] = region;
    this.parameters['shared_memory_byte_size'] = byteSize;
    if (offset) this.parameters['shared_memory_offset'] = offset;
    return this;
  }
}
