/**
 * (d) The pattern the seed argues against: a separate preprocessing HTTP service in front of the
 * inference server. Each POST /classify {"text": "..."} is tokenized on its own and sent to
 * Tritium's bert_classifier over gRPC; the logits come back as JSON. Run as a child process:
 *
 *   node bench/dist/pipeline/microservice.js <tokenizer folder> <tritium gRPC host:port>
 *
 * Prints `listening <port>` once ready.
 */
import http from 'node:http';
import { AutoTokenizer } from '@huggingface/transformers';
import { grpc, InferInput, InferRequestedOutput } from '@tritium/client';

const [tokenizerDir, grpcUrl] = process.argv.slice(2);
if (!tokenizerDir || !grpcUrl) throw new Error('usage: microservice.ts <tokenizer folder> <grpc host:port>');
const tokenizer = await AutoTokenizer.from_pretrained(tokenizerDir, { local_files_only: true });
const client = new grpc.InferenceServerClient(grpcUrl);
const logitsOutput = [new InferRequestedOutput('LOGITS')];

async function classify(text: string): Promise<number[]> {
  const enc = tokenizer([text], { padding: true, truncation: true });
  const dims = enc.input_ids.dims as number[];
  const result = await client.infer('bert_classifier', [
    new InferInput('INPUT_IDS', dims, 'INT64').setData(enc.input_ids.data as BigInt64Array),
    new InferInput('ATTENTION_MASK', dims, 'INT64').setData(enc.attention_mask.data as BigInt64Array),
  ], { outputs: logitsOutput });
  return Array.from(result.asTypedArray('LOGITS', 'FP32'));
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const reply = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    let text: unknown;
    try {
      text = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { text?: unknown }).text;
    } catch {
      text = undefined;
    }
    if (req.method !== 'POST' || req.url !== '/classify' || typeof text !== 'string') {
      reply(400, { error: 'POST /classify {"text": "..."}' });
      return;
    }
    classify(text).then(
      (logits) => reply(200, { logits }),
      (e: unknown) => reply(500, { error: e instanceof Error ? e.message : String(e) }),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => {
  client.close();
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
