/**
 * The transports and the OpenAI layer alone: a TritiumServer whose InferenceServerApi answers
 * embedding_ensemble at once on the main thread (a fixed 256-float embedding and an 8-token mask per
 * row, only the outputs asked for), so the CPU this process spends per request is what routing,
 * parsing, the OpenAI mapping and serializing cost: no batcher, no worker, no model. Prints
 * `PORT <n>` once it listens. Started by openai.bench.ts.
 */
import { InferError, type InferenceServerApi, type InferRequest, type InferResponse, type ModelConfig, type Tensor } from '@tritium/core';
import { createContainer, defaultServeOptions, TOKENS, TritonLog, type TritiumServer } from '@tritium/server';

const HIDDEN = 256;
const TOKENS_PER_ROW = 8;

const config = {
  name: 'embedding_ensemble',
  platform: 'ensemble',
  max_batch_size: 256,
  input: [{ name: 'TEXT', data_type: 'TYPE_STRING', dims: [1] }],
  output: [
    { name: 'EMBEDDING', data_type: 'TYPE_FP32', dims: [HIDDEN] },
    { name: 'ATTENTION_MASK', data_type: 'TYPE_INT64', dims: [-1] },
  ],
  parameters: { 'tritium.openai': { string_value: 'embeddings' } },
} as unknown as ModelConfig;

const vector = Float32Array.from({ length: HIDDEN }, (_, i) => Math.sin(i + 1) / 11.3);

function rowsOf(rows: number): Tensor[] {
  const embedding = new Float32Array(rows * HIDDEN);
  for (let r = 0; r < rows; r++) embedding.set(vector, r * HIDDEN);
  return [
    { name: 'EMBEDDING', datatype: 'FP32', shape: [rows, HIDDEN], data: new Uint8Array(embedding.buffer) },
    { name: 'ATTENTION_MASK', datatype: 'INT64', shape: [rows, TOKENS_PER_ROW], data: new Uint8Array(new BigInt64Array(rows * TOKENS_PER_ROW).fill(1n).buffer) },
  ];
}

class EmbeddingAnswers implements InferenceServerApi {
  isLive = () => true;
  isReady = () => true;
  serverMetadata = () => ({ name: 'triton', version: '0', extensions: [] });
  modelReady = (name: string) => name === config.name;
  modelMetadata = () => ({ name: config.name, versions: ['1'], platform: 'ensemble', inputs: [], outputs: [] });
  modelConfig(name: string): ModelConfig {
    if (name !== config.name) throw new InferError('NOT_FOUND', `Request for unknown model: '${name}' is not found`);
    return config;
  }
  isDecoupled = () => false;
  async infer(r: InferRequest): Promise<InferResponse> {
    const outputs = rowsOf(r.inputs[0]!.shape[0]!);
    const asked = r.outputs?.map((o) => o.name);
    return { id: r.id, model: r.model, version: 1, outputs: asked?.length ? outputs.filter((o) => asked.includes(o.name)) : outputs };
  }
  inferStream(): void {}
  statistics = () => [];
  metrics = () => [];
  repositoryIndex = async () => [{ name: config.name, version: '1', state: 'READY' as const, reason: '' }];
  loadModel = async () => {};
  unloadModel = async () => {};
  stop = async () => {};
}

const options = { ...defaultServeOptions(), modelRepositories: ['unused'], httpPort: 0, httpAddress: '127.0.0.1', allowGrpc: false, allowMetrics: false };
const log = new TritonLog({ info: false, warning: true, error: true, verbose: 0, format: 'default' });
const api = new EmbeddingAnswers();
const server = createContainer({ options, log, inferenceServer: () => api }).get<TritiumServer>(TOKENS.TritiumServer);
const ports = await server.start();
process.stdout.write(`PORT ${ports.http}\n`);
process.once('SIGTERM', () => void server.stop().then(() => process.exit(0)));
