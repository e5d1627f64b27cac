/** Handlers of every unary RPC except ModelInfer: plain objects in (protobufjs), plain objects out. */
import { InferError } from '@tritium/core';
import { checkTraceModel } from '../tracing/trace-model.ts';
import { parseGrpcTraceUpdate } from '../tracing/trace-settings.ts';
import type { TransportContext } from '../protocol/context.ts';
import { CUDA_SHM_UNSUPPORTED_MESSAGE } from '../protocol/shared-memory.ts';
import { LOG_FILE_UPDATE_MESSAGE, updateLogSettings } from '../protocol/settings.ts';
import { advertisedServerMetadata } from '../protocol/extensions.ts';
import { unrecognizedLoadParameter } from '../protocol/status.ts';
import { redactIndexReasons } from '../protocol/server-paths.ts';

/** bigint → decimal string, recursively: protobufjs takes 64-bit values as strings. */
export function protoSafe(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(protoSafe);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = protoSafe(v);
    return out;
  }
  return value;
}

type Unary = (req: any, ctx: TransportContext) => unknown;

/** `{bool_param|int64_param|string_param|bytes_param, parameter_choice}` → its value. */
function oneofValue(p: Record<string, unknown> | undefined): unknown {
  const choice = p?.['parameter_choice'];
  return typeof choice === 'string' ? p![choice] : undefined;
}

export const UNARY_HANDLERS: Record<string, Unary> = {
  ServerLive: (_req, ctx) => ({ live: ctx.api.isLive() }),
  ServerReady: (_req, ctx) => ({ ready: ctx.api.isReady() }),
  ModelReady: (req, ctx) => ({ ready: ctx.api.modelReady(req.name, req.version) }),
  ServerMetadata: (_req, ctx) => advertisedServerMetadata(ctx),
  ModelMetadata: (req, ctx) => ctx.api.modelMetadata(req.name, req.version),
  ModelConfig: (req, ctx) => ({ config: protoSafe(ctx.api.modelConfig(req.name, req.version)) }),
  ModelStatistics: (req, ctx) => ({
    model_stats: protoSafe(ctx.api.statistics(req.name || undefined, req.version)),
  }),
  RepositoryIndex: async (req, ctx) => ({
    models: redactIndexReasons(await ctx.api.repositoryIndex({ readyOnly: req.ready, repository: req.repository_name || undefined })),
  }),
  RepositoryModelLoad: async (req, ctx) => {
    let configJson: string | undefined;
    let files: Record<string, Uint8Array> | undefined;
    for (const [key, p] of Object.entries((req.parameters ?? {}) as Record<string, Record<string, unknown>>)) {
      const value = oneofValue(p);
      // Triton's gRPC frontend checks the member of the oneof first, in these words.
      const expect = key === 'config' ? 'string_param' : key.startsWith('file:') ? 'bytes_param' : undefined;
      if (expect && p?.['parameter_choice'] !== expect) {
        throw new InferError('INVALID_ARG', `invalid value type for load parameter '${key}', expected ${expect}.`);
      }
      if (key === 'config') {
        configJson = value as string;
      } else if (key.startsWith('file:')) {
        if (!ctx.allowModelFileLoad) {
          throw new InferError('UNSUPPORTED', `loading model files through the API is disabled on this server ('${key}'); start it with --allow-model-file-load=true`);
        }
        (files ??= {})[key] = value as Uint8Array;
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
    const param = req.parameters?.['unload_dependents'] as Record<string, unknown> | undefined;
    // Triton's words for any other member of the oneof (an int64_param 1 was read as false).
    if (param !== undefined && param['parameter_choice'] !== 'bool_param') {
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
    const given = Object.entries((req.settings ?? {}) as Record<string, { value?: string[] }>);
    // Triton updates only when the request names settings; otherwise it reports them.
    if (given.length > 0) store.update(parseGrpcTraceUpdate(Object.fromEntries(given.map(([k, v]) => [k, v.value ?? []]))), model);
    return { settings: Object.fromEntries(Object.entries(store.report(model)).map(([k, v]) => [k, { value: v }])) };
  },
  LogSettings: (req, ctx) => {
    const settings = (req.settings ?? {}) as Record<string, Record<string, unknown>>;
    // Triton refuses the key itself, whatever value (or none) it carries.
    if ('log_file' in settings) throw new InferError('UNSUPPORTED', LOG_FILE_UPDATE_MESSAGE);
    const changes: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(settings)) changes[k] = oneofValue(v);
    const s = updateLogSettings(ctx.log, changes);
    const out: Record<string, object> = {};
    for (const [k, v] of Object.entries(s)) {
      out[k] = typeof v === 'boolean' ? { bool_param: v } : typeof v === 'number' ? { uint32_param: v } : { string_param: v };
    }
    return { settings: out };
  },
};
