/**
 * What ONNX Runtime's intra-op threads cost per row: the example's bert_classifier at each intra-op
 * thread count (1, cores ÷ 2, all cores; spinning off, as Tritium serves it), on batches of equal
 * rows of several lengths, printing CPU and wall milliseconds per row. This is why the bench's
 * mixed-length group serves bert_classifier on Triton's default CPU instance group (two sessions of
 * cores ÷ 2 threads) rather than one session of every core (bench/pipeline/repositories.ts
 * CpuInstances): where intra-op threads cost more CPU per row than they save in wall time, two
 * single-threaded sessions do more work on the same cores than one two-threaded one.
 *
 * Env: ORT_THREADS_MS (measured per point, default 600).
 * Run: node bench/dist/ort-threads.bench.js (after `npx tsc -b`)
 */
import { availableParallelism, cpus, loadavg } from 'node:os';
import * as ort from 'onnxruntime-node';
import { setupExample } from '@tritium/example-setup';

const MS = Number(process.env['ORT_THREADS_MS'] ?? 600);
const LENGTHS = [8, 16, 32, 64, 128];
const BATCHES = [1, 4, 16];
const THREADS = [...new Set([1, Math.max(1, Math.floor(availableParallelism() / 2)), availableParallelism()])];

/** CPU and wall milliseconds per row of `session` on `batch` rows of `length` tokens. */
async function perRow(session: ort.InferenceSession, batch: number, length: number): Promise<{ cpu: number; wall: number }> {
  const dims = [batch, length];
  const feeds = {
    INPUT_IDS: new ort.Tensor('int64', new BigInt64Array(batch * length).fill(1000n), dims),
    ATTENTION_MASK: new ort.Tensor('int64', new BigInt64Array(batch * length).fill(1n), dims),
  };
  for (let i = 0; i < 5; i++) await session.run(feeds);
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let runs = 0;
  while (performance.now() - start < MS) {
    await session.run(feeds);
    runs++;
  }
  const cpu = process.cpuUsage(cpu0);
  const rows = runs * batch;
  return { cpu: (cpu.user + cpu.system) / 1000 / rows, wall: (performance.now() - start) / rows };
}

const { modelPath } = setupExample({ log: () => {} });
console.log(`${cpus()[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(1)}; bert_classifier, spinning off, ${MS} ms per point`);
const results = new Map<string, { cpu: number; wall: number }>();
for (const threads of THREADS) {
  const options = { intraOpNumThreads: threads, extra: { session: { intra_op: { allow_spinning: '0' } } } };
  const session = await ort.InferenceSession.create(modelPath, options as ort.InferenceSession.SessionOptions);
  try {
    for (const length of LENGTHS) for (const batch of BATCHES) results.set(`${threads}/${length}/${batch}`, await perRow(session, batch, length));
  } finally {
    await session.release();
  }
}
console.log(`\nms per row: CPU (wall) at ${THREADS.join(' / ')} intra-op threads; last column: CPU per row at ${THREADS.at(-1)} threads over 1`);
for (const length of LENGTHS) {
  for (const batch of BATCHES) {
    const cells = THREADS.map((t) => results.get(`${t}/${length}/${batch}`)!);
    const ratio = cells.at(-1)!.cpu / cells[0]!.cpu;
    console.log(`L=${String(length).padStart(3)} B=${String(batch).padStart(2)}  ${cells.map((c) => `${c.cpu.toFixed(3)} (${c.wall.toFixed(3)})`).join('  ')}  ${ratio.toFixed(2)}x`);
  }
}
