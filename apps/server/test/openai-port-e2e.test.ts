/**
 * The OpenAI routes on their own listener (`--openai-port`) of a real `tritium serve` started with
 * mutual TLS on HTTP (`--http-use-ssl-mutual`): that listener takes the same TLS settings as the
 * HTTP port (a client must trust the server's CA and present a certificate signed by
 * `--http-root-cert`; plaintext is refused). Through it, an embeddings `input` longer than the
 * model's max_batch_size is split into several requests and answered whole, in order.
 *
 * The model (a sandboxed model.ts) embeds a text as [its length, its first character's code, the
 * rows of the request it arrived in], and counts its words as its tokens.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestPki, type TestPki } from './support/certificates.ts';
import { startServeProcess, type ServeProcess } from './support/serve-process.ts';

const MAX_BATCH_SIZE = 2;

const CONFIG = `name: "text_stats"
backend: "python"
max_batch_size: ${MAX_BATCH_SIZE}
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [
  { name: "EMBEDDING" data_type: TYPE_FP32 dims: [ 3 ] },
  { name: "TOKENS" data_type: TYPE_INT32 dims: [ 1 ] }
]
instance_group [ { count: 1 kind: KIND_CPU } ]
parameters { key: "tritium.openai" value: { string_value: "embeddings" } }
parameters { key: "tritium.openai.tokens_output" value: { string_value: "TOKENS" } }
`;

const MODEL = `import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';

export default class TritonPythonModel {
  execute(requests: InferenceRequest[]): InferenceResponse[] {
    return requests.map((request) => {
      const texts = getInputTensorByName(request, 'TEXT')!.strings();
      const rows = texts.length;
      const embedding = texts.flatMap((t) => [t.length, t.charCodeAt(0), rows]);
      const tokens = texts.map((t) => t.split(' ').length);
      return new InferenceResponse([new Tensor('EMBEDDING', embedding, [rows, 3], 'FP32'), new Tensor('TOKENS', tokens, [rows, 1], 'INT32')]);
    });
  }
}
`;

interface Reply {
  status: number;
  json: Record<string, unknown>;
}

interface ClientTls {
  ca?: string;
  cert?: string;
  key?: string;
}

/** A POST over HTTPS to 127.0.0.1:`port` with the given trust and client certificate. */
function post(port: number, route: string, body: unknown, tls: ClientTls): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: route, method: 'POST', headers: { 'content-type': 'application/json' }, ...tls }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

let pki: TestPki;
let repo: string;
let server: ServeProcess | undefined;
let openaiPort: number;
let metricsPort: number;
let trusted: ClientTls;

beforeAll(async () => {
  pki = makeTestPki();
  const f = pki.files;
  trusted = { ca: readFileSync(f.caCert, 'utf8'), cert: readFileSync(f.clientCert, 'utf8'), key: readFileSync(f.clientKey, 'utf8') };
  repo = mkdtempSync(path.join(tmpdir(), 'tritium-openai-port-'));
  mkdirSync(path.join(repo, 'text_stats', '1'), { recursive: true });
  writeFileSync(path.join(repo, 'text_stats', 'config.pbtxt'), CONFIG);
  writeFileSync(path.join(repo, 'text_stats', '1', 'model.ts'), MODEL);
  server = startServeProcess([
    '--model-repository', repo,
    '--openai-port=0', '--openai-address=127.0.0.1',
    '--http-use-ssl-mutual=true', `--http-server-cert=${f.serverCert}`, `--http-server-key=${f.serverKey}`, `--http-root-cert=${f.caCert}`,
  ]);
  ({ metrics: metricsPort } = await server.started);
  for (let i = 0; i < 400 && !openaiPort; i++) {
    openaiPort = Number(/Started OpenAI-Compatible Service at [^:\s]+:(\d+)/.exec(server.log())?.[1] ?? 0);
    if (!openaiPort) await new Promise((r) => setTimeout(r, 25));
  }
  if (!openaiPort) throw new Error(`no OpenAI listener started:\n${server.log()}`);
}, 120_000);

afterAll(async () => {
  await server?.stop(5000);
  if (repo) rmSync(repo, { recursive: true, force: true });
  pki?.remove();
});

describe('--openai-port with --http-use-ssl-mutual', () => {
  it('serves HTTPS to a client that trusts the CA and presents a certificate signed by --http-root-cert', async () => {
    const a = await post(openaiPort, '/v1/embeddings', { model: 'text_stats', input: 'hello' }, trusted);
    expect(a.status).toBe(200);
    expect(a.json['data']).toEqual([{ object: 'embedding', index: 0, embedding: [5, 'h'.charCodeAt(0), 1] }]);
  });

  it('refuses plaintext, a client that does not trust the CA, and clients without a certificate from that CA', async () => {
    const plaintext = await fetch(`http://127.0.0.1:${openaiPort}/v1/models`).then(
      (r) => `status ${r.status}`,
      (e: unknown) => e,
    );
    expect(plaintext).toBeInstanceOf(Error);
    const body = { model: 'text_stats', input: 'x' };
    await expect(post(openaiPort, '/v1/embeddings', body, { cert: trusted.cert, key: trusted.key })).rejects.toThrow(/self.signed|unable to verify|certificate/i);
    await expect(post(openaiPort, '/v1/embeddings', body, { ca: trusted.ca })).rejects.toThrow();
    const f = pki.files;
    const stranger = { ca: trusted.ca, cert: readFileSync(f.strangerCert, 'utf8'), key: readFileSync(f.strangerKey, 'utf8') };
    await expect(post(openaiPort, '/v1/embeddings', body, stranger)).rejects.toThrow();
  });
});

describe('/v1/embeddings with more inputs than max_batch_size', () => {
  it('splits them into requests of at most max_batch_size rows and answers every embedding in order', async () => {
    const before = await inferenceCounts();
    const texts = ['a', 'bb cc', 'ddd', 'eeee ff gg', 'fffff'];
    const a = await post(openaiPort, '/v1/embeddings', { model: 'text_stats', input: texts, encoding_format: 'float' }, trusted);
    expect(a.status).toBe(200);
    const data = a.json['data'] as { object: string; index: number; embedding: number[] }[];
    expect(data.map((d) => d.index)).toEqual([0, 1, 2, 3, 4]);
    expect(data.map((d) => d.embedding.slice(0, 2))).toEqual(texts.map((t) => [t.length, t.charCodeAt(0)]));
    // Each text arrived in a request of at most max_batch_size rows.
    for (const d of data) expect(d.embedding[2]).toBeLessThanOrEqual(MAX_BATCH_SIZE);
    // Words counted by the model, summed over every request.
    expect(a.json['usage']).toEqual({ prompt_tokens: 8, total_tokens: 8 });
    const after = await inferenceCounts();
    expect(after.requests - before.requests).toBe(Math.ceil(texts.length / MAX_BATCH_SIZE));
    expect(after.inferences - before.inferences).toBe(texts.length);
  });
});

/** The model's successful requests and inferences (rows), from the metrics port. */
async function inferenceCounts(): Promise<{ requests: number; inferences: number }> {
  const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
  const value = (metric: string): number => Number(new RegExp(`^${metric}\\{model="text_stats",version="1"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return { requests: value('nv_inference_request_success'), inferences: value('nv_inference_count') };
}
