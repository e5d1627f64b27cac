/**
 * A small, real in-test InferenceServerApi (until tests switch to core's InferenceServer): three
 * models computed in-process with Triton's routing and request-check messages.
 *  - `simple`  FP32 INPUT0 [-1] → OUTPUT0 = INPUT0, OUTPUT1 = 2×INPUT0; max_batch_size 8.
 *  - `strings` BYTES INPUT0 [-1] → OUTPUT0 upper-cased (invalid UTF-8 → INVALID_ARG); no batching.
 *  - `repeat`  decoupled; INT32 IN [1] = n → n responses OUT [1] = 0..n-1.
 */
import {
  InferError,
  decodeStrings,

  encodeBytesElements,
  expectedByteSize,
  typedView,
  type InferRequest,
  type InferResponse,
  type InferenceServerApi,
  type ModelConfig,
  type ModelMetadata,
  type ModelMetricsSnapshot,
  type ModelStatistics,
  type ResponseSink,
  type Tensor,
} from '@tritium/core';

function tensorConfig(name: string, data_type: string, dims: number[]) {
  return {
    name,
    data_type,
    format: 'FORMAT_NONE',
    dims,
    is_shape_tensor: false,
    allow_ragged_batch: false,
    optional: false,
    is_non_linear_format_io: false,
    label_filename: '',
  };
}

function config(name: string, maxBatch: number, inputs: object[], outputs: object[], decoupled = false): ModelConfig {
  return {
    name,
    platform: '',
    backend: 'fake',
    runtime: '',
    version_policy: { latest: { num_versions: 1 } },
    max_batch_size: maxBatch,
    input: inputs,
    output: outputs,
    batch_input: [],
    batch_output: [],
    instance_group: [],
    default_model_filename: '',
    cc_model_filenames: {},
    metric_tags: {},
    parameters: {},
    model_warmup: [],
    model_transaction_policy: { decoupled },
  } as unknown as ModelConfig;
}

const MODELS: Record<string, ModelConfig> = {
  simple: config('simple', 8, [tensorConfig('INPUT0', 'TYPE_FP32', [-1])], [
    tensorConfig('OUTPUT0', 'TYPE_FP32', [-1]),
    tensorConfig('OUTPUT1', 'TYPE_FP32', [-1]),
  ]),
  strings: config('strings', 0, [tensorConfig('INPUT0', 'TYPE_STRING', [-1])], [tensorConfig('OUTPUT0', 'TYPE_STRING', [-1])]),
  repeat: config('repeat', 0, [tensorConfig('IN', 'TYPE_INT32', [1])], [tensorConfig('OUT', 'TYPE_INT32', [1])], true),
};

const wire = (t: string) => (t === 'TYPE_STRING' ? 'BYTES' : t.slice(5));

export class FakeInferenceServer implements InferenceServerApi {
  ready = true;
  loaded = new Set(Object.keys(MODELS));
  success = 0;
  failure = 0;
  inflight = 0;
  /** Milliseconds `simple` waits before answering (graceful-shutdown tests). */
  delayMs = 0;

  isLive(): boolean {
    return true;
  }
  isReady(): boolean {
    return this.ready;
  }
  serverMetadata() {
    return { name: 'triton', version: '2.52.0', extensions: ['classification', 'binary_tensor_data'] };
  }
  private find(name: string, version?: string): ModelConfig {
    const c = MODELS[name];
    if (!c || !this.loaded.has(name)) throw new InferError('NOT_FOUND', `Request for unknown model: '${name}' is not found`);
    if (version !== undefined && version !== '1') {
      throw new InferError('NOT_FOUND', `Request for unknown model: '${name}' version ${version} is not found`);
    }
    return c;
  }
  modelReady(name: string, version?: string): boolean {
    try {
      this.find(name, version);
      return true;
    } catch {
      return false;
    }
  }
  modelMetadata(name: string, version?: string): ModelMetadata {
    const c = this.find(name, version);
    const shape = (dims: number[]) => (c.max_batch_size > 0 ? [-1, ...dims] : dims);
    return {
      name,
      versions: ['1'],
      platform: c.backend,
      inputs: c.input.map((i) => ({ name: i.name, datatype: wire(i.data_type) as never, shape: shape(i.dims) })),
      outputs: c.output.map((o) => ({ name: o.name, datatype: wire(o.data_type) as never, shape: shape(o.dims) })),
    };
  }
  modelConfig(name: string, version?: string): ModelConfig {
    return this.find(name, version);
  }
  isDecoupled(name: string, version?: string): boolean {
    return this.find(name, version).model_transaction_policy?.decoupled === true;
  }

  private check(r: InferRequest): ModelConfig {
    if (!this.ready) throw new InferError('UNAVAILABLE', 'Server is not ready');
    const c = this.find(r.model, r.version === undefined ? undefined : String(r.version));
    if (r.inputs.length !== c.input.length) {
      throw new InferError(
        'INVALID_ARG',
        `expected ${c.input.length} inputs but got ${r.inputs.length} inputs for model '${r.model}'. Got input(s) [${r.inputs.map((i) => `'${i.name}'`).join(', ')}]`,
      );
    }
    for (const t of r.inputs) {
      const ic = c.input.find((i) => i.name === t.name);
      if (!ic) throw new InferError('INVALID_ARG', `unexpected inference input '${t.name}' for model '${r.model}'`);
      if (t.datatype !== wire(ic.data_type)) {
        throw new InferError('INVALID_ARG', `inference input '${t.name}' data-type is '${t.datatype}', but model '${r.model}' expects '${wire(ic.data_type)}'`);
      }
      let dims = t.shape;
      if (c.max_batch_size > 0) {
        if ((t.shape[0] ?? 0) > c.max_batch_size) {
          throw new InferError('INVALID_ARG', `inference request batch-size must be <= ${c.max_batch_size} for '${r.model}'`);
        }
        dims = t.shape.slice(1);
      }
      if (dims.length !== ic.dims.length || dims.some((d, k) => ic.dims[k] !== -1 && ic.dims[k] !== d)) {
        const full = c.max_batch_size > 0 ? [-1, ...ic.dims] : ic.dims;
        throw new InferError(
          'INVALID_ARG',
          `unexpected shape for input '${t.name}' for model '${r.model}'. Expected [${full.join(',')}], got [${t.shape.join(',')}]`,
        );
      }
      const expected = expectedByteSize(t.datatype, t.shape);
      if (expected !== undefined && expected !== t.data.byteLength) {
        throw new InferError(
          'INVALID_ARG',
          `input byte size mismatch for input '${t.name}' for model '${r.model}'. Expected ${expected}, got ${t.data.byteLength}`,
        );
      }
    }
    return c;
  }

  private compute(r: InferRequest): InferResponse {
    const input = r.inputs[0]!;
    let outputs: Tensor[];
    if (r.model === 'simple') {
      const v = typedView(input) as Float32Array;
      const doubled = Float32Array.from(v, (x) => x * 2);
      outputs = [
        { name: 'OUTPUT0', datatype: 'FP32', shape: input.shape, data: input.data },
        { name: 'OUTPUT1', datatype: 'FP32', shape: input.shape, data: new Uint8Array(doubled.buffer) },
      ];
    } else {
      const strings = decodeStrings(input.data, input.name);
      outputs = [{ name: 'OUTPUT0', datatype: 'BYTES', shape: input.shape, data: encodeBytesElements(strings.map((s) => s.toUpperCase())) }];
    }
    if (r.outputs?.length) {
      for (const o of r.outputs) {
        if (!outputs.some((t) => t.name === o.name)) {
          throw new InferError('INVALID_ARG', `unexpected inference output '${o.name}' for model '${r.model}'`);
        }
      }
      outputs = outputs.filter((t) => r.outputs!.some((o) => o.name === t.name));
    }
    return { id: r.id, model: r.model, version: 1, outputs };
  }

  async infer(r: InferRequest): Promise<InferResponse> {
    this.inflight++;
    try {
      this.check(r);
      if (this.delayMs && r.model === 'simple') await new Promise((res) => setTimeout(res, this.delayMs));
      if (r.signal?.aborted) throw new InferError('CANCELLED', 'request cancelled');
      const out = this.compute(r);
      this.success++;
      return out;
    } catch (e) {
      this.failure++;
      throw e;
    } finally {
      this.inflight--;
    }
  }

  inferStream(r: InferRequest, sink: ResponseSink): void {
    try {
      const c = this.check(r);
      if (c.model_transaction_policy?.decoupled) {
        const n = (typedView(r.inputs[0]!) as Int32Array)[0]!;
        let i = 0;
        const next = () => {
          if (i >= n) return sink.complete();
          sink.response({ id: r.id, model: r.model, version: 1, outputs: [{ name: 'OUT', datatype: 'INT32', shape: [1], data: new Uint8Array(Int32Array.of(i).buffer) }] });
          i++;
          setImmediate(next);
        };
        setImmediate(next);
        return;
      }
      this.infer(r).then(
        (resp) => {
          sink.response(resp);
          sink.complete();
        },
        (e) => sink.complete(InferError.from(e)),
      );
    } catch (e) {
      queueMicrotask(() => sink.complete(InferError.from(e)));
    }
  }

  statistics(name?: string, version?: string): ModelStatistics[] {
    const names = name ? [this.find(name, version).name] : [...this.loaded];
    const d = () => ({ count: 0, ns: 0 });
    return names.map((n) => ({
      name: n,
      version: '1',
      last_inference: 0,
      inference_count: this.success,
      execution_count: this.success,
      inference_stats: { success: { count: this.success, ns: 10 }, fail: d(), queue: d(), compute_input: d(), compute_infer: d(), compute_output: d(), cache_hit: d(), cache_miss: d() },
      batch_stats: [],
      memory_usage: [],
      response_stats: {},
    }));
  }

  metrics(): ModelMetricsSnapshot[] {
    return [...this.loaded].map((n) => ({
      model: n,
      version: '1',
      metricTags: (n === 'simple' ? { team: 'a"b' } : {}) as Record<string, string>,
      requestSuccess: this.success,
      requestFailure: { REJECTED: 0, CANCELED: 0, BACKEND: this.failure, OTHER: 0 },
      inferenceCount: this.success,
      executionCount: this.success,
      pendingRequests: 0,
      requestDurationUs: 5,
      queueDurationUs: 1,
      computeInputDurationUs: 1,
      computeInferDurationUs: 2,
      computeOutputDurationUs: 1,
      loadDurationSecs: 0.5,
      instances: [{ name: `${n}_0`, healthy: true, restarts: 0 }],
    }));
  }

  async repositoryIndex(options?: { readyOnly?: boolean }) {
    return Object.keys(MODELS)
      .filter((n) => !options?.readyOnly || this.loaded.has(n))
      .map((n) => ({ name: n, version: this.loaded.has(n) ? '1' : '', state: this.loaded.has(n) ? ('READY' as const) : ('UNAVAILABLE' as const), reason: this.loaded.has(n) ? '' : 'unloaded' }));
  }
  lastLoadConfig: string | undefined;
  async loadModel(name: string, options?: { configJson?: string }): Promise<void> {
    if (!MODELS[name]) throw new InferError('INVALID_ARG', `failed to load '${name}', failed to poll from model repository`);
    if (options?.configJson !== undefined) {
      try {
        JSON.parse(options.configJson);
      } catch {
        throw new InferError('INVALID_ARG', `failed to load '${name}', failed to parse the config JSON`);
      }
    }
    this.lastLoadConfig = options?.configJson;
    this.loaded.add(name);
  }
  async unloadModel(name: string): Promise<void> {
    if (!MODELS[name]) throw new InferError('INVALID_ARG', `failed to unload '${name}', no version is available`);
    this.loaded.delete(name);
  }
  async stop(options?: { timeoutMs?: number }): Promise<void> {
    this.ready = false;
    const deadline = Date.now() + (options?.timeoutMs ?? 5000);
    while (this.inflight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  }
}

