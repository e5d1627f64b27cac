/**
 * KServe v2 gRPC client (tritonclient.grpc.InferenceServerClient's shape). ModelInfer and
 * ModelStreamInfer use the hand-written codec (raw contents as buffers); the rest protobufjs.
 */
import { Client, credentials, Metadata, status as GrpcStatus, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import {
  decodeInferResponse,
  decodeStreamResponse,
  encodeInferRequest,
  unaryCodecs,
  type GRPCInferenceServiceMethods,
  type CudaSharedMemoryStatusResponseRegionStatus,
  type LogSettingsRequestSettingValueInit,
  type ModelConfigResponse,
  type ModelMetadataResponse,
  type ModelRepositoryParameterInit,
  type ModelStatisticsResponse,
  type RepositoryIndexResponseModelIndex,
  type ServerMetadataResponse,
  type SystemSharedMemoryStatusResponseRegionStatus,
  type UnaryMethod,
  type WireInferRequest,
  type WireInferResponse,
  type WireParams,
  type WireStreamResponse,
} from './proto/index.ts';
import { InferenceServerException } from './errors.ts';
import type { InferInput, InferRequestedOutput } from './infer-input.ts';
import { InferResult } from './infer-result.ts';
import { sequenceParameters, type SequenceOptions } from './sequence-options.ts';
import type { Datatype } from './tensor-data.ts';
import { pemBytes, type ClientTlsOptions } from './tls-options.ts';

/** As tritonclient.grpc.InferenceServerClient's `ssl`, `root_certificates`, `private_key`, `certificate_chain`. */
export interface GrpcClientOptions extends ClientTlsOptions {
  /** Connect over TLS (also implied by any certificate option). */
  readonly ssl?: boolean;
  /**
   * Metadata sent with every call, e.g. `{ 'triton-grpc-protocol-admin': 'secret' }` for a server started
   * with `--grpc-restricted-protocol=model-repository:admin=secret`.
   */
  readonly headers?: Readonly<Record<string, string>>;
}

const SERVICE = '/inference.GRPCInferenceService/';
const MAX = 2147483647;

export interface GrpcInferOptions extends SequenceOptions {
  outputs?: readonly InferRequestedOutput[];
  modelVersion?: string;
  requestId?: string;
  parameters?: WireParams;
  priority?: number;
  timeout?: number;
  /** Deadline for the call in milliseconds. */
  clientTimeoutMs?: number;
}

export type StreamCallback = (result: InferResult | undefined, error: InferenceServerException | undefined) => void;

function toException(e: ServiceError): InferenceServerException {
  return new InferenceServerException(e.details || e.message, `StatusCode.${GrpcStatus[e.code] ?? e.code}`);
}

export function buildWireRequest(model: string, inputs: readonly InferInput[], options: GrpcInferOptions = {}): WireInferRequest {
  const parameters: WireParams = { ...options.parameters };
  if (options.priority !== undefined) parameters['priority'] = options.priority;
  if (options.timeout !== undefined) parameters['timeout'] = options.timeout;
  Object.assign(parameters, sequenceParameters(options));
  const raw: Uint8Array[] = [];
  const wireInputs = inputs.map((i) => {
    const params: WireParams = {};
    for (const [k, v] of Object.entries(i.parameters)) params[k] = v;
    if (i.rawData) raw.push(i.rawData);
    else if (i.jsonData && !('shared_memory_region' in params)) throw new InferenceServerException(`input '${i.name}' must be set with binary data for gRPC`);
    return { name: i.name, datatype: i.datatype, shape: i.shape, parameters: params };
  });
  return {
    model_name: model,
    model_version: options.modelVersion ?? '',
    id: options.requestId ?? '',
    parameters,
    inputs: wireInputs,
    outputs: (options.outputs ?? []).map((o) => {
      const params: WireParams = {};
      for (const [k, v] of Object.entries(o.parameters)) if (k !== 'binary_data') params[k] = v;
      return { name: o.name, parameters: params };
    }),
    raw_input_contents: raw,
  };
}

export function resultOf(m: WireInferResponse): InferResult {
  return new InferResult({
    model_name: m.model_name,
    model_version: m.model_version,
    id: m.id,
    parameters: m.parameters,
    outputs: m.outputs.map((o, i) => ({
      name: o.name,
      datatype: o.datatype as Datatype,
      shape: o.shape,
      parameters: o.parameters,
      data: m.raw_output_contents[i] && !('shared_memory_region' in o.parameters) ? m.raw_output_contents[i] : undefined,
    })),
  });
}

export class GrpcInferenceServerClient {
  readonly client: Client;
  private stream: ClientDuplexStream<WireInferRequest, WireStreamResponse> | undefined;
  /** Settles when the open stream has finished (status received or failed). */
  private streamDone: Promise<void> | undefined;

  private readonly headers: Readonly<Record<string, string>>;

  /** `url` is `host:port`, e.g. `127.0.0.1:8001`. */
  constructor(url: string, options: GrpcClientOptions = {}) {
    const ssl = options.ssl || options.rootCertificates !== undefined || options.privateKey !== undefined || options.certificateChain !== undefined;
    const creds = ssl
      ? credentials.createSsl(pemBytes(options.rootCertificates) ?? null, pemBytes(options.privateKey) ?? null, pemBytes(options.certificateChain) ?? null)
      : credentials.createInsecure();
    this.client = new Client(url, creds, {
      'grpc.max_receive_message_length': MAX,
      'grpc.max_send_message_length': MAX,
    });
    this.headers = options.headers ?? {};
  }

  /** A fresh Metadata carrying the client's headers. */
  private metadata(): Metadata {
    const md = new Metadata();
    for (const [k, v] of Object.entries(this.headers)) md.set(k, v);
    return md;
  }

  close(): void {
    this.stopStream();
    this.client.close();
  }

  /**
   * Calls a unary RPC of the service by name with a plain request object (the message as written,
   * e.g. `ModelReadyRequestInit`); resolves with the response as decoded. `oneofs`: each decoded
   * oneof names its member (`parameter_choice`).
   */
  call<M extends UnaryMethod>(
    method: M,
    request: GRPCInferenceServiceMethods[M]['requestInit'],
    options: { oneofs?: boolean } = {},
  ): Promise<GRPCInferenceServiceMethods[M]['response']> {
    const codecs = unaryCodecs(method, { responseOneofs: options.oneofs });
    return new Promise((resolve, reject) =>
      this.client.makeUnaryRequest(SERVICE + method, codecs.request.encode, codecs.response.decode, request, this.metadata(), (err, value) =>
        err ? reject(toException(err)) : resolve(value!),
      ),
    );
  }

  async isServerLive(): Promise<boolean> {
    return (await this.call('ServerLive', {})).live;
  }
  async isServerReady(): Promise<boolean> {
    return (await this.call('ServerReady', {})).ready;
  }
  async isModelReady(name: string, version = ''): Promise<boolean> {
    return (await this.call('ModelReady', { name, version })).ready;
  }
  getServerMetadata(): Promise<ServerMetadataResponse> {
    return this.call('ServerMetadata', {});
  }
  getModelMetadata(name: string, version = ''): Promise<ModelMetadataResponse> {
    return this.call('ModelMetadata', { name, version });
  }
  /** Triton's ModelConfigResponse: `{ config }` (optional, as every sub-message of a decoded proto3 message). */
  getModelConfig(name: string, version = ''): Promise<ModelConfigResponse> {
    return this.call('ModelConfig', { name, version });
  }
  getInferenceStatistics(name = '', version = ''): Promise<ModelStatisticsResponse> {
    return this.call('ModelStatistics', { name, version });
  }
  async getModelRepositoryIndex(options: { ready?: boolean; repository?: string } = {}): Promise<RepositoryIndexResponseModelIndex[]> {
    return (await this.call('RepositoryIndex', { repository_name: options.repository ?? '', ready: options.ready ?? false })).models;
  }
  async loadModel(name: string, options: { config?: string; files?: Record<string, Uint8Array>; repository?: string } = {}): Promise<void> {
    const parameters: Record<string, ModelRepositoryParameterInit> = {};
    if (options.config !== undefined) parameters['config'] = { string_param: options.config };
    for (const [k, v] of Object.entries(options.files ?? {})) parameters[k] = { bytes_param: v };
    await this.call('RepositoryModelLoad', { repository_name: options.repository ?? '', model_name: name, parameters });
  }
  async unloadModel(name: string, options: { unloadDependents?: boolean; repository?: string } = {}): Promise<void> {
    const parameters: Record<string, ModelRepositoryParameterInit> = options.unloadDependents ? { unload_dependents: { bool_param: true } } : {};
    await this.call('RepositoryModelUnload', { repository_name: options.repository ?? '', model_name: name, parameters });
  }
  async getSystemSharedMemoryStatus(region = ''): Promise<Record<string, SystemSharedMemoryStatusResponseRegionStatus>> {
    return (await this.call('SystemSharedMemoryStatus', { name: region })).regions;
  }
  async registerSystemSharedMemory(name: string, key: string, byteSize: number, offset = 0): Promise<void> {
    await this.call('SystemSharedMemoryRegister', { name, key, offset, byte_size: byteSize });
  }
  async unregisterSystemSharedMemory(name = ''): Promise<void> {
    await this.call('SystemSharedMemoryUnregister', { name });
  }
  async getCudaSharedMemoryStatus(region = ''): Promise<Record<string, CudaSharedMemoryStatusResponseRegionStatus>> {
    return (await this.call('CudaSharedMemoryStatus', { name: region })).regions;
  }
  async getTraceSettings(model = ''): Promise<Record<string, string[]>> {
    const res = await this.call('TraceSetting', { model_name: model, settings: {} });
    return Object.fromEntries(Object.entries(res.settings).map(([k, v]) => [k, v.value]));
  }
  async updateTraceSettings(settings: Record<string, string[] | null>, model = ''): Promise<Record<string, string[]>> {
    const wire = Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, { value: v ?? [] }]));
    const res = await this.call('TraceSetting', { model_name: model, settings: wire });
    return Object.fromEntries(Object.entries(res.settings).map(([k, v]) => [k, v.value]));
  }
  async getLogSettings(): Promise<Record<string, unknown>> {
    return this.updateLogSettings({});
  }
  async updateLogSettings(settings: Record<string, string | number | boolean>): Promise<Record<string, unknown>> {
    const wire = Object.fromEntries(
      Object.entries(settings).map(([k, v]): [string, LogSettingsRequestSettingValueInit] => [
        k,
        typeof v === 'boolean' ? { bool_param: v } : typeof v === 'number' ? { uint32_param: v } : { string_param: v },
      ]),
    );
    const res = await this.call('LogSettings', { settings: wire }, { oneofs: true });
    return Object.fromEntries(Object.entries(res.settings).map(([k, v]) => [k, v.parameter_choice === undefined ? undefined : v[v.parameter_choice]]));
  }

  /** ModelInfer with raw contents. */
  infer(model: string, inputs: readonly InferInput[], options: GrpcInferOptions = {}): Promise<InferResult> {
    return this.inferWire(buildWireRequest(model, inputs, options), options.clientTimeoutMs).then(resultOf);
  }

  /** ModelInfer with an already-built wire request (benchmarks, fuzzing). */
  inferWire(request: WireInferRequest, clientTimeoutMs?: number): Promise<WireInferResponse> {
    const opts = clientTimeoutMs ? { deadline: Date.now() + clientTimeoutMs } : {};
    return new Promise((resolve, reject) =>
      this.client.makeUnaryRequest(
        SERVICE + 'ModelInfer',
        encodeInferRequest,
        decodeInferResponse,
        request,
        this.metadata(),
        opts,
        (err: ServiceError | null, value?: WireInferResponse) => (err ? reject(toException(err)) : resolve(value!)),
      ),
    );
  }

  /**
   * Opens the bidirectional stream; `callback` gets each response (or the error of one request).
   * `grpcErrors`: ask the server to end the stream with a gRPC status on error (triton_grpc_error).
   */
  startStream(callback: StreamCallback, options: { grpcErrors?: boolean } = {}): void {
    if (this.stream) throw new InferenceServerException('cannot start another stream with one already running');
    const md = this.metadata();
    if (options.grpcErrors) md.set('triton_grpc_error', 'true');
    const stream = this.client.makeBidiStreamRequest(SERVICE + 'ModelStreamInfer', encodeInferRequest, decodeStreamResponse, md);
    stream.on('data', (m: WireStreamResponse) => {
      if (m.error_message) callback(m.infer_response ? resultOf(m.infer_response) : undefined, new InferenceServerException(m.error_message));
      else if (m.infer_response) callback(resultOf(m.infer_response), undefined);
    });
    stream.on('error', (e: ServiceError) => {
      if (e.code !== GrpcStatus.CANCELLED) callback(undefined, toException(e));
    });
    this.streamDone = new Promise<void>((resolve) => {
      stream.once('status', () => resolve());
      stream.once('error', () => resolve());
      stream.once('close', () => resolve());
    });
    this.stream = stream;
  }

  /** Sends one request on the open stream. */
  asyncStreamInfer(model: string, inputs: readonly InferInput[], options: GrpcInferOptions & { enableEmptyFinalResponse?: boolean } = {}): void {
    if (!this.stream) throw new InferenceServerException('stream not available, use startStream() to make one available');
    const req = buildWireRequest(model, inputs, options);
    if (options.enableEmptyFinalResponse) req.parameters['triton_enable_empty_final_response'] = true;
    this.stream.write(req);
  }

  /** Half-closes the stream; resolves when the server has finished it. */
  stopStream(): Promise<void> {
    const stream = this.stream;
    const done = this.streamDone;
    this.stream = undefined;
    this.streamDone = undefined;
    if (!stream || !done) return Promise.resolve();
    stream.end();
    return done;
  }
}
