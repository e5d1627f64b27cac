/** A decoded inference response, as tritonclient's InferResult. */
import { decodeUtf8, deserializeBytes, viewAs, type Datatype, type TypedArrayFor } from './tensor-data.ts';

export interface OutputTensor {
  readonly name: string;
  readonly datatype: Datatype;
  readonly shape: number[];
  readonly parameters: Record<string, unknown>;
  /** Raw bytes (binary/raw outputs). */
  readonly data?: Uint8Array;
  /** JSON values (HTTP outputs sent as JSON). */
  readonly jsonData?: unknown[];
}

export interface InferResponseInfo {
  readonly model_name: string;
  readonly model_version: string;
  readonly id: string;
  readonly parameters: Record<string, unknown>;
  readonly outputs: readonly OutputTensor[];
}

export class InferResult {
  constructor(readonly response: InferResponseInfo) {}

  get modelName(): string {
    return this.response.model_name;
  }
  get modelVersion(): string {
    return this.response.model_version;
  }
  get id(): string {
    return this.response.id;
  }
  get parameters(): Record<string, unknown> {
    return this.response.parameters;
  }

  output(name: string): OutputTensor | undefined {
    return this.response.outputs.find((o) => o.name === name);
  }

  private require(name: string): OutputTensor {
    const o = this.output(name);
    if (!o) throw new Error(`output '${name}' is not in the response`);
    return o;
  }

  /** The output's raw bytes (BYTES: the serialized form). */
  asBytes(name: string): Uint8Array {
    const o = this.require(name);
    if (o.data) return o.data;
    throw new Error(`output '${name}' has no binary data (sent as JSON or into shared memory)`);
  }

  /** The output as its datatype's typed array (from binary data or JSON values). */
  asTypedArray<T extends Datatype>(name: string, datatype?: T): TypedArrayFor[T] {
    const o = this.require(name);
    const dt = (datatype ?? o.datatype) as T;
    if (o.data) return viewAs(dt, o.data);
    if (o.jsonData) return fromJson(dt, o.jsonData) as TypedArrayFor[T];
    throw new Error(`output '${name}' has no data`);
  }

  /** A BYTES output as UTF-8 strings. */
  asStrings(name: string): string[] {
    const o = this.require(name);
    if (o.jsonData) return o.jsonData.map(String);
    return deserializeBytes(this.asBytes(name)).map(decodeUtf8);
  }
}

function fromJson(datatype: Datatype, values: unknown[]): ArrayLike<unknown> {
  switch (datatype) {
    case 'BOOL':
      return Uint8Array.from(values, (v) => (v ? 1 : 0));
    case 'INT64':
      return BigInt64Array.from(values, (v) => BigInt(v as number));
    case 'UINT64':
      return BigUint64Array.from(values, (v) => BigInt(v as number));
    case 'INT8':
      return Int8Array.from(values as number[]);
    case 'INT16':
      return Int16Array.from(values as number[]);
    case 'INT32':
      return Int32Array.from(values as number[]);
    case 'UINT8':
      return Uint8Array.from(values as number[]);
    case 'UINT16':
      return Uint16Array.from(values as number[]);
    case 'UINT32':
      return Uint32Array.from(values as number[]);
    case 'FP64':
      return Float64Array.from(values as number[]);
    default:
      return Float32Array.from(values as number[]);
  }
}
