import { readFileSync } from 'node:fs';
import { TYPED_ARRAYS, type Datatype, type TypedArrayClass } from '@tritium/client';
import type { ModelConfigInit } from '@tritium/client/proto';
import type { ModelMetadata, RequestInput } from './perf-client.ts';
import type { PerfOptions } from './options.ts';
import { UsageError } from './args.ts';

/**
 * Request inputs as perf_analyzer builds them: from the model's metadata and config, with
 * `--shape` filling variable dims, and data from `--input-data zero|random|file.json` (its JSON
 * format: `{"data": [{"IN": [flattened values] | {"content": [...], "shape": [...]} | {"b64": "..."}}, ...]}`,
 * used round-robin) or `--string-data`. Returns the distinct requests to cycle through.
 */

/** A typed array of any numeric datatype: elements are numbers, or bigints for the 64-bit integers. */
type NumericArray = ArrayBufferView & { [i: number]: number | bigint; readonly BYTES_PER_ELEMENT: number };

/** The client's typed array class for a datatype name, if it is one. */
function typedArrayOf(datatype: string): TypedArrayClass<NumericArray> | undefined {
  return Object.hasOwn(TYPED_ARRAYS, datatype) ? TYPED_ARRAYS[datatype as Datatype] : undefined;
}

interface InputSpec {
  readonly name: string;
  readonly datatype: string;
  /** Dims of one batch element (no batch dimension). */
  readonly dims: readonly number[];
}

/** Input specs from metadata + config, applying `--shape`. */
export function inputSpecs(metadata: ModelMetadata, maxBatchSize: number, shapes: ReadonlyMap<string, readonly number[]>): InputSpec[] {
  return metadata.inputs.map((input) => {
    const full = input.shape.map(Number);
    const dims = maxBatchSize > 0 ? full.slice(1) : full;
    const override = shapes.get(input.name);
    if (override) {
      if (override.length !== dims.length || override.some((d, i) => dims[i] !== -1 && dims[i] !== d)) {
        throw new UsageError(`--shape ${input.name}:${override.join(',')} does not match the model's dims [${dims.join(',')}]`);
      }
      return { name: input.name, datatype: input.datatype, dims: [...override] };
    }
    return { name: input.name, datatype: input.datatype, dims };
  });
}

function count(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

function randomString(length: number, rng: () => number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ';
  let s = '';
  for (let i = 0; i < length; i++) s += alphabet[Math.floor(rng() * alphabet.length)];
  return s;
}

/** A small seeded generator (perf_analyzer generates random data once and reuses it). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function syntheticElement(spec: InputSpec, mode: 'zero' | 'random', options: PerfOptions, rng: () => number): ArrayBufferView | string[] {
  const dims = spec.dims;
  if (dims.some((d) => d < 0)) {
    throw new UsageError(
      `input ${spec.name} contains dynamic shape, provide shapes to send along with the request (--shape ${spec.name}:...)`,
    );
  }
  const n = count(dims);
  if (spec.datatype === 'BYTES') {
    return Array.from({ length: n }, () =>
      options.stringData ?? (mode === 'zero' ? '' : randomString(options.stringLength, rng)),
    );
  }
  const Ctor = typedArrayOf(spec.datatype);
  if (!Ctor) throw new UsageError(`input ${spec.name}: unsupported datatype ${spec.datatype}`);
  const out = new Ctor(n);
  if (mode === 'random') {
    const big = spec.datatype === 'INT64' || spec.datatype === 'UINT64';
    const float = spec.datatype === 'FP32' || spec.datatype === 'FP64';
    for (let i = 0; i < n; i++) {
      const r = rng();
      out[i] = big ? BigInt(Math.floor(r * 100)) : float ? r : spec.datatype === 'BOOL' ? (r < 0.5 ? 0 : 1) : Math.floor(r * 100);
    }
  }
  return out;
}

/** One element from a JSON data entry. */
function jsonElement(spec: InputSpec, value: unknown, file: string): { data: ArrayBufferView | string[]; dims: number[] } {
  let content = value;
  let dims = [...spec.dims];
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const v = value as { content?: unknown; shape?: number[]; b64?: string };
    if (v.shape) dims = [...v.shape];
    if (typeof v.b64 === 'string') {
      const bytes = Buffer.from(v.b64, 'base64');
      if (spec.datatype === 'BYTES') {
        const strings: string[] = [];
        for (let o = 0; o + 4 <= bytes.length; ) {
          const len = bytes.readUInt32LE(o);
          strings.push(bytes.subarray(o + 4, o + 4 + len).toString('utf8'));
          o += 4 + len;
        }
        return { data: strings, dims };
      }
      const Ctor = typedArrayOf(spec.datatype)!;
      const copy = new Uint8Array(bytes);
      return { data: new Ctor(copy.buffer, 0, copy.byteLength / new Ctor(0).BYTES_PER_ELEMENT), dims };
    }
    content = v.content;
  }
  if (!Array.isArray(content)) throw new UsageError(`${file}: input ${spec.name} must be an array, {content, shape} or {b64}`);
  const flat = (content as unknown[]).flat(Infinity as 1);
  if (dims.some((d) => d < 0)) {
    if (dims.filter((d) => d < 0).length === 1) {
      const known = count(dims.filter((d) => d >= 0));
      dims = dims.map((d) => (d < 0 ? flat.length / Math.max(known, 1) : d));
    } else {
      throw new UsageError(`${file}: input ${spec.name} has variable dims; give "shape" or --shape`);
    }
  }
  if (flat.length !== count(dims)) {
    throw new UsageError(`${file}: input ${spec.name} has ${flat.length} values, its shape [${dims.join(',')}] needs ${count(dims)}`);
  }
  if (spec.datatype === 'BYTES') return { data: flat.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))), dims };
  const Ctor = typedArrayOf(spec.datatype);
  if (!Ctor) throw new UsageError(`input ${spec.name}: unsupported datatype ${spec.datatype}`);
  const out = new Ctor(flat.length);
  const big = spec.datatype === 'INT64' || spec.datatype === 'UINT64';
  flat.forEach((x, i) => (out[i] = big ? BigInt(Number(x)) : Number(x)));
  return { data: out, dims };
}

/** Concatenates `batch` elements along a new leading dim (or none for non-batching models). */
function stack(spec: InputSpec, elements: Array<{ data: ArrayBufferView | string[]; dims: number[] }>, batching: boolean): RequestInput {
  const dims = elements[0]!.dims;
  for (const e of elements) {
    if (e.dims.join(',') !== dims.join(',')) throw new UsageError(`input ${spec.name}: batched elements differ in shape`);
  }
  const shape = batching ? [elements.length, ...dims] : dims;
  if (spec.datatype === 'BYTES') return { name: spec.name, datatype: spec.datatype, shape, data: elements.flatMap((e) => e.data as string[]) };
  const bytes = elements.map((e) => new Uint8Array((e.data as ArrayBufferView).buffer, (e.data as ArrayBufferView).byteOffset, (e.data as ArrayBufferView).byteLength));
  const total = new Uint8Array(bytes.reduce((n, b) => n + b.byteLength, 0));
  let o = 0;
  for (const b of bytes) {
    total.set(b, o);
    o += b.byteLength;
  }
  const Ctor = typedArrayOf(spec.datatype)!;
  return { name: spec.name, datatype: spec.datatype, shape, data: new Ctor(total.buffer, 0, total.byteLength / new Ctor(0).BYTES_PER_ELEMENT) };
}

/**
 * The distinct requests to send, in order (used round-robin). With `-b N` each request takes N
 * consecutive data entries (or N copies of the synthetic element).
 */
export function buildRequests(metadata: ModelMetadata, config: Pick<ModelConfigInit, 'max_batch_size'>, options: PerfOptions): RequestInput[][] {
  const maxBatch = Number(config.max_batch_size ?? 0);
  const batching = maxBatch > 0;
  if (!batching && options.batchSize > 1) throw new UsageError(`model ${options.model} does not support batching: -b must be 1`);
  if (batching && options.batchSize > maxBatch) {
    throw new UsageError(`-b ${options.batchSize} exceeds the model's max_batch_size ${maxBatch}`);
  }
  const specs = inputSpecs(metadata, maxBatch, options.shapes);
  const sources = options.inputData.length > 0 ? options.inputData : ['random'];
  const rng = seeded(0);
  const entries: Array<Record<string, { data: ArrayBufferView | string[]; dims: number[] }>> = [];
  for (const source of sources) {
    if (source === 'zero' || source === 'random') {
      entries.push(Object.fromEntries(specs.map((s) => [s.name, { data: syntheticElement(s, source, options, rng), dims: [...s.dims] }])));
      continue;
    }
    let parsed: { data?: unknown } | null;
    try {
      parsed = JSON.parse(readFileSync(source, 'utf8'));
    } catch (e) {
      throw new UsageError(`--input-data ${source}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!parsed || !Array.isArray(parsed.data)) throw new UsageError(`${source}: expected {"data": [...]}`);
    // Nested arrays are streams (sequences); flatten them into one round-robin list.
    for (const entry of (parsed.data as unknown[]).flat()) {
      const record: Record<string, { data: ArrayBufferView | string[]; dims: number[] }> = {};
      for (const spec of specs) {
        const value = (entry as Record<string, unknown>)[spec.name];
        if (value === undefined) throw new UsageError(`${source}: an entry has no data for input ${spec.name}`);
        record[spec.name] = jsonElement(spec, value, source);
      }
      entries.push(record);
    }
  }
  if (entries.length === 0) throw new UsageError('--input-data gave no data entries');
  const requests: RequestInput[][] = [];
  const b = batching ? options.batchSize : 1;
  // One request per entry start (bounded by the entry count), each taking b consecutive entries.
  for (let start = 0; start < entries.length; start++) {
    requests.push(specs.map((spec) => stack(spec, Array.from({ length: b }, (_, j) => entries[(start + j) % entries.length]![spec.name]!), batching)));
  }
  return requests;
}
