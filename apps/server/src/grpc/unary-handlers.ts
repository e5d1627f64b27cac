/**
 * Handlers of every unary RPC except ModelInfer: plain objects in (protobufjs), plain objects out,
 * each typed from the proto (the request as decoded, the response as written).
 */
import { InferError } from '@tritium/core';
import type {
  GRPCInferenceServiceMethods,
  LogSettingsResponseSettingValueInit,
  ModelRepositoryParameter,
  UnaryMethod,
} from '@tritium/client/proto';
import { checkTraceModel } from '../tracing/trace-model.ts';
import { parseGrpcTraceUpdate } from '../tracing/trace-settings.ts';
import type { TransportContext } from '../protocol/context.ts';
import { CUDA_SHM_UNSUPPORTED_MESSAGE } from '../protocol/shared-memory.ts';
import { LOG_FILE_UPDATE_MESSAGE, updateLogSettings } from '../protocol/settings.ts';
import { advertisedServerMetadata } from '../protocol/extensions.ts';
import { unrecognizedLoadParameter } from '../protocol/status.ts';
import { redactIndexReasons } from '../protocol/server-paths.ts';
import { grpcModelConfig } from './model-config-message.ts';

/** `T` with every bigint as its decimal string, as protobufjs takes 64-bit values. */
export type ProtoSafe<T> = T extends bigint
  ? string
  : T extends readonly (infer E)[]
    ? ProtoSafe<E>[]
    : T extends object
      ? { [K in keyof T]: ProtoSafe<T[K]> }
      : T;

/** bigint → decimal string, recursively: protobufjs takes 64-bit values as strings. */
export function protoSafe<T>(value: T): ProtoSafe<T> {
  return protoSafeValue(value) as ProtoSafe<T>;
}

function protoSafeValue(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(protoSafeValue);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = protoSafeValue(v);
    return out;
  }
  return value;
}

type Messages<M extends UnaryMethod> = GRPCInferenceServiceMethods[M];
/** A method's handler: its request as decoded in, its response as written out. */
export type UnaryHandler<M extends UnaryMethod> = (req: Messages<M>['request'], ctx: TransportContext) => Messages<M>['responseInit'] | Promise<Messages<M>['responseInit']>;
export type UnaryHandlers = { readonly [M in UnaryMethod]: UnaryHandler<M> };

/** A oneof parameter (decoded with `oneofs: true`) → the value of its member that is set. */
function oneofValue<P extends { parameter_choice?: keyof P }>(p: P | undefined): P[keyof P] | undefined {
  return p?.parameter_choice === undefined ? undefined : p[p.parameter_choice];
}

export const UNARY_HANDLERS: UnaryHandlers = {
  ServerLive: (_req, ctx) => ({ live: ctx.api.isLive() }),
  ServerReady: (_req, ctx) => ({ ready: ctx.api.isReady() }),
  ModelReady: (req, ctx) => ({ ready: ctx.api.modelReady(req.name, req.version) }),
  ServerMetadata: (_req, ctx) => advertisedServerMetadata(ctx),
  ModelMetadata: (req, ctx) => ctx.api.modelMetadata(req.name, req.version),
  ModelConfig: (req, ctx) => ({ config: protoSafe(grpcModelConfig(ctx.api.modelConfig(req.name, req.version))) }),
  ModelStatistics: (req, ctx) => ({
    model_stats: protoSafe(ctx.api.statistics(req.name || undefined, req.version)),
  }),
  RepositoryIndex: async (req, ctx) => ({
    models: redactIndexReasons(await ctx.api.repositoryIndex({ readyOnly: req.ready, repository: req.repository_name || undefined })),
  }),
  RepositoryModelLoad: async (req, ctx) => {
    let configJson: string | undefined;
    let files: Record<string, Uint8Array> | undefined;
    for (const [key, p] of Object.entries(req.parameters)) {
      // Triton's gRPC frontend checks the member of the oneof first, in these words.
      const expect = key === 'config' ? 'string_param' : key.startsWith('file:') ? 'bytes_param' : undefined;
      if (expect && p.parameter_choice !== expect) {
        throw new InferError('INVALID_ARG', `invalid value type for load parameter '${key}', expected ${expect}.`);
      }
      if (key === 'config') {
        configJson = p.string_param;
      } else if (key.startsWith('file:')) {
        if (!ctx.allowModelFileLoad) {
          throw new InferError('UNSUPPORTED', `loading model files through the API is disabled on this server ('${key}'); start it with --allow-model-file-load=true`);
        }
        (files ??= {})[key] = p.bytes_param!;
      } else {
        throw unrecognizedLoadParameter(key);
      }
    }
    if (files && configJson === undefined) {
      throw new InferError('INVALID_ARG', "failed to load '" + req.model_name + "', a 'config' parameter is required when model files are given");
    }
    await ctx.api.loadModel(req.model_name, { configJson, files, repository: req.repository_name || undefined });
    return {};
  },
  RepositoryModelUnload: async (req, ctx) => {
    const param: ModelRepositoryParameter | undefined = req.parameters['unload_dependents'];
    // Triton's words for any other member of the oneof: an int64_param 1 is not read as true.
    if (param !== undefined && param.parameter_choice !== 'bool_param') {
      throw new InferError('INVALID_ARG', "invalid value type for 'unload_dependents' parameter, expected bool_param.");
    }
    const deps = oneofValue(param);
    await ctx.api.unloadModel(req.model_name, { unloadDependents: deps === true, repository: req.repository_name || undefined });
    return {};
  },
  SystemSharedMemoryStatus: (req, ctx) => ({
    regions: Object.fromEntries(ctx.shm.status(req.name || undefined).map((r) => [r.name, r])),
  }),
  SystemSharedMemoryRegister: (req, ctx) => {
    ctx.shm.register(req.name, req.key, req.offset, req.byte_size);
    return {};
  },
  SystemSharedMemoryUnregister: (req, ctx) => {
    ctx.shm.unregister(req.name || undefined);
    return {};
  },
  CudaSharedMemoryStatus: () => {
    throw new InferError('UNSUPPORTED', CUDA_SHM_UNSUPPORTED_MESSAGE);
  },
  CudaSharedMemoryRegister: () => {
    throw new InferError('UNSUPPORTED', CUDA_SHM_UNSUPPORTED_MESSAGE);
  },
  CudaSharedMemoryUnregister: () => {
    throw new InferError('UNSUPPORTED', CUDA_SHM_UNSUPPORTED_MESSAGE);
  },
  TraceSetting: (req, ctx) => {
    const model = req.model_name || undefined;
    checkTraceModel(ctx, model);
    const store = ctx.tracing.settings;
    const given = Object.entries(req.settings);
    // Triton updates only when the request names settings; otherwise it reports them.
    if (given.length > 0) store.update(parseGrpcTraceUpdate(Object.fromEntries(given.map(([k, v]) => [k, v.value]))), model);
    return { settings: Object.fromEntries(Object.entries(store.report(model)).map(([k, v]) => [k, { value: v }])) };
  },
  LogSettings: (req, ctx) => {
    const settings = req.settings;
    // Triton refuses the key itself, whatever value (or none) it carries.
    if (Object.hasOwn(settings, 'log_file')) throw new InferError('UNSUPPORTED', LOG_FILE_UPDATE_MESSAGE);
    const changes: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(settings)) changes[k] = oneofValue(v);
    const s = updateLogSettings(ctx.log, changes);
    const out: Record<string, LogSettingsResponseSettingValueInit> = {};
    for (const [k, v] of Object.entries(s)) {
      out[k] = typeof v === 'boolean' ? { bool_param: v } : typeof v === 'number' ? { uint32_param: v } : { string_param: v };
    }
    return { settings: out };
  },
};
