/**
 * `POST /v1/embeddings` on the model's own batcher. An `input` array becomes the rows of one
 * inference request (split into requests of at most max_batch_size rows), so its texts are embedded
 * in one execution, and concurrent clients' requests are batched together by the model's dynamic
 * batcher exactly like KServe v2 requests: it is the same `InferenceServer.infer` call. Token-id
 * inputs go to the mapping's `token_ids_model`, padded (token-batches.ts).
 *
 * `usage.prompt_tokens` is counted from the pipeline's own tokenizer output (the mapping's
 * `tokens_output`, summed per row) for text, and is the number of ids given for token ids.
 */
import { InferError, tensorFromStrings, typedView, type InferRequest, type InferResponse, type Tensor } from '@tritium/core';
import { elementCount } from '@tritium/core/tensor';
import type { TransportContext } from '../protocol/context.ts';
import { badMapping, badRequest } from './errors.ts';
import { type EmbeddingsRequest } from './embeddings-request.ts';
import { type EmbeddingsMapping, type OpenAiMapping, type TensorRef } from './mapping.ts';
import type { InferCalls } from './infer-calls.ts';
import { modelMapping } from './served-models.ts';
import { paddedTokens, tokenBatches } from './token-batches.ts';

export interface EmbeddingsResponse {
  readonly object: 'list';
  readonly data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  readonly model: string;
  readonly usage: { prompt_tokens: number; total_tokens: number };
}

/** One request's rows once answered: each row's embedding values and token count. */
interface Answered {
  readonly rows: readonly number[];
  readonly vectors: readonly Float32Array[];
  readonly tokens: number;
}

export async function createEmbeddings(ctx: TransportContext, calls: InferCalls, request: EmbeddingsRequest, signal: AbortSignal): Promise<EmbeddingsResponse> {
  const mapping = modelMapping(ctx, request.model, 'embeddings');
  const embeddings = mapping.embeddings!;
  const size = fixedSize(embeddings.embeddingOutput);
  if (request.dimensions !== undefined && size !== undefined) checkDimensions(mapping, embeddings, request.dimensions, size);
  const answered = await Promise.all(
    request.inputs.kind === 'text' ? textRequests(calls, mapping, request.inputs.texts, signal) : tokenRequests(ctx, calls, mapping, request.inputs.rows, signal),
  );
  const vectors: Float32Array[] = new Array<Float32Array>(request.inputs.kind === 'text' ? request.inputs.texts.length : request.inputs.rows.length);
  let tokens = 0;
  for (const a of answered) {
    a.rows.forEach((row, i) => (vectors[row] = a.vectors[i]!));
    tokens += a.tokens;
  }
  const data = vectors.map((values, index) => {
    const vector = request.dimensions === undefined ? values : resized(mapping, embeddings, values, request.dimensions);
    return { object: 'embedding' as const, index, embedding: request.encoding === 'base64' ? base64Of(vector) : Array.from(vector) };
  });
  return { object: 'list', data, model: request.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

/** The texts, `max_batch_size` rows per request (one per request for a model that does not batch). */
function textRequests(calls: InferCalls, mapping: OpenAiMapping, texts: readonly string[], signal: AbortSignal): Promise<Answered>[] {
  const embeddings = mapping.embeddings!;
  const rowShape = oneElementRow(mapping, embeddings.textInput);
  const step = Math.max(1, mapping.maxBatchSize);
  const outputs = [{ name: embeddings.embeddingOutput.name }, ...(embeddings.tokensOutput ? [{ name: embeddings.tokensOutput.name }] : [])];
  const requests: Promise<Answered>[] = [];
  for (let start = 0; start < texts.length; start += step) {
    const chunk = texts.slice(start, start + step);
    const shape = mapping.maxBatchSize > 0 ? [chunk.length, ...rowShape] : rowShape;
    const request: InferRequest = {
      id: '',
      model: mapping.model,
      inputs: [tensorFromStrings(embeddings.textInput.name, shape, chunk)],
      outputs,
      signal,
    };
    const rows = chunk.map((_, i) => start + i);
    requests.push(calls.infer(request).then((response) => answeredRows(mapping, embeddings, response, rows, undefined)));
  }
  return requests;
}

/** The token-id rows, padded into batches of the token-id model. */
function tokenRequests(ctx: TransportContext, calls: InferCalls, mapping: OpenAiMapping, rows: readonly (readonly number[])[], signal: AbortSignal): Promise<Answered>[] {
  const embeddings = mapping.embeddings!;
  const target = embeddings.tokenIdsModel;
  if (!target) {
    throw badRequest(`model '${mapping.model}' takes text only: its config names no model for token-id input (tritium.openai.token_ids_model)`, 'input');
  }
  const ids = tokenIdsTarget(ctx, mapping, target);
  rows.forEach((row, i) => {
    if (row.length > embeddings.maxInputTokens) {
      throw badRequest(`'input[${i}]' has ${row.length} tokens; model '${mapping.model}' takes at most ${embeddings.maxInputTokens} (tritium.openai.max_input_tokens)`, `input[${i}]`);
    }
    if (ids.int32) {
      const j = row.findIndex((id) => id > 0x7fffffff);
      if (j >= 0) throw badRequest(`'input[${i}][${j}]' is ${row[j]}, beyond the INT32 token ids model '${target}' takes`, `input[${i}][${j}]`);
    }
  });
  return tokenBatches(rows, Math.max(1, ids.maxBatchSize)).map((batch) => {
    const { ids: idBytes, mask } = paddedTokens(rows, batch, ids.int32);
    const shape = ids.maxBatchSize > 0 ? [batch.rows.length, batch.length] : [batch.length];
    const datatype = ids.int32 ? 'INT32' : 'INT64';
    const inputs: Tensor[] = [{ name: embeddings.tokenIdsInput, datatype, shape, data: idBytes }];
    if (ids.mask) inputs.push({ name: embeddings.tokenMaskInput, datatype, shape, data: mask });
    const request: InferRequest = { id: '', model: target, inputs, outputs: [{ name: embeddings.embeddingOutput.name }], signal };
    const tokens = batch.rows.reduce((n, row) => n + rows[row]!.length, 0);
    return calls.infer(request).then((response) => answeredRows(mapping, embeddings, response, batch.rows, tokens));
  });
}

/** What the token-id model takes: its id input's type (INT64 or INT32), whether it has a mask input, its batch size. */
function tokenIdsTarget(ctx: TransportContext, mapping: OpenAiMapping, target: string): { int32: boolean; mask: boolean; maxBatchSize: number } {
  const embeddings = mapping.embeddings!;
  let config;
  try {
    config = ctx.api.modelConfig(target);
  } catch (e) {
    if (InferError.is(e) && e.code === 'NOT_FOUND') throw badMapping(mapping.model, `tritium.openai.token_ids_model '${target}' is not loaded`);
    throw e;
  }
  const idInput = config.input.find((i) => i.name === embeddings.tokenIdsInput);
  if (!idInput || (idInput.data_type !== 'TYPE_INT64' && idInput.data_type !== 'TYPE_INT32')) {
    throw badMapping(mapping.model, `token-id model '${target}' has no INT64 or INT32 input '${embeddings.tokenIdsInput}' (tritium.openai.token_ids_input)`);
  }
  const maskInput = config.input.find((i) => i.name === embeddings.tokenMaskInput);
  if (maskInput && maskInput.data_type !== idInput.data_type) {
    throw badMapping(mapping.model, `token-id model '${target}' input '${maskInput.name}' is ${maskInput.data_type}, not ${idInput.data_type} like '${idInput.name}'`);
  }
  return { int32: idInput.data_type === 'TYPE_INT32', mask: maskInput !== undefined, maxBatchSize: Number(config.max_batch_size) };
}

/** Each row's embedding (as float32) and the rows' token count, from one request's response. */
function answeredRows(mapping: OpenAiMapping, embeddings: EmbeddingsMapping, response: InferResponse, rows: readonly number[], givenTokens: number | undefined): Answered {
  const output = response.outputs.find((o) => o.name === embeddings.embeddingOutput.name);
  if (!output) throw badMapping(mapping.model, `its response has no output '${embeddings.embeddingOutput.name}' (tritium.openai.embedding_output)`);
  if (output.datatype !== 'FP32' && output.datatype !== 'FP64') {
    throw badMapping(mapping.model, `output '${output.name}' is ${output.datatype}; expected FP32 or FP64`);
  }
  const values = typedView(output) as Float32Array | Float64Array;
  const width = values.length / rows.length;
  if (!Number.isInteger(width) || width === 0) {
    throw badMapping(mapping.model, `output '${output.name}' [${output.shape.join(',')}] does not split into ${rows.length} rows`);
  }
  const vectors = rows.map((_, r) => {
    const row = values.subarray(r * width, (r + 1) * width);
    return row instanceof Float32Array ? row : Float32Array.from(row);
  });
  return { rows, vectors, tokens: givenTokens ?? countedTokens(mapping, embeddings, response) };
}

/** The tokens the pipeline's tokenizer produced: the sum of the tokens output (a mask or a count). */
function countedTokens(mapping: OpenAiMapping, embeddings: EmbeddingsMapping, response: InferResponse): number {
  if (!embeddings.tokensOutput) return 0;
  const tensor = response.outputs.find((o) => o.name === embeddings.tokensOutput!.name);
  if (!tensor) throw badMapping(mapping.model, `its response has no output '${embeddings.tokensOutput.name}' (tritium.openai.tokens_output)`);
  let sum = 0;
  for (const v of typedView(tensor)) sum += Number(v);
  return sum;
}

/** The element count of one row of a tensor whose dims are all fixed; undefined otherwise. */
function fixedSize(ref: TensorRef): number | undefined {
  return ref.dims.every((d) => d >= 0) ? elementCount(ref.dims) : undefined;
}

/** A text input's per-row shape: exactly one string ([1], a variable dim counted as 1). */
function oneElementRow(mapping: OpenAiMapping, ref: TensorRef): number[] {
  const shape = ref.dims.length === 0 ? [1] : ref.dims.map((d) => (d < 0 ? 1 : d));
  if (elementCount(shape) !== 1) throw badMapping(mapping.model, `text input '${ref.name}' [${ref.dims.join(',')}] holds more than one string per row`);
  return shape;
}

const NO_DIMENSIONS = 'This model does not support specifying dimensions.';

function checkDimensions(mapping: OpenAiMapping, embeddings: EmbeddingsMapping, dimensions: number, size: number): void {
  if (dimensions === size) return;
  if (!embeddings.truncate) throw badRequest(NO_DIMENSIONS, 'dimensions');
  if (dimensions > size) throw badRequest(`'dimensions' is ${dimensions}, but model '${mapping.model}' gives ${size}`, 'dimensions');
}

/** The first `dimensions` values, scaled back to unit length (how Matryoshka embeddings are shortened). */
function resized(mapping: OpenAiMapping, embeddings: EmbeddingsMapping, values: Float32Array, dimensions: number): Float32Array {
  checkDimensions(mapping, embeddings, dimensions, values.length);
  if (dimensions === values.length) return values;
  const out = values.slice(0, dimensions);
  let norm = 0;
  for (const v of out) norm += v * v;
  if (norm > 0) {
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < out.length; i++) out[i]! *= scale;
  }
  return out;
}

/** OpenAI's base64 form: the float32 values, little-endian, base64. */
function base64Of(values: Float32Array): string {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
}
