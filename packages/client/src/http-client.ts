/**
 * KServe v2 HTTP client (tritonclient.http.InferenceServerClient's shape): binary tensors by
 * default, optional request/response compression, Triton's error JSON as InferenceServerException.
 */
import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';
import { InferenceServerException } from './errors.ts';
import type {
  CudaSharedMemoryStatusResponseRegionStatus,
  ModelConfig,
  ModelMetadataResponse,
  ModelStatisticsResponse,
  RepositoryIndexResponseModelIndex,
  ServerMetadataResponse,
  SystemSharedMemoryStatusResponseRegionStatus,
} from './generated/grpc-types.ts';
import type { ErrorJson, InferInputJson, InferRequestJson, InferResponseJson, JsonParameterValue } from './http-json.ts';
import type { InferInput, InferRequestedOutput } from './infer-input.ts';
import { InferResult, type OutputTensor } from './infer-result.ts';
import { sequenceParameters, type SequenceOptions } from './sequence-options.ts';
import type { Datatype } from './tensor-data.ts';
import { pemBytes, type ClientTlsOptions } from './tls-options.ts';

/** As tritonclient.http.InferenceServerClient's `concurrency`, `ssl`, `ssl_options`, `insecure`. */
export interface HttpClientOptions extends ClientTlsOptions {
  /** Connections kept open at most (default 16). */
  readonly concurrency?: number;
  /** HTTPS (also implied by an `https://` URL). */
  readonly ssl?: boolean;
  /** Skip verifying the server's certificate (tritonclient's `insecure`); for tests only. */
  readonly insecure?: boolean;
  /**
   * Headers sent with every request, e.g. `{ admin: 'secret' }` for a server started with
   * `--http-restricted-api=model-repository:admin=secret`.
   */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface HttpInferOptions extends SequenceOptions {
  outputs?: readonly InferRequestedOutput[];
  modelVersion?: string;
  requestId?: string;
  parameters?: Record<string, JsonParameterValue>;
  priority?: number;
  /** Queue timeout in microseconds. */
  timeout?: number;
  headers?: Record<string, string>;
  requestCompressionAlgorithm?: 'gzip' | 'deflate';
  responseCompressionAlgorithm?: 'gzip' | 'deflate';
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

const enc = (s: string) => encodeURIComponent(s);

export class HttpInferenceServerClient {
  private readonly agent: http.Agent;
  private readonly host: string;
  private readonly port: number;
  private readonly transport: typeof http | typeof https;
  private readonly headers: Readonly<Record<string, string>>;

  /** `url` is `host:port` (as tritonclient), e.g. `127.0.0.1:8000`, or `https://host:port`. */
  constructor(url: string, options: HttpClientOptions = {}) {
    const u = new URL(url.includes('://') ? url : `http://${url}`);
    const ssl = options.ssl === true || u.protocol === 'https:';
    this.host = u.hostname;
    this.port = Number(u.port || (ssl ? 443 : 80));
    const agentOptions = { keepAlive: true, maxSockets: options.concurrency ?? 16 };
    this.transport = ssl ? https : http;
    this.agent = ssl
      ? new https.Agent({
          ...agentOptions,
          ca: pemBytes(options.rootCertificates),
          key: pemBytes(options.privateKey),
          cert: pemBytes(options.certificateChain),
          rejectUnauthorized: options.insecure !== true,
        })
      : new http.Agent(agentOptions);
    this.headers = options.headers ?? {};
  }

  close(): void {
    this.agent.destroy();
  }

  /** A raw request (exposed for tests and tools); never throws on HTTP status. */
  request(method: string, path: string, body?: Uint8Array | string, headers: Record<string, string | number> = {}): Promise<HttpResponse> {
    return new Promise((resolve, reject) => {
      const req = this.transport.request(
        {
          host: this.host,
          port: this.port,
          method,
          path,
          agent: this.agent,
          headers: { ...this.headers, ...headers, ...(body !== undefined ? { 'content-length': Buffer.byteLength(body) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            let out = Buffer.concat(chunks);
            try {
              const ce = res.headers['content-encoding'];
              if (ce === 'gzip') out = zlib.gunzipSync(out);
              else if (ce === 'deflate') out = zlib.inflateSync(out);
            } catch (e) {
              reject(new InferenceServerException(`failed to decompress the response: ${(e as Error).message}`));
              return;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: out });
          });
          res.on('error', reject);
        },
      );
      req.on('error', (e) => reject(new InferenceServerException(e.message)));
      req.end(body);
    });
  }

  private async call(method: string, path: string, json?: unknown): Promise<HttpResponse> {
    const body = json === undefined ? undefined : JSON.stringify(json);
    const res = await this.request(method, path, body, body ? { 'content-type': 'application/json' } : {});
    if (res.status !== 200) throw errorOf(res);
    return res;
  }

  private async getJson<T>(path: string): Promise<T> {
    const res = await this.call('GET', path);
    return JSON.parse(res.body.toString('utf8')) as T;
  }

  private async postJson<T>(path: string, json?: unknown): Promise<T> {
    const res = await this.call('POST', path, json);
    return (res.body.length ? JSON.parse(res.body.toString('utf8')) : undefined) as T;
  }

  private modelPath(model: string, version?: string): string {
    return `/v2/models/${enc(model)}${version ? `/versions/${enc(version)}` : ''}`;
  }

  async isServerLive(): Promise<boolean> {
    return (await this.request('GET', '/v2/health/live')).status === 200;
  }
  async isServerReady(): Promise<boolean> {
    return (await this.request('GET', '/v2/health/ready')).status === 200;
  }
  async isModelReady(model: string, version?: string): Promise<boolean> {
    return (await this.request('GET', `${this.modelPath(model, version)}/ready`)).status === 200;
  }
  getServerMetadata(): Promise<ServerMetadataResponse> {
    return this.getJson('/v2');
  }
  getModelMetadata(model: string, version?: string): Promise<ModelMetadataResponse> {
    return this.getJson(this.modelPath(model, version));
  }
  /** Triton's JSON of the config: the ModelConfig message, 64-bit integers as JSON numbers. */
  getModelConfig(model: string, version?: string): Promise<ModelConfig> {
    return this.getJson(`${this.modelPath(model, version)}/config`);
  }
  getInferenceStatistics(model?: string, version?: string): Promise<ModelStatisticsResponse> {
    return this.getJson(model ? `${this.modelPath(model, version)}/stats` : '/v2/models/stats');
  }
  getModelRepositoryIndex(options: { ready?: boolean; repository?: string } = {}): Promise<RepositoryIndexResponseModelIndex[]> {
    const repo = options.repository ? `/${enc(options.repository)}` : '';
    return this.postJson(`/v2/repository${repo}/index`, options.ready === undefined ? {} : { ready: options.ready });
  }
  /** Loads a model; `config` (JSON string) overrides config.pbtxt, `files` are `file:<v>/<name>` → bytes. */
  async loadModel(model: string, options: { config?: string; files?: Record<string, Uint8Array>; repository?: string } = {}): Promise<void> {
    const parameters: Record<string, string> = {};
    if (options.config !== undefined) parameters['config'] = options.config;
    for (const [k, v] of Object.entries(options.files ?? {})) parameters[k] = Buffer.from(v).toString('base64');
    const repo = options.repository ? `/${enc(options.repository)}` : '';
    await this.postJson(`/v2/repository${repo}/models/${enc(model)}/load`, Object.keys(parameters).length ? { parameters } : undefined);
  }
  async unloadModel(model: string, options: { unloadDependents?: boolean; repository?: string } = {}): Promise<void> {
    const repo = options.repository ? `/${enc(options.repository)}` : '';
    await this.postJson(
      `/v2/repository${repo}/models/${enc(model)}/unload`,
      options.unloadDependents ? { parameters: { unload_dependents: true } } : undefined,
    );
  }
  getSystemSharedMemoryStatus(region?: string): Promise<SystemSharedMemoryStatusResponseRegionStatus[]> {
    return this.getJson(`/v2/systemsharedmemory${region ? `/region/${enc(region)}` : ''}/status`);
  }
  async registerSystemSharedMemory(name: string, key: string, byteSize: number, offset = 0): Promise<void> {
    await this.postJson(`/v2/systemsharedmemory/region/${enc(name)}/register`, { key, offset, byte_size: byteSize });
  }
  async unregisterSystemSharedMemory(name?: string): Promise<void> {
    await this.postJson(`/v2/systemsharedmemory${name ? `/region/${enc(name)}` : ''}/unregister`);
  }
  getCudaSharedMemoryStatus(region?: string): Promise<CudaSharedMemoryStatusResponseRegionStatus[]> {
    return this.getJson(`/v2/cudasharedmemory${region ? `/region/${enc(region)}` : ''}/status`);
  }
  /** Triton's HTTP shape: `trace_level` a list, the other settings strings. */
  getTraceSettings(model?: string): Promise<Record<string, string | string[]>> {
    return this.getJson(model ? `/v2/models/${enc(model)}/trace/setting` : '/v2/trace/setting');
  }
  updateTraceSettings(settings: Record<string, string[] | string | null>, model?: string): Promise<Record<string, string | string[]>> {
    return this.postJson(model ? `/v2/models/${enc(model)}/trace/setting` : '/v2/trace/setting', settings);
  }
  getLogSettings(): Promise<Record<string, unknown>> {
    return this.getJson('/v2/logging');
  }
  updateLogSettings(settings: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.postJson('/v2/logging', settings);
  }

  /** Runs inference; inputs with raw data travel in the binary extension. */
  async infer(model: string, inputs: readonly InferInput[], options: HttpInferOptions = {}): Promise<InferResult> {
    const { body, headerLength } = buildInferBody(inputs, options);
    const headers: Record<string, string | number> = { 'content-type': 'application/octet-stream', ...options.headers };
    if (headerLength !== undefined) headers['inference-header-content-length'] = headerLength;
    let payload: Uint8Array = body;
    if (options.requestCompressionAlgorithm) {
      payload = options.requestCompressionAlgorithm === 'gzip' ? zlib.gzipSync(body) : zlib.deflateSync(body);
      headers['content-encoding'] = options.requestCompressionAlgorithm;
    }
    if (options.responseCompressionAlgorithm) headers['accept-encoding'] = options.responseCompressionAlgorithm;
    const res = await this.request('POST', `${this.modelPath(model, options.modelVersion)}/infer`, payload, headers);
    if (res.status !== 200) throw errorOf(res);
    return parseInferResponse(res);
  }
}

/** JSON.stringify, with bigints (a uint64 `sequence_id` past 2^53) written as exact JSON numbers. */
function jsonWithBigInts(value: unknown): string {
  let found = false;
  // A per-call nonce: no string of the caller's can look like the stand-in.
  const nonce = Math.random().toString(36).slice(2);
  const text = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? ((found = true), `bigint:${nonce}:${v}`) : v));
  return found ? text.replace(new RegExp(`"bigint:${nonce}:(-?\\d+)"`, 'g'), '$1') : text;
}

export function buildInferBody(inputs: readonly InferInput[], options: HttpInferOptions): { body: Buffer; headerLength?: number } {
  const binaries: Uint8Array[] = [];
  const params: Record<string, JsonParameterValue> = { ...options.parameters };
  if (options.priority !== undefined) params['priority'] = options.priority;
  if (options.timeout !== undefined) params['timeout'] = options.timeout;
  Object.assign(params, sequenceParameters(options));
  if (!options.outputs?.length) params['binary_data_output'] = true;
  const header: InferRequestJson = { inputs: [] };
  if (options.requestId) header.id = options.requestId;
  if (Object.keys(params).length) header.parameters = params;
  header.inputs = inputs.map((i) => {
    const t: InferInputJson = { name: i.name, shape: i.shape, datatype: i.datatype };
    const p: Record<string, JsonParameterValue> = { ...i.parameters };
    if (i.rawData) {
      p['binary_data_size'] = i.rawData.byteLength;
      binaries.push(i.rawData);
    } else if (i.jsonData) t.data = i.jsonData;
    if (Object.keys(p).length) t.parameters = p;
    return t;
  });
  if (options.outputs?.length) header.outputs = options.outputs.map((o) => ({ name: o.name, parameters: o.parameters }));
  const json = Buffer.from(jsonWithBigInts(header));
  if (binaries.length === 0) return { body: json };
  return { body: Buffer.concat([json, ...binaries]), headerLength: json.length };
}

export function parseInferResponse(res: HttpResponse): InferResult {
  const hl = res.headers['inference-header-content-length'];
  const jsonLength = hl === undefined ? res.body.length : Number(hl);
  const head: InferResponseJson = JSON.parse(res.body.subarray(0, jsonLength).toString('utf8'));
  let offset = jsonLength;
  const outputs: OutputTensor[] = (head.outputs ?? []).map((o) => {
    const size = o.parameters?.['binary_data_size'];
    let data: Uint8Array | undefined;
    if (typeof size === 'number') {
      data = res.body.subarray(offset, offset + size);
      offset += size;
    }
    return { name: o.name, datatype: o.datatype as Datatype, shape: o.shape, parameters: o.parameters ?? {}, data, jsonData: o.data };
  });
  return new InferResult({ model_name: head.model_name, model_version: head.model_version, id: head.id ?? '', parameters: head.parameters ?? {}, outputs });
}

function errorOf(res: HttpResponse): InferenceServerException {
  let message = `HTTP ${res.status}`;
  try {
    const j: ErrorJson | null = JSON.parse(res.body.toString('utf8'));
    if (typeof j?.error === 'string') message = j.error;
  } catch {
    // Not JSON: keep the status line.
  }
  return new InferenceServerException(message, String(res.status));
}
