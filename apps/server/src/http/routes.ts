/**
 * Triton's HTTP routes (KServe v2 + extensions): path patterns, allowed methods and handlers.
 * Model names are `[^/]+`, versions `[0-9]+` (as Triton's router).
 */
import { InferError } from '@tritium/core';
import { modelConfigToJson } from '@tritium/core/config';
import type { TransportContext } from '../protocol/context.ts';
import { CUDA_SHM_UNSUPPORTED_MESSAGE } from '../protocol/shared-memory.ts';
import { logSettingsOf, updateLogSettings } from '../protocol/settings.ts';
import { advertisedServerMetadata } from '../protocol/extensions.ts';
import { invalidArg, unrecognizedLoadParameter } from '../protocol/status.ts';
import { redactIndexReasons } from '../protocol/server-paths.ts';
import { checkTraceModel } from '../tracing/trace-model.ts';
import { httpTraceReport, parseHttpTraceUpdate } from '../tracing/trace-settings.ts';
import type { RestrictedCategory } from '../protocol/restricted.ts';

/** What a handler returns: a status with an optional JSON body (undefined = empty body). */
export interface Reply {
  readonly status: number;
  readonly json?: unknown;
  /** A body already serialized as JSON (e.g. Triton's config JSON, exact for 64-bit values). */
  readonly rawJson?: string;
}

export interface RouteInput {
  readonly method: string;
  readonly params: Readonly<Record<string, string | undefined>>;
  /** Reads (and decompresses) the body and parses it as JSON (undefined when empty); only POST handlers call it. */
  readonly json: () => Promise<unknown>;
  readonly ctx: TransportContext;
}

export interface Route {
  readonly pattern: RegExp;
  /** Triton's restricted-API category (`--http-restricted-api`). */
  readonly category: RestrictedCategory;
  readonly methods: readonly string[];
  /** The body may carry model files (base64): read up to --http-max-input-size when file loads are allowed. */
  readonly modelFiles?: true;
  /** `infer` is handled by the transport itself (binary body and reply). */
  readonly handle: ((input: RouteInput) => Promise<Reply> | Reply) | 'infer' | 'generate' | 'generate_stream';
}

const M = '(?<model>[^/]+)';
const V = '(?:/versions/(?<version>[^/]+))?';

async function jsonBody(input: RouteInput): Promise<Record<string, unknown>> {
  const parsed = await input.json();
  if (parsed === undefined) return {};
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalidArg('request body must be a JSON object');
  return parsed as Record<string, unknown>;
}

const ok = (json?: unknown): Reply => ({ status: 200, json });

function cudaUnsupported(): never {
  throw new InferError('UNSUPPORTED', CUDA_SHM_UNSUPPORTED_MESSAGE);
}

async function traceSetting(input: RouteInput): Promise<Reply> {
  const model = input.params['model'];
  checkTraceModel(input.ctx, model);
  const store = input.ctx.tracing.settings;
  if (input.method === 'POST') store.update(parseHttpTraceUpdate(await jsonBody(input)), model);
  return ok(httpTraceReport(store.report(model)));
}

export const ROUTES: readonly Route[] = [
  { pattern: /^\/v2\/health\/live$/, category: 'health', methods: ['GET'], handle: ({ ctx }) => ({ status: ctx.api.isLive() ? 200 : 400 }) },
  { pattern: /^\/v2\/health\/ready$/, category: 'health', methods: ['GET'], handle: ({ ctx }) => ({ status: ctx.api.isReady() ? 200 : 400 }) },
  { pattern: /^\/v2\/?$/, category: 'metadata', methods: ['GET'], handle: ({ ctx }) => ok(advertisedServerMetadata(ctx)) },
  {
    pattern: /^\/v2\/models\/stats$/,
    category: 'statistics',
    methods: ['GET'],
    handle: ({ ctx }) => ok({ model_stats: numbersOnly(ctx.api.statistics()) }),
  },
  {
    pattern: new RegExp(`^/v2/models/${M}${V}/ready$`),
    category: 'health',
    methods: ['GET'],
    handle: ({ ctx, params }) =>
      ctx.api.modelReady(params['model']!, params['version']) ? { status: 200 } : { status: 400, json: { error: 'Model version not ready' } },
  },
  {
    pattern: new RegExp(`^/v2/models/${M}${V}/config$`),
    category: 'model-config',
    methods: ['GET'],
    handle: ({ ctx, params }) => ({
      status: 200,
      rawJson: modelConfigToJson(ctx.api.modelConfig(params['model']!, params['version'])),
    }),
  },
  {
    pattern: new RegExp(`^/v2/models/${M}${V}/stats$`),
    category: 'statistics',
    methods: ['GET'],
    handle: ({ ctx, params }) => ok({ model_stats: numbersOnly(ctx.api.statistics(params['model']!, params['version'])) }),
  },
  { pattern: new RegExp(`^/v2/models/${M}${V}/infer$`), category: 'inference', methods: ['POST'], handle: 'infer' },
  { pattern: new RegExp(`^/v2/models/${M}${V}/generate$`), category: 'inference', methods: ['POST'], handle: 'generate' },
  { pattern: new RegExp(`^/v2/models/${M}${V}/generate_stream$`), category: 'inference', methods: ['POST'], handle: 'generate_stream' },
  { pattern: new RegExp(`^/v2/models/${M}/trace/setting$`), category: 'trace', methods: ['GET', 'POST'], handle: traceSetting },
  {
    pattern: new RegExp(`^/v2/models/${M}${V}$`),
    category: 'metadata',
    methods: ['GET'],
    handle: ({ ctx, params }) => ok(ctx.api.modelMetadata(params['model']!, params['version'])),
  },
  { pattern: /^\/v2\/trace\/setting$/, category: 'trace', methods: ['GET', 'POST'], handle: traceSetting },
  {
    pattern: /^\/v2\/logging$/,
    category: 'logging',
    methods: ['GET', 'POST'],
    handle: async (input) => ok(input.method === 'GET' ? logSettingsOf(input.ctx.log) : updateLogSettings(input.ctx.log, await jsonBody(input))),
  },
  {
    pattern: /^\/v2\/repository(?:\/(?<repo>[^/]+))?\/index$/,
    category: 'model-repository',
    methods: ['POST'],
    handle: async (input) => {
      const body = await jsonBody(input);
      if (body['ready'] !== undefined && typeof body['ready'] !== 'boolean') throw invalidArg("'ready' must be a boolean");
      return ok(redactIndexReasons(await input.ctx.api.repositoryIndex({ readyOnly: body['ready'] === true, repository: input.params['repo'] })));
    },
  },
  {
    pattern: new RegExp(`^/v2/repository(?:/(?<repo>[^/]+))?/models/${M}/load$`),
    category: 'model-repository',
    modelFiles: true,
    methods: ['POST'],
    handle: async (input) => {
      const body = await jsonBody(input);
      const given = body['parameters'] ?? {};
      if (typeof given !== 'object' || Array.isArray(given)) throw invalidArg("load request 'parameters' must be a JSON object");
      const params = given as Record<string, unknown>;
      let configJson: string | undefined;
      let files: Record<string, Uint8Array> | undefined;
      for (const [key, value] of Object.entries(params)) {
        if (key === 'config') {
          if (typeof value !== 'string') throw invalidArg("the 'config' parameter must be a string holding JSON");
          configJson = value;
        } else if (key.startsWith('file:')) {
          if (!input.ctx.allowModelFileLoad) {
            throw new InferError(
              'UNSUPPORTED',
              `loading model files through the API is disabled on this server ('${key}'); start it with --allow-model-file-load=true`,
            );
          }
          if (typeof value !== 'string') throw invalidArg(`the '${key}' parameter must be base64 text`);
          (files ??= {})[key] = Buffer.from(value, 'base64');
        } else {
          throw unrecognizedLoadParameter(key);
        }
      }
      if (files && configJson === undefined) {
        throw invalidArg(`failed to load '${input.params['model']}', a 'config' parameter is required when model files are given`);
      }
      await input.ctx.api.loadModel(input.params['model']!, { configJson, files, repository: input.params['repo'] });
      return ok();
    },
  },
  {
    pattern: new RegExp(`^/v2/repository(?:/(?<repo>[^/]+))?/models/${M}/unload$`),
    category: 'model-repository',
    methods: ['POST'],
    handle: async (input) => {
      const body = await jsonBody(input);
      const params = (body['parameters'] ?? {}) as Record<string, unknown>;
      // Triton parses it as a boolean and refuses anything else: read as false, `"true"` would leave
      // loaded the composing models a client asked to unload.
      const deps = params['unload_dependents'];
      if (deps !== undefined && typeof deps !== 'boolean') {
        throw invalidArg(`Unable to parse 'unload_dependents': expected a boolean, got ${JSON.stringify(deps)}`);
      }
      await input.ctx.api.unloadModel(input.params['model']!, {
        unloadDependents: deps === true,
        repository: input.params['repo'],
      });
      return ok();
    },
  },
  {
    pattern: /^\/v2\/systemsharedmemory(?:\/region\/(?<region>[^/]+))?\/status$/,
    category: 'shared-memory',
    methods: ['GET'],
    handle: ({ ctx, params }) => ok(ctx.shm.status(params['region'])),
  },
  {
    pattern: /^\/v2\/systemsharedmemory\/region\/(?<region>[^/]+)\/register$/,
    category: 'shared-memory',
    methods: ['POST'],
    handle: async (input) => {
      const body = await jsonBody(input);
      const { key, offset, byte_size: byteSize } = body;
      if (typeof key !== 'string') throw invalidArg("Shared memory register request has no 'key' string");
      if (byteSize === undefined) throw invalidArg("Shared memory register request has no 'byte_size' number");
      // An absent offset is 0 (Triton's); any value given is checked by the registry.
      input.ctx.shm.register(input.params['region']!, key, offset === undefined ? 0 : offset, byteSize);
      return ok();
    },
  },
  {
    pattern: /^\/v2\/systemsharedmemory(?:\/region\/(?<region>[^/]+))?\/unregister$/,
    category: 'shared-memory',
    methods: ['POST'],
    handle: ({ ctx, params }) => {
      ctx.shm.unregister(params['region']);
      return ok();
    },
  },
  { pattern: /^\/v2\/cudasharedmemory(?:\/region\/[^/]+)?\/status$/, category: 'shared-memory', methods: ['GET'], handle: cudaUnsupported },
  { pattern: /^\/v2\/cudasharedmemory\/region\/[^/]+\/register$/, category: 'shared-memory', methods: ['POST'], handle: cudaUnsupported },
  { pattern: /^\/v2\/cudasharedmemory(?:\/region\/[^/]+)?\/unregister$/, category: 'shared-memory', methods: ['POST'], handle: cudaUnsupported },
];

/** JSON has no bigint: 64-bit values beyond 2^53 are written as numbers (Triton prints them unquoted). */
export function numbersOnly<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? Number(v) : v))) as T;
}

export interface Matched {
  readonly route: Route;
  readonly params: Record<string, string | undefined>;
}

/** Finds the route for a path; `methodAllowed` false when the path exists but not for this method. */
const INFER_ROUTE = ROUTES.find((r) => r.handle === 'infer')!;
/** The routes with infer tried first: built once, not per request. */
const INFER_FIRST: readonly Route[] = [INFER_ROUTE, ...ROUTES];

export function matchRoute(method: string, path: string): { matched?: Matched; pathKnown: boolean; category?: RestrictedCategory } {
  let pathKnown = false;
  let category: RestrictedCategory | undefined;
  // The hot path first: `.../infer` is most of the traffic.
  const routes = path.endsWith('/infer') ? INFER_FIRST : ROUTES;
  for (const route of routes) {
    const m = route.pattern.exec(path);
    if (!m) continue;
    pathKnown = true;
    category ??= route.category;
    if (!route.methods.includes(method)) continue;
    const params: Record<string, string | undefined> = {};
    const groups = m.groups;
    if (groups) for (const k in groups) params[k] = groups[k] === undefined ? undefined : safeDecode(groups[k]);
    return { matched: { route, params }, pathKnown, category: route.category };
  }
  return { pathKnown, category };
}

function safeDecode(s: string): string {
  // Nothing to decode without an escape (most names): skips the call and its try (~0.4 us a request).
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
