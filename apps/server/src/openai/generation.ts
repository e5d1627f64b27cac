/**
 * `POST /v1/chat/completions` and `POST /v1/completions` on a generating model (decoupled or not),
 * through the same `InferenceServer.inferStream` as KServe's generate_stream: the prompt (or, for a
 * model that takes them, the chat messages as JSON) and the controls the model declares go in;
 * each response's `text_output` is a piece of the answer. Streaming sends each piece as a chunk as
 * it comes (sse.ts, bounded as generate_stream: a client that does not read pushes back on the
 * model); otherwise the pieces are joined into one answer.
 *
 * Usage comes from the model's `num_input_tokens` / `num_output_tokens` outputs (Triton's names)
 * when it has them: the first response's input count, the sum of the output counts.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { tensorFromStrings, typedView, type InferRequest, type InferResponse, type Tensor } from '@tritium/core';
import { decodeBytesElements, elementCount, encodePadValue } from '@tritium/core/tensor';
import type { TransportContext } from '../protocol/context.ts';
import { TransportError } from '../protocol/status.ts';
import { badMapping } from './errors.ts';
import type { ChatMessage, GenerationRequest } from './generation-request.ts';
import type { GenerationControl, OpenAiMapping, TensorRef } from './mapping.ts';
import type { InferCalls } from './infer-calls.ts';
import { modelMapping } from './served-models.ts';
import { SseWriter } from './sse.ts';

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/**
 * The answer's pieces as they come, and the token counts. The text is kept only for an answer sent
 * whole (`keep`), and then at most `keep` bytes of it: past that `overflowed` is set.
 */
class Collected {
  text = '';
  bytes = 0;
  overflowed = false;
  promptTokens = 0;
  completionTokens = 0;
  private counted = false;
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly mapping: OpenAiMapping,
    private readonly keep: number,
  ) {}

  /** Adds one response; returns its text (a UTF-8 sequence cut between responses is joined). */
  add(response: InferResponse): string {
    const generation = this.mapping.generation!;
    const output = response.outputs.find((o) => o.name === generation.textOutput.name);
    let piece = '';
    if (output) for (const element of decodeBytesElements(output.data, output.name)) piece += this.decoder.decode(element, { stream: true });
    const input = generation.inputTokensOutput && countOf(response, generation.inputTokensOutput);
    if (input !== undefined && !this.counted) {
      this.promptTokens = input;
      this.counted = true;
    }
    this.completionTokens += (generation.outputTokensOutput && countOf(response, generation.outputTokensOutput)) ?? 0;
    this.keepText(piece);
    return piece;
  }

  /** What is left of a sequence the last response cut. */
  flush(): string {
    const rest = this.decoder.decode();
    this.keepText(rest);
    return rest;
  }

  private keepText(piece: string): void {
    if (this.keep === 0 || piece === '') return;
    this.bytes += Buffer.byteLength(piece);
    if (this.bytes > this.keep) this.overflowed = true;
    else this.text += piece;
  }

  get usage(): Usage {
    return { prompt_tokens: this.promptTokens, completion_tokens: this.completionTokens, total_tokens: this.promptTokens + this.completionTokens };
  }
}

function countOf(response: InferResponse, ref: TensorRef): number | undefined {
  const tensor = response.outputs.find((o) => o.name === ref.name);
  if (!tensor || elementCount(tensor.shape) === 0) return undefined;
  return Number(typedView(tensor)[0]);
}

/** The inference request a chat or completion request becomes (its id is the completion's). */
export function generationInferRequest(mapping: OpenAiMapping, request: GenerationRequest, id: string, signal: AbortSignal): InferRequest {
  const generation = mapping.generation!;
  const inputs: Tensor[] = [];
  if (request.messages && generation.messagesInput) {
    inputs.push(tensorFromStrings(generation.messagesInput.name, rowShape(mapping, generation.messagesInput), [JSON.stringify(request.messages)]));
  } else if (generation.textInput) {
    const prompt = request.prompt ?? renderChat(request.messages ?? []);
    inputs.push(tensorFromStrings(generation.textInput.name, rowShape(mapping, generation.textInput), [prompt]));
  } else {
    throw badMapping(mapping.model, `completions need a text input (tritium.openai.text_input); it has only a messages input`);
  }
  const values: Partial<Record<GenerationControl, number | boolean>> = {
    stream: request.stream,
    max_tokens: request.maxTokens,
    temperature: request.temperature,
    top_p: request.topP,
    seed: request.seed,
  };
  for (const [name, ref] of generation.controls) {
    const value = values[name];
    if (value === undefined) continue;
    const data = encodePadValue(ref.datatype, String(value));
    inputs.push({ name: ref.name, datatype: ref.datatype, shape: rowShape(mapping, ref), data });
  }
  return { id, model: mapping.model, inputs, signal };
}

/**
 * Chat messages as one prompt, for a model that takes text only: one `role: content` line per
 * message and `assistant:` to answer after. A model that applies its own chat template declares a
 * messages input instead.
 */
export function renderChat(messages: readonly ChatMessage[]): string {
  return `${messages.map((m) => `${m.role}: ${m.content}`).join('\n')}\nassistant:`;
}

/** One element per row, with the batch dimension of 1 when the model batches. */
function rowShape(mapping: OpenAiMapping, ref: TensorRef): number[] {
  const row = ref.dims.length === 0 ? [1] : ref.dims.map((d) => (d < 0 ? 1 : d));
  if (elementCount(row) !== 1) throw badMapping(mapping.model, `input '${ref.name}' [${ref.dims.join(',')}] holds more than one element per row`);
  return mapping.maxBatchSize > 0 ? [1, ...row] : row;
}

/** Runs the request; `onResponse` may return a promise the model's next send waits on (a client that is behind). */
function run(calls: InferCalls, request: InferRequest, onResponse: (r: InferResponse) => void | Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => calls.inferStream(request, { response: onResponse, complete: (error) => (error ? reject(error) : resolve()) }));
}

/** `length` when the model stopped at the request's `max_tokens` (as its token counts tell), else `stop`. */
function finishReason(request: GenerationRequest, collected: Collected): 'stop' | 'length' {
  return request.maxTokens !== undefined && collected.completionTokens >= request.maxTokens ? 'length' : 'stop';
}

/**
 * The non-streaming answer: every piece joined. It is held whole until the model completes, so it
 * may hold at most `--stream-max-queued-size` bytes (what a stream may leave unread); past that the
 * request is cancelled and refused, naming the bound and `stream: true`.
 */
export async function generateOnce(ctx: TransportContext, calls: InferCalls, request: GenerationRequest, signal: AbortSignal): Promise<unknown> {
  const mapping = modelMapping(ctx, request.model, request.api);
  const limit = ctx.streams.maxQueuedBytes;
  const collected = new Collected(mapping, limit);
  const id = `cmpl-${randomUUID()}`;
  const tooLong = new AbortController();
  const inferRequest = generationInferRequest(mapping, request, id, AbortSignal.any([signal, tooLong.signal]));
  try {
    await run(calls, inferRequest, (r) => {
      collected.add(r);
      if (collected.overflowed) tooLong.abort();
    });
  } catch (e) {
    if (!collected.overflowed) throw e;
  }
  collected.flush();
  if (collected.overflowed) {
    throw new TransportError(`the answer is longer than ${limit} bytes, the most held for one client (--stream-max-queued-size); ask with stream: true`, 503);
  }
  const head = { id, created: Math.floor(Date.now() / 1000), model: request.model };
  if (request.api === 'chat') {
    return {
      ...head,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: collected.text }, logprobs: null, finish_reason: finishReason(request, collected) }],
      usage: collected.usage,
    };
  }
  return { ...head, object: 'text_completion', choices: [{ index: 0, text: collected.text, logprobs: null, finish_reason: finishReason(request, collected) }], usage: collected.usage };
}

/**
 * The streaming answer as server-sent events: for chat a first chunk with the role, then one chunk
 * per piece, a last chunk with `finish_reason`, the usage chunk when `stream_options.include_usage`
 * asks for it, and `[DONE]`. The model is found before anything is written, so an unknown model is
 * an ordinary error reply.
 */
export async function generateStream(ctx: TransportContext, calls: InferCalls, request: GenerationRequest, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const mapping = modelMapping(ctx, request.model, request.api);
  const id = `cmpl-${randomUUID()}`;
  const inferRequest = generationInferRequest(mapping, request, id, signal);
  const collected = new Collected(mapping, 0);
  const sse = new SseWriter(res, ctx.streams);
  const created = Math.floor(Date.now() / 1000);
  const chat = request.api === 'chat';
  const usage = request.includeUsage ? { usage: null } : {};
  const chunk = (choice: Record<string, unknown>) => ({ id, object: chat ? 'chat.completion.chunk' : 'text_completion', created, model: request.model, choices: [choice], ...usage });
  const piece = (text: string, finish: string | null) =>
    chunk(chat ? { index: 0, delta: finish ? {} : { content: text }, logprobs: null, finish_reason: finish } : { index: 0, text, logprobs: null, finish_reason: finish });
  // The stream (and chat's first chunk, with the role) begins with the first response, so a request
  // the model refuses at once is answered with an ordinary error status.
  const begin = () => {
    if (chat && !sse.started) sse.event(chunk({ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }));
  };
  try {
    await run(calls, inferRequest, (r) => {
      begin();
      const text = collected.add(r);
      return text === '' ? undefined : sse.event(piece(text, null));
    });
  } catch (e) {
    if (!sse.started) throw e;
    sse.fail(e);
    return;
  }
  begin();
  const rest = collected.flush();
  if (rest !== '') sse.event(piece(rest, null));
  sse.event(piece('', finishReason(request, collected)));
  if (request.includeUsage) sse.event({ id, object: chat ? 'chat.completion.chunk' : 'text_completion', created, model: request.model, choices: [], usage: collected.usage });
  sse.done();
}
