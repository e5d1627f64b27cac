/**
 * The OpenAI-compatible routes, served by the HTTP transport on its port (every path under `/v1/`)
 * and, with `--openai-port`, on a listener of their own:
 *
 *   POST /v1/embeddings          inference          embeddings.ts
 *   POST /v1/chat/completions    inference          generation.ts
 *   POST /v1/completions         inference          generation.ts
 *   GET  /v1/models              model-repository   served-models.ts
 *   GET  /v1/models/{model}      model-repository
 *
 * Categories are Triton's OpenAI frontend's, so `--http-restricted-api` gates these routes as it
 * gates the KServe ones (answered as Triton's OpenAI frontend answers: 401, `authentication_error`).
 * Then the API key (api-keys.ts), then the body, read within the shared request budget and the JSON
 * size bound. Every failure is OpenAI's error JSON (errors.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TransportContext } from '../protocol/context.ts';
import { failedRestriction, type RestrictedCategory, type Restrictions } from '../protocol/restricted.ts';
import { logServerFault, TransportError } from '../protocol/status.ts';
import type { ApiKeys } from './api-keys.ts';
import { createEmbeddings } from './embeddings.ts';
import { parseEmbeddingsRequest } from './embeddings-request.ts';
import { OpenAiError, openAiErrorReply } from './errors.ts';
import { generateOnce, generateStream } from './generation.ts';
import { inferCalls } from './infer-calls.ts';
import { parseChatRequest, parseCompletionRequest, type GenerationRequest } from './generation-request.ts';
import { servedModel, servedModels } from './served-models.ts';

export interface OpenAiRouteOptions {
  readonly apiKeys: ApiKeys;
  /** `--http-restricted-api`, applied by category. */
  readonly restricted?: Restrictions;
}

/** What a route needs of the exchange; the HTTP transport provides it. */
export interface OpenAiExchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  readonly path: string;
  /** Reads the body within the request budget and the JSON bound, and parses it. */
  readJson(): Promise<unknown>;
  /** Aborted when the client's connection closes. */
  readonly signal: AbortSignal;
  /** Sends a JSON reply (keep-alive handled as for every reply of the transport). */
  sendJson(status: number, body: unknown, headers?: Record<string, string>): void;
}

type Handler = (ctx: TransportContext, ex: OpenAiExchange, created: number, model?: string) => Promise<void>;

interface Route {
  readonly method: string;
  readonly pattern: RegExp;
  readonly category: RestrictedCategory;
  readonly handle: Handler;
}

const ROUTES: readonly Route[] = [
  {
    method: 'POST',
    pattern: /^\/v1\/embeddings\/?$/,
    category: 'inference',
    handle: async (ctx, ex) => ex.sendJson(200, await createEmbeddings(ctx, inferCalls(ctx, ex.req), parseEmbeddingsRequest(await ex.readJson()), ex.signal)),
  },
  { method: 'POST', pattern: /^\/v1\/chat\/completions\/?$/, category: 'inference', handle: async (ctx, ex) => generate(ctx, ex, parseChatRequest(await ex.readJson())) },
  { method: 'POST', pattern: /^\/v1\/completions\/?$/, category: 'inference', handle: async (ctx, ex) => generate(ctx, ex, parseCompletionRequest(await ex.readJson())) },
  {
    method: 'GET',
    pattern: /^\/v1\/models\/?$/,
    category: 'model-repository',
    handle: async (ctx, ex, created) => ex.sendJson(200, { object: 'list', data: await servedModels(ctx, created) }),
  },
  {
    method: 'GET',
    pattern: /^\/v1\/models\/(?<model>[^/]+)$/,
    category: 'model-repository',
    handle: async (ctx, ex, created, model) => ex.sendJson(200, servedModel(ctx, model!, created)),
  },
];

async function generate(ctx: TransportContext, ex: OpenAiExchange, request: GenerationRequest): Promise<void> {
  // The request is cancelled when its client leaves before the answer is complete.
  const abort = new AbortController();
  ex.res.once('close', () => {
    if (!ex.res.writableFinished) abort.abort();
  });
  const calls = inferCalls(ctx, ex.req);
  if (request.stream) await generateStream(ctx, calls, request, ex.res, abort.signal);
  else ex.sendJson(200, await generateOnce(ctx, calls, request, abort.signal));
}

/** The path's route for this method, and the category of a path known for another method. */
function matchRoute(method: string, path: string): { route?: Route; model?: string; category?: RestrictedCategory } {
  let category: RestrictedCategory | undefined;
  for (const route of ROUTES) {
    const m = route.pattern.exec(path);
    if (!m) continue;
    category ??= route.category;
    if (route.method !== method) continue;
    const model = m.groups?.['model'];
    return { route, category, ...(model !== undefined ? { model: safeDecode(model) } : {}) };
  }
  return { ...(category ? { category } : {}) };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Triton's OpenAI frontend's request-size refusal, naming the flag that sets the bound here. */
export function openAiTooLarge(maxBytes: number): () => TransportError {
  return () => new TransportError(`Request content size exceeds the maximum allowed input size of ${maxBytes} bytes. Use --http-max-json-size to increase the limit.`, 413);
}

export class OpenAiRoutes {
  /** When the routes started: `created` of every model object (the models were loaded by then). */
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly ctx: TransportContext,
    private readonly options: OpenAiRouteOptions,
  ) {}

  /** Serves one request on an OpenAI path; never throws (every failure is an OpenAI error reply). */
  async handle(ex: OpenAiExchange): Promise<void> {
    try {
      const { route, model, category } = matchRoute(ex.method, ex.path);
      const restriction = this.options.restricted && failedRestriction(this.options.restricted, category, (name) => {
        const v = ex.req.headers[name];
        return typeof v === 'string' ? v : undefined;
      });
      if (restriction) throw new OpenAiError(401, `This API is restricted, expecting header '${restriction.header}' with valid value`, 'invalid_auth', null, 'authentication_error');
      const authorization = ex.req.headers['authorization'];
      this.options.apiKeys.check(typeof authorization === 'string' ? authorization : undefined);
      if (!route) {
        throw category
          ? new OpenAiError(405, `Method Not Allowed (${ex.method} ${ex.path})`, 'method_not_allowed')
          : new OpenAiError(404, `Invalid URL (${ex.method} ${ex.path})`, 'unknown_url');
      }
      if (ex.method === 'GET') ex.req.resume();
      await route.handle(this.ctx, ex, this.created, model);
    } catch (error) {
      this.fail(ex, error);
    }
  }

  private fail(ex: OpenAiExchange, error: unknown): void {
    const reply = openAiErrorReply(error);
    logServerFault(this.ctx.log, `HTTP ${ex.method} ${ex.path}`, { httpStatus: reply.status, grpcStatus: 0, message: reply.body.error.message });
    if (ex.res.headersSent) {
      ex.res.destroy();
      return;
    }
    if (!ex.req.complete) {
      if (reply.status === 413) ex.res.setHeader('connection', 'close');
      ex.req.resume();
    }
    ex.sendJson(reply.status, reply.body, reply.status === 401 ? { 'www-authenticate': 'Bearer' } : undefined);
  }
}
