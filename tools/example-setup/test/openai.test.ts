/**
 * The example's embedding pipeline (embedding_ensemble: the example tokenizer -> embedding_encoder
 * -> mean_pooling) and the generating echo_llm (examples/model_repository) served by a real
 * `tritium serve` to the official `openai` SDK, with an API key required and the OpenAI routes also
 * on their own port (--openai-port). The same embeddings are asked of KServe v2 on the same server.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpInferenceServerClient, InferInput, InferRequestedOutput } from '@tritium/client';
import { DEFAULT_REPOSITORY, setupExample, startTritium, type ServeProcess } from '../src/index.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const KEY = 'sk-test-4f1c2b';
const TEXTS = ['hello world', 'A cat sat on the mat.', 'Stock markets fell sharply today.'];

describe('OpenAI SDK against tritium serve', () => {
  let server: ServeProcess;
  let openaiPort: string;
  let client: OpenAI;
  let triton: HttpInferenceServerClient;

  beforeAll(async () => {
    setupExample();
    const models = ['embedding_ensemble', 'embedding_ids', 'echo_llm'].flatMap((m) => ['--load-model', m]);
    server = await startTritium(DEFAULT_REPOSITORY, {
      args: [
        '--model-repository', path.join(ROOT, 'examples/model_repository'),
        '--model-control-mode', 'explicit', ...models,
        '--openai-port', '0', '--openai-address', '127.0.0.1',
        '--openai-api-key', KEY,
      ],
    });
    for (let i = 0; i < 200 && !openaiPort; i++) {
      openaiPort = /Started OpenAI-Compatible Service at [^:\s]+:(\d+)/.exec(server.logs())?.[1] ?? '';
      if (!openaiPort) await new Promise((r) => setTimeout(r, 25));
    }
    client = new OpenAI({ apiKey: KEY, baseURL: `http://${server.httpUrl}/v1`, maxRetries: 0 });
    triton = new HttpInferenceServerClient(server.httpUrl);
  });
  afterAll(async () => {
    triton?.close();
    await server?.stop();
  });

  /** The same texts through KServe v2 on the same server. */
  async function kserveEmbeddings(texts: string[], binary: boolean): Promise<Float32Array[]> {
    const input = new InferInput('TEXT', [texts.length, 1], 'BYTES').setData(texts);
    const result = await triton.infer('embedding_ensemble', [input], { outputs: [new InferRequestedOutput('EMBEDDING', { binary })] });
    const values = result.asTypedArray('EMBEDDING', 'FP32');
    return texts.map((_, i) => values.slice(i * 256, (i + 1) * 256));
  }

  it('embeds a string as floats of unit length, counting the tokenizer output as usage', async () => {
    const res = await client.embeddings.create({ model: 'embedding_ensemble', input: 'hello world', encoding_format: 'float' });
    expect(res.object).toBe('list');
    expect(res.model).toBe('embedding_ensemble');
    expect(res.data).toHaveLength(1);
    const embedding = res.data[0]!.embedding;
    expect(embedding).toHaveLength(256);
    expect(Math.hypot(...embedding)).toBeCloseTo(1, 5);
    // [CLS] hello world [SEP]
    expect(res.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
  });

  it('answers exactly what KServe v2 answers for the same texts (float, base64 and the SDK default)', async () => {
    const [json, binary] = await Promise.all([kserveEmbeddings(TEXTS, false), kserveEmbeddings(TEXTS, true)]);
    const float = await client.embeddings.create({ model: 'embedding_ensemble', input: TEXTS, encoding_format: 'float' });
    const base64 = await client.embeddings.create({ model: 'embedding_ensemble', input: TEXTS, encoding_format: 'base64' });
    // Without encoding_format the SDK asks for base64 and decodes it to numbers itself.
    const sdkDefault = await client.embeddings.create({ model: 'embedding_ensemble', input: TEXTS });
    TEXTS.forEach((_, i) => {
      expect(Float32Array.from(float.data[i]!.embedding)).toEqual(json[i]);
      expect(binary[i]).toEqual(json[i]);
      const raw = Buffer.from(base64.data[i]!.embedding as unknown as string, 'base64');
      expect(new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4)).toEqual(json[i]);
      expect(Float32Array.from(sdkDefault.data[i]!.embedding)).toEqual(json[i]);
      expect(float.data[i]!.index).toBe(i);
    });
    expect(float.usage.prompt_tokens).toBeGreaterThan(TEXTS.length * 3);
  });

  it('sends an input array as the rows of one request: one execution of the pipeline', async () => {
    const count = async () => (await triton.getInferenceStatistics('embedding_ensemble')).model_stats[0]!;
    const before = await count();
    await client.embeddings.create({ model: 'embedding_ensemble', input: TEXTS, encoding_format: 'float' });
    const after = await count();
    expect(Number(after.inference_count) - Number(before.inference_count)).toBe(TEXTS.length);
    expect(Number(after.execution_count) - Number(before.execution_count)).toBe(1);
  });

  it('embeds token ids (through embedding_ids) exactly as the text they encode', async () => {
    const [text] = await kserveEmbeddings(['hello world'], true);
    const res = await client.embeddings.create({ model: 'embedding_ensemble', input: [[101, 7592, 2088, 102], [101, 7592, 102]], encoding_format: 'float' });
    expect(Float32Array.from(res.data[0]!.embedding)).toEqual(text);
    expect(res.data[1]!.embedding).not.toEqual(res.data[0]!.embedding);
    expect(res.usage.prompt_tokens).toBe(7);
  });

  it("answers OpenAI's errors with their status codes", async () => {
    const failure = (p: Promise<unknown>) => p.then(() => expect.unreachable('resolved'), (e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    const unknown = await failure(client.embeddings.create({ model: 'nope', input: 'x' }));
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown.error).toMatchObject({ message: 'Unknown model: nope', type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
    const dims = await failure(client.embeddings.create({ model: 'embedding_ensemble', input: 'x', dimensions: 64 }));
    expect(dims).toBeInstanceOf(OpenAI.BadRequestError);
    expect(dims.message).toContain('This model does not support specifying dimensions.');
    const empty = await failure(client.embeddings.create({ model: 'embedding_ensemble', input: ['a', ''] }));
    expect(empty.status).toBe(400);
    expect(empty.error).toMatchObject({ param: 'input[1]', message: "'input[1]' cannot be an empty string" });
    const tooMany = await failure(client.embeddings.create({ model: 'embedding_ensemble', input: new Array<string>(2049).fill('x') }));
    expect(tooMany.message).toContain("'input' has 2049 items; at most 2048");
    const tooLong = await failure(client.embeddings.create({ model: 'embedding_ensemble', input: [new Array<number>(513).fill(1000)] }));
    expect(tooLong.message).toContain("'input[0]' has 513 tokens; model 'embedding_ensemble' takes at most 512");
    const wrongApi = await failure(client.chat.completions.create({ model: 'embedding_ensemble', messages: [{ role: 'user', content: 'hi' }] }));
    expect(wrongApi.status).toBe(400);
    expect(wrongApi.message).toContain("model 'embedding_ensemble' serves embeddings, not chat completions");
    // A model without an OpenAI mapping is not served on these routes.
    const unmapped = await failure(client.embeddings.create({ model: 'embedding_ids', input: 'x' }));
    expect(unmapped.status).toBe(404);
  });

  it('refuses a request without the API key or with a wrong one, and serves it with the key', async () => {
    const wrong = new OpenAI({ apiKey: 'sk-wrong', baseURL: `http://${server.httpUrl}/v1`, maxRetries: 0 });
    const refused = await wrong.models.list().then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'invalid_api_key', message: 'Incorrect API key provided.' });
    const missing = await fetch(`http://${server.httpUrl}/v1/embeddings`, { method: 'POST', body: JSON.stringify({ model: 'embedding_ensemble', input: 'x' }) });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('missing_api_key');
    // KServe v2 routes do not ask for it.
    expect((await fetch(`http://${server.httpUrl}/v2/health/ready`)).status).toBe(200);
    const ids = (await client.models.list()).data.map((m) => m.id);
    expect(ids).toEqual(['echo_llm', 'embedding_ensemble']);
    expect(await client.models.retrieve('echo_llm')).toMatchObject({ id: 'echo_llm', object: 'model', owned_by: 'tritium' });
  });

  it('serves the OpenAI routes on --openai-port, and only them', async () => {
    const own = new OpenAI({ apiKey: KEY, baseURL: `http://127.0.0.1:${openaiPort}/v1`, maxRetries: 0 });
    const res = await own.embeddings.create({ model: 'embedding_ensemble', input: 'hello world', encoding_format: 'float' });
    expect(Float32Array.from(res.data[0]!.embedding)).toEqual((await kserveEmbeddings(['hello world'], true))[0]);
    const kserveThere = await fetch(`http://127.0.0.1:${openaiPort}/v2/health/ready`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(kserveThere.status).toBe(404);
    expect(((await kserveThere.json()) as { error: { message: string } }).error.message).toBe('Invalid URL (GET /v2/health/ready)');
  });

  it("serves a shorter 'dimensions' by truncating and renormalizing where the config allows it", async () => {
    const [full] = await kserveEmbeddings(['hello world'], true);
    // The same ensemble reloaded with tritium.openai.dimensions: truncate (a config override).
    const config = (await triton.getModelConfig('embedding_ensemble')) as { parameters: Record<string, { string_value: string }> };
    config.parameters['tritium.openai.dimensions'] = { string_value: 'truncate' };
    await triton.loadModel('embedding_ensemble', { config: JSON.stringify(config) });
    try {
      const res = await client.embeddings.create({ model: 'embedding_ensemble', input: 'hello world', dimensions: 64, encoding_format: 'float' });
      const short = res.data[0]!.embedding;
      expect(short).toHaveLength(64);
      const norm = Math.hypot(...full!.slice(0, 64));
      short.forEach((v, i) => expect(v).toBeCloseTo(full![i]! / norm, 6));
      const tooMany = await client.embeddings.create({ model: 'embedding_ensemble', input: 'x', dimensions: 300 }).then(() => undefined, (e: unknown) => e as Error);
      expect(tooMany?.message).toContain("'dimensions' is 300, but model 'embedding_ensemble' gives 256");
    } finally {
      delete config.parameters['tritium.openai.dimensions'];
      await triton.loadModel('embedding_ensemble', { config: JSON.stringify(config) });
    }
  });

  it('streams a chat completion from the decoupled echo_llm, with usage at the end', async () => {
    const stream = await client.chat.completions.create({
      model: 'echo_llm',
      messages: [
        { role: 'system', content: 'Repeat after the user.' },
        { role: 'user', content: 'the quick brown fox' },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    const finish: (string | null)[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) deltas.push(chunk.choices[0].delta.content);
      if (chunk.choices[0]) finish.push(chunk.choices[0].finish_reason);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas).toEqual(['the', ' quick', ' brown', ' fox']);
    expect(finish.at(-1)).toBe('stop');
    expect(usage).toEqual({ prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 });
  });

  it('answers chat and completions without streaming, stopping at max_tokens', async () => {
    const chat = await client.chat.completions.create({ model: 'echo_llm', messages: [{ role: 'user', content: 'one two three' }] });
    expect(chat.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'one two three' });
    expect(chat.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 3 });
    const completion = await client.completions.create({ model: 'echo_llm', prompt: 'alpha beta gamma delta', max_tokens: 2 });
    expect(completion.choices[0]).toMatchObject({ text: 'alpha beta', finish_reason: 'length' });
    const streamed: string[] = [];
    for await (const chunk of await client.completions.create({ model: 'echo_llm', prompt: 'alpha beta', stream: true })) streamed.push(chunk.choices[0]?.text ?? '');
    expect(streamed.join('')).toBe('alpha beta');
  });

  it('ends a stream the model fails with an error the SDK raises', async () => {
    const stream = await client.chat.completions.create({ model: 'echo_llm', messages: [{ role: 'user', content: 'one two FAIL three' }], stream: true });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
    })().then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain('the prompt asked to fail after 2 words');
    expect(seen.join('')).toBe('one two');
    const refused = await client.chat.completions.create({ model: 'echo_llm', messages: [{ role: 'user', content: 'x' }], n: 2 }).then(() => undefined, (e: unknown) => e);
    expect((refused as Error).message).toContain('Received n=2, but only single choice (n=1) is currently supported');
  });
});
