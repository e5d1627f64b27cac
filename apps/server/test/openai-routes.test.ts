/**
 * The OpenAI routes on the HTTP transport, in process, over identity models (worker threads): the
 * mapping's defaults and failures, OpenAI's error format and status for each refusal, Triton's
 * OpenAI frontend's wording for the restricted APIs and the request-size bound. The example
 * pipeline through a real `tritium serve` and the official SDK: tools/example-setup/test/openai.test.ts.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServeFlags } from '../src/cli/flags.ts';
import { parseTraceFlags } from '../src/tracing/trace-config.ts';
import { startTestServer, type TestServer } from './support/start-server.ts';

const identity = (name: string, type: string, parameters: Record<string, string>, maxBatchSize = 8) => `name: "${name}"
backend: "identity"
max_batch_size: ${maxBatchSize}
input [ { name: "INPUT0" data_type: ${type} dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: ${type} dims: [ 1 ] } ]
${Object.entries(parameters)
  .map(([k, v]) => `parameters { key: "${k}" value: { string_value: "${v}" } }`)
  .join('\n')}
`;

const MODELS: Record<string, string> = {
  // Not decoupled: its one response (the prompt echoed) is the whole answer.
  echo: identity('echo', 'TYPE_STRING', { 'tritium.openai': 'chat,completions', 'tritium.openai.text_input': 'INPUT0', 'tritium.openai.text_output': 'OUTPUT0' }),
  // A mapping that cannot work: its text input is FP32.
  vectors: identity('vectors', 'TYPE_FP32', { 'tritium.openai': 'embeddings', 'tritium.openai.text_input': 'INPUT0', 'tritium.openai.embedding_output': 'OUTPUT0' }),
  wrong_api: identity('wrong_api', 'TYPE_STRING', { 'tritium.openai': 'speech' }),
  plain: identity('plain', 'TYPE_FP32', {}),
};

function repository(): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-openai-'));
  for (const [name, config] of Object.entries(MODELS)) {
    mkdirSync(path.join(dir, name, '1'), { recursive: true });
    writeFileSync(path.join(dir, name, 'config.pbtxt'), config);
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

interface Answer {
  status: number;
  json: { error?: { message: string; type: string; code: string | null; param: string | null } } & Record<string, unknown>;
  text: string;
}

async function call(s: TestServer, method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`http://${s.httpUrl}${route}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: Answer['json'] = {};
  try {
    json = JSON.parse(text) as Answer['json'];
  } catch {
    // A stream: the test reads `text`.
  }
  return { status: res.status, json, text };
}

describe('OpenAI routes on the HTTP port', () => {
  let s: TestServer;
  let repo: { dir: string; remove(): void };
  beforeAll(async () => {
    repo = repository();
    s = await startTestServer({ modelRepositories: [repo.dir], httpMaxJsonSize: 2048, strictReadiness: false, exitOnError: false });
  });
  afterAll(async () => {
    await s?.close();
    repo?.remove();
  });

  it('answers a completion from a model that is not decoupled (one response is the answer)', async () => {
    const a = await call(s, 'POST', '/v1/completions', { model: 'echo', prompt: 'say this back' });
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ object: 'text_completion', model: 'echo', choices: [{ index: 0, text: 'say this back', finish_reason: 'stop' }] });
    expect(a.json['id']).toMatch(/^cmpl-/);
  });

  it("renders chat messages as 'role: content' lines for a model without a messages input", async () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Hi ' }, { type: 'text', text: 'there' }] },
    ];
    const a = await call(s, 'POST', '/v1/chat/completions', { model: 'echo', messages });
    expect(a.json).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'system: Be brief.\nuser: Hi there\nassistant:' } }] });
    const streamed = await call(s, 'POST', '/v1/chat/completions', { model: 'echo', messages, stream: true });
    const events = streamed.text.split('\n\n').filter((e) => e !== '');
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(events.slice(0, -1).map((e) => JSON.parse(e.slice(6)) as unknown)).toMatchObject([
      { object: 'chat.completion.chunk', choices: [{ delta: { role: 'assistant', content: '' } }] },
      { choices: [{ delta: { content: 'system: Be brief.\nuser: Hi there\nassistant:' }, finish_reason: null }] },
      { choices: [{ delta: {}, finish_reason: 'stop' }] },
    ]);
  });

  it('lists only the models that declare a mapping that works, and retrieves one', async () => {
    const list = await call(s, 'GET', '/v1/models');
    expect(list.status).toBe(200);
    expect((list.json['data'] as { id: string }[]).map((m) => m.id)).toEqual(['echo']);
    expect((await call(s, 'GET', '/v1/models/echo')).json).toMatchObject({ id: 'echo', object: 'model', owned_by: 'tritium' });
    const plain = await call(s, 'GET', '/v1/models/plain');
    expect(plain.status).toBe(404);
    expect(plain.json.error).toEqual({ message: 'Unknown model: plain', type: 'invalid_request_error', param: 'model', code: 'model_not_found' });
  });

  it('answers a mapping that cannot work with a server error naming the parameter', async () => {
    const a = await call(s, 'POST', '/v1/embeddings', { model: 'vectors', input: 'x' });
    expect(a.status).toBe(500);
    expect(a.json.error).toMatchObject({
      type: 'server_error',
      message: "model 'vectors' has an OpenAI mapping that cannot serve this request: input 'INPUT0' (tritium.openai.text_input) is TYPE_FP32; expected BYTES",
    });
    const api = await call(s, 'POST', '/v1/embeddings', { model: 'wrong_api', input: 'x' });
    expect(api.status).toBe(500);
    expect(api.json.error!.message).toContain("tritium.openai 'speech' names 'speech' (expected embeddings, chat or completions");
    expect(s.logs()).toContain("model 'vectors' has an OpenAI mapping that cannot serve this request");
  });

  it('refuses bad requests with 400 naming the field', async () => {
    const cases: [string, unknown, string, string | null][] = [
      ['/v1/embeddings', { input: 'x' }, "you must provide a model parameter ('model')", 'model'],
      ['/v1/embeddings', { model: 'echo', input: 'x', encoding_format: 'int8' }, "'encoding_format' must be 'float' or 'base64', got \"int8\"", 'encoding_format'],
      ['/v1/embeddings', { model: 'echo', input: [1, 'a'] }, "'input[1]' must be a token id (a non-negative integer), got \"a\"", 'input[1]'],
      ['/v1/embeddings', { model: 'echo', input: [] }, "'input' cannot be an empty array", 'input'],
      ['/v1/embeddings', { model: 'echo', input: 'x', dimensions: 0 }, "'dimensions' must be a positive integer, got 0", 'dimensions'],
      ['/v1/completions', { model: 'echo', prompt: ['a', 'b'] }, 'only single string input is supported', 'prompt'],
      ['/v1/completions', { model: 'echo', prompt: '' }, 'prompt must be non-empty', 'prompt'],
      ['/v1/completions', { model: 'echo', prompt: 'x', suffix: 'y' }, 'suffix is not currently supported', 'suffix'],
      ['/v1/completions', { model: 'echo', prompt: 'x', stream_options: { include_usage: true } }, '`stream_options` can only be used when `stream` is True', 'stream_options'],
      ['/v1/chat/completions', { model: 'echo', messages: [{ role: 'user', content: 'x' }], tools: [] }, "tool calling is not supported by this server ('tools')", 'tools'],
      ['/v1/chat/completions', { model: 'echo', messages: [{ role: 'robot', content: 'x' }] }, "'messages[0].role' must be one of system, developer, user, assistant, tool, got \"robot\"", 'messages[0].role'],
      ['/v1/chat/completions', { model: 'echo', messages: [{ role: 'user', content: 'x' }], temperature: 3 }, "'temperature' must be a number from 0 to 2, got 3", 'temperature'],
      ['/v1/embeddings', { model: 'echo', input: 'x' }, "model 'echo' serves chat completions and completions, not embeddings (its config's tritium.openai)", 'model'],
    ];
    for (const [route, body, message, param] of cases) {
      const a = await call(s, 'POST', route, body);
      expect(a.status, message).toBe(400);
      expect(a.json.error, message).toEqual({ message, type: 'invalid_request_error', param, code: null });
    }
    const broken = await call(s, 'POST', '/v1/embeddings', '{"model": ');
    expect(broken.status).toBe(400);
    expect(broken.json.error!.message).toContain('failed to parse the request JSON buffer');
  });

  it("refuses a body over the JSON bound with Triton's OpenAI frontend's words, and unknown routes", async () => {
    const big = await call(s, 'POST', '/v1/embeddings', { model: 'echo', input: 'x'.repeat(4000) });
    expect(big.status).toBe(413);
    expect(big.json.error).toEqual({
      message: 'Request content size exceeds the maximum allowed input size of 2048 bytes. Use --http-max-json-size to increase the limit.',
      type: 'invalid_request_error',
      param: null,
      code: 'content_too_large',
    });
    const unknown = await call(s, 'POST', '/v1/images/generations', {});
    expect(unknown.status).toBe(404);
    expect(unknown.json.error!.message).toBe('Invalid URL (POST /v1/images/generations)');
    const method = await call(s, 'GET', '/v1/embeddings');
    expect(method.status).toBe(405);
    // The KServe routes beside them are untouched.
    expect((await call(s, 'GET', '/v2/health/live')).status).toBe(200);
  });
});

describe('OpenAI routes under --http-restricted-api', () => {
  let s: TestServer;
  let repo: { dir: string; remove(): void };
  beforeAll(async () => {
    repo = repository();
    const o = parseServeFlags(['--model-repository=unused', '--http-restricted-api=inference:infer-key=letmein', '--http-restricted-api=model-repository:admin-key=s3cret']);
    s = await startTestServer({ modelRepositories: [repo.dir], httpRestrictedApi: o.httpRestrictedApi, strictReadiness: false, exitOnError: false });
  });
  afterAll(async () => {
    await s?.close();
    repo?.remove();
  });

  it("gates inference and model listing by category, answering as Triton's OpenAI frontend (401)", async () => {
    const refused = await call(s, 'POST', '/v1/completions', { model: 'echo', prompt: 'x' });
    expect(refused.status).toBe(401);
    expect(refused.json.error).toEqual({ message: "This API is restricted, expecting header 'infer-key' with valid value", type: 'authentication_error', param: null, code: 'invalid_auth' });
    expect((await call(s, 'POST', '/v1/completions', { model: 'echo', prompt: 'x' }, { 'infer-key': 'wrong' })).status).toBe(401);
    expect((await call(s, 'POST', '/v1/completions', { model: 'echo', prompt: 'x' }, { 'infer-key': 'letmein' })).status).toBe(200);
    const models = await call(s, 'GET', '/v1/models', undefined, { 'infer-key': 'letmein' });
    expect(models.json.error!.message).toBe("This API is restricted, expecting header 'admin-key' with valid value");
    expect((await call(s, 'GET', '/v1/models', undefined, { 'admin-key': 's3cret' })).status).toBe(200);
  });
});

describe('OpenAI routes: what the HTTP transport adds to each inference request', () => {
  let s: TestServer | undefined;
  let repo: { dir: string; remove(): void };
  const traceDir = mkdtempSync(path.join(os.tmpdir(), 'tritium-openai-trace-'));
  beforeAll(async () => {
    repo = repository();
    s = await startTestServer({
      modelRepositories: [repo.dir],
      strictReadiness: false,
      exitOnError: false,
      headerForward: { http: /^(x-|priority$)/ },
      trace: parseTraceFlags({ config: ['level=TIMESTAMPS', 'rate=1', `triton,file=${path.join(traceDir, 'trace.json')}`] }),
    });
  });
  afterAll(async () => {
    await s?.close();
    repo?.remove();
    rmSync(traceDir, { recursive: true, force: true });
  });

  it('forwards headers matching --http-header-forward-pattern (a reserved one refused) and traces the request', async () => {
    expect((await call(s!, 'POST', '/v1/completions', { model: 'echo', prompt: 'traced' }, { 'x-tenant': 'blue' })).status).toBe(200);
    const reserved = await call(s!, 'POST', '/v1/completions', { model: 'echo', prompt: 'x' }, { priority: '1' });
    expect(reserved.status).toBe(400);
    expect(reserved.json.error!.message).toBe("Header 'priority' is reserved for Triton usage and cannot be forwarded.");
    await s!.close();
    s = undefined;
    const entries = JSON.parse(readFileSync(path.join(traceDir, 'trace.json'), 'utf8')) as { model_name?: string; request_id?: string; timestamps?: { name: string }[] }[];
    const head = entries.find((e) => e.model_name === 'echo');
    expect(head?.request_id).toMatch(/^cmpl-/);
    const names = entries.flatMap((e) => e.timestamps ?? []).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'REQUEST_END']));
  });
});
