/**
 * The models the OpenAI routes serve: those whose config declares `tritium.openai` (mapping.ts).
 * `GET /v1/models` lists the ready ones; a request names one in `model`.
 */
import { InferError } from '@tritium/core';
import type { TransportContext } from '../protocol/context.ts';
import { badRequest, unknownModel } from './errors.ts';
import { openAiMappingOf, type OpenAiApi, type OpenAiMapping } from './mapping.ts';

/** OpenAI's model object. `owned_by` names the server, as Triton's frontend does. */
export interface OpenAiModel {
  readonly id: string;
  readonly object: 'model';
  readonly created: number;
  readonly owned_by: string;
}

const OWNED_BY = 'tritium';

const API_NAMES: Record<OpenAiApi, string> = { embeddings: 'embeddings', chat: 'chat completions', completions: 'completions' };

/**
 * The mapping of the model a request names, for the API it calls. A model that is not loaded, or
 * that declares no OpenAI mapping, is unknown to the OpenAI routes (404, Triton's `Unknown model`);
 * a model that is loaded but not ready answers 503 with core's reason.
 */
export function modelMapping(ctx: TransportContext, model: string, api: OpenAiApi): OpenAiMapping {
  let mapping: OpenAiMapping | undefined;
  try {
    mapping = openAiMappingOf(ctx.api.modelConfig(model));
  } catch (e) {
    if (InferError.is(e) && e.code === 'NOT_FOUND') throw unknownModel(model);
    throw e;
  }
  if (!mapping) throw unknownModel(model);
  if (!mapping.apis.has(api)) {
    const served = [...mapping.apis].map((a) => API_NAMES[a]).join(' and ');
    throw badRequest(`model '${model}' serves ${served}, not ${API_NAMES[api]} (its config's tritium.openai)`, 'model');
  }
  return mapping;
}

/** The ready models that declare a usable OpenAI mapping, by name. */
export async function servedModels(ctx: TransportContext, created: number): Promise<OpenAiModel[]> {
  const index = await ctx.api.repositoryIndex({ readyOnly: true });
  const names = [...new Set(index.map((entry) => entry.name))].sort();
  return names.filter((name) => servesOpenAi(ctx, name)).map((id) => ({ id, object: 'model', created, owned_by: OWNED_BY }));
}

/** One model, as `GET /v1/models/{model}` gives it. */
export function servedModel(ctx: TransportContext, name: string, created: number): OpenAiModel {
  if (!servesOpenAi(ctx, name)) throw unknownModel(name);
  return { id: name, object: 'model', created, owned_by: OWNED_BY };
}

function servesOpenAi(ctx: TransportContext, name: string): boolean {
  try {
    return openAiMappingOf(ctx.api.modelConfig(name)) !== undefined;
  } catch {
    // Not ready, or a mapping that cannot work (its requests say why): not listed.
    return false;
  }
}
