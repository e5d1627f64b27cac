import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildRequests,
  closedLoop,
  composingCsv,
  composingCsvPath,
  cppDouble,
  isStable,
  levelBlock,
  parsePerfArgs,
  plotFor,
  plotSvg,
  summarize,
  toCsv,
  type LevelResult,
  type PerfOptions,
  type StreamOutcome,
  type Window,
} from '../src/index.ts';

function level(levelValue: number, throughput: number, p50: number): LevelResult {
  return {
    mode: 'concurrency',
    level: levelValue,
    batchSize: 1,
    stable: true,
    windows: 3,
    requestCount: 100,
    throughput,
    latency: { count: 100, avgUs: 5000.4, stdUs: 10, p50Us: p50, p90Us: 6000, p95Us: 6500, p99Us: 7000.6 },
    avgLagMs: 0,
    server: {
      requestCount: 100,
      inferenceCount: 100,
      executionCount: 10,
      avgRequestUs: 4000,
      queueUs: 1000,
      computeInputUs: 10,
      computeInferUs: 2900,
      computeOutputUs: 20,
      overheadUs: 70,
      composing: [],
    },
  };
}

describe('CSV (perf_analyzer report_writer columns)', () => {
  it('writes the exact header and integer-microsecond rows sorted by throughput', () => {
    const csv = toCsv([level(2, 87.2, 4800), level(1, 69.25, 4500)]);
    expect(csv).toBe(
      'Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency\n' +
        '1,69.25,0,1070,1000,10,2900,20,0,4500,6000,6500,7001\n' +
        '2,87.2,0,1070,1000,10,2900,20,0,4800,6000,6500,7001\n',
    );
  });

  it("adds a decoupled model's Response Throughput after Inferences/Second, in the file and the console block", () => {
    const csv = toCsv([{ ...level(1, 69.25, 4500), responseThroughput: 207.75 }]);
    expect(csv.split('\n').slice(0, 2)).toEqual([
      'Concurrency,Inferences/Second,Response Throughput,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency',
      '1,69.25,207.75,0,1070,1000,10,2900,20,0,4500,6000,6500,7001',
    ]);
    const block = levelBlock({ ...level(1, 69.25, 4500), responseThroughput: 207.75 }, 'grpc').split('\n');
    expect(block.slice(3, 5)).toEqual(['    Throughput: 69.3 infer/sec', '    Response Throughput: 207.8 infer/sec']);
    expect(levelBlock(level(1, 69.25, 4500), 'grpc')).not.toContain('Response Throughput');
  });

  it('names the first column Request Rate in rate mode', () => {
    expect(toCsv([{ ...level(10, 10, 1), mode: 'request_rate' }]).split(',')[0]).toBe('Request Rate');
  });

  it("writes an ensemble's composing model file with that model's own server columns", () => {
    const r = level(1, 50, 4000);
    const withParts: LevelResult = {
      ...r,
      server: { ...r.server!, composing: [{ model: 'tokenizer', breakdown: { ...r.server!, queueUs: 300, computeInferUs: 700, composing: [] } }] },
    };
    expect(composingCsv([withParts], 'tokenizer').split('\n')[1]).toBe('1,50,0,3970,300,10,700,20,0,4000,6000,6500,7001');
    expect(composingCsvPath('out/perf.csv', 'tokenizer', '1')).toBe('out/tokenizer_v1.perf.csv');
    expect(composingCsvPath('perf.csv', 'bert_classifier', '2')).toBe('bert_classifier_v2.perf.csv');
  });

  it("formats doubles as C++'s default stream does", () => {
    expect([cppDouble(69.2), cppDouble(1234.5678), cppDouble(1234567), cppDouble(0.5), cppDouble(0)]).toEqual(['69.2', '1234.57', '1.23457e+06', '0.5', '0']);
  });
});

describe('measurement', () => {
  const win = (throughput: number, avgUs: number): Window => ({ durationMs: 1000, throughput, responseThroughput: throughput, avgLagMs: 0, latency: summarize([avgUs]) });
  const options = parsePerfArgs(['-m', 'm']) as PerfOptions;

  it('is stable when the last 3 windows are within 10% on throughput and latency', () => {
    expect(isStable([win(100, 1000), win(105, 1050)], options)).toBe(false);
    expect(isStable([win(50, 9000), win(100, 1000), win(105, 1050), win(108, 1020)], options)).toBe(true);
    expect(isStable([win(100, 1000), win(120, 1000), win(105, 1000)], options)).toBe(false);
    expect(isStable([win(100, 1000), win(100, 1200), win(100, 1000)], options)).toBe(false);
  });

  it('measures a streamed request to its last response and leaves out one that got only the empty final', async () => {
    let n = 0;
    // Alternately: 3 responses, the last 5 ms before the final flag; then only the empty final.
    const send = async (): Promise<StreamOutcome> => {
      const sent = performance.now();
      await new Promise((r) => setTimeout(r, 10));
      const last = performance.now();
      await new Promise((r) => setTimeout(r, 5));
      return n++ % 2 === 0 ? { responses: 3, lastResponseMs: last } : { responses: 0, lastResponseMs: sent };
    };
    const load = closedLoop(1, send);
    // Until 8 requests were sent (a count, not a time: a loaded machine only makes it slower).
    while (n < 8) await new Promise((r) => setTimeout(r, 5));
    await load.stop();
    const done = load.drain();
    expect(done.length).toBe(Math.ceil(n / 2));
    for (const c of done) {
      expect(c.responses).toBe(3);
      expect(c.endMs - c.startMs).toBeGreaterThanOrEqual(9);
    }
    // The next request left only after the final flag, not at the last response.
    for (let i = 1; i < done.length; i++) expect(done[i]!.startMs - done[i - 1]!.endMs).toBeGreaterThanOrEqual(4);
  });

  it('summarizes latencies with nearest-rank percentiles', () => {
    const s = summarize(Array.from({ length: 100 }, (_, i) => i + 1), 95);
    expect([s.p50Us, s.p90Us, s.p95Us, s.p99Us, s.pNUs, s.avgUs]).toEqual([50, 90, 95, 99, 95, 50.5]);
  });
});

describe('input data', () => {
  const metadata = {
    name: 'sentiment_ensemble',
    inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [-1, 1] }],
    outputs: [{ name: 'LOGITS', datatype: 'FP32', shape: [-1, 2] }],
  };
  const config = { max_batch_size: 256 };

  it("reads perf_analyzer's JSON format and batches consecutive entries with -b", () => {
    const dir = mkdtempSync(join(tmpdir(), 'perf-input-'));
    const file = join(dir, 'client_requests.json');
    writeFileSync(file, JSON.stringify({ data: [{ TEXT: ['good'] }, { TEXT: { content: ['bad'], shape: [1] } }, { TEXT: ['meh'] }] }));
    const requests = buildRequests(metadata, config, parsePerfArgs(['-m', 'm', '--input-data', file, '-b', '2']) as PerfOptions);
    expect(requests).toHaveLength(3);
    expect(requests[0]![0]).toMatchObject({ name: 'TEXT', datatype: 'BYTES', shape: [2, 1], data: ['good', 'bad'] });
    expect(requests[2]![0]!.data).toEqual(['meh', 'good']);
  });

  it('decodes b64 BYTES (4-byte length prefixes) and numeric content', () => {
    const dir = mkdtempSync(join(tmpdir(), 'perf-input-'));
    const file = join(dir, 'in.json');
    const hello = Buffer.concat([Buffer.from([5, 0, 0, 0]), Buffer.from('hello')]);
    writeFileSync(file, JSON.stringify({ data: [{ TEXT: { b64: hello.toString('base64') }, IDS: [[1, 2, 3]] }] }));
    const meta = { ...metadata, inputs: [...metadata.inputs, { name: 'IDS', datatype: 'INT64', shape: [-1, -1] }] };
    const [request] = buildRequests(meta, config, parsePerfArgs(['-m', 'm', '--input-data', file]) as PerfOptions);
    expect(request![0]!.data).toEqual(['hello']);
    expect(request![1]!.shape).toEqual([1, 3]);
    expect(Array.from(request![1]!.data as BigInt64Array)).toEqual([1n, 2n, 3n]);
  });

  it('uses --string-data, and asks for --shape on variable dims with synthetic data', () => {
    const [request] = buildRequests(metadata, config, parsePerfArgs(['-m', 'm', '--string-data', 'I am happy']) as PerfOptions);
    expect(request![0]).toMatchObject({ shape: [1, 1], data: ['I am happy'] });
    const meta = { ...metadata, inputs: [{ name: 'IDS', datatype: 'INT64', shape: [-1, -1] }] };
    expect(() => buildRequests(meta, config, parsePerfArgs(['-m', 'm', '--input-data', 'zero']) as PerfOptions)).toThrow(
      'input IDS contains dynamic shape, provide shapes to send along with the request (--shape IDS:...)',
    );
    const [zeros] = buildRequests(meta, config, parsePerfArgs(['-m', 'm', '--input-data', 'zero', '--shape', 'IDS:4', '-b', '2']) as PerfOptions);
    expect(zeros![0]).toMatchObject({ shape: [2, 4] });
    expect(Array.from(zeros![0]!.data as BigInt64Array)).toEqual(new Array(8).fill(0n));
  });
});

describe('plot', () => {
  it('draws one polyline per series with a legend', () => {
    const svg = plotSvg({
      title: 'x & y',
      xLabel: 'throughput',
      yLabel: 'ms',
      series: [
        { name: 'p50', points: [{ x: 10, y: 1, label: 'c1' }, { x: 100, y: 5 }] },
        { name: 'p99', dashed: true, points: [{ x: 10, y: 2 }, { x: 100, y: 9 }] },
      ],
    });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    expect(svg).toContain('x &amp; y');
    expect(svg).toContain('stroke-dasharray');
    expect(svg).toContain('>c1</text>');
  });

  it('joins levels in throughput order (no doubling back) and marks unstable levels hollow, with a legend entry', () => {
    const options = parsePerfArgs(['-m', 'm']) as PerfOptions;
    // Concurrency 4 gave less throughput than 2 (a saturated server): in level order the line would go back.
    const results = [level(1, 50, 1000), level(2, 90, 1500), { ...level(4, 80, 3000), stable: false }];
    const svg = plotFor(options, results);
    const p50 = /<polyline points="([^"]+)"/.exec(svg)![1]!.split(' ').map((pt) => Number(pt.split(',')[0]));
    expect(p50).toEqual([...p50].sort((a, b) => a - b));
    expect(svg).toContain('>c4 (unstable)</text>');
    expect(svg.match(/<circle [^>]*fill="white"/g)).toHaveLength(3); // p50 and p99 markers of c4, and the legend's
    expect(svg).toContain('>unstable level</text>');
    expect(plotFor(options, results.slice(0, 2))).not.toContain('unstable');
  });
});

describe('server statistics of a level', () => {
  const counters = (success: number, successUs: number, queueUs: number, inferUs: number) => ({
    successCount: success,
    successNs: successUs * 1000,
    queueNs: queueUs * 1000,
    computeInputNs: 0,
    computeInferNs: inferUs * 1000,
    computeOutputNs: 0,
    inferenceCount: success,
    executionCount: success,
    realTokens: 0,
    paddedTokens: 0,
    tokenExecutions: 0,
  });
  // Cumulative counters before window 1 and after windows 1..4: window 1 is a warm-up burst,
  // windows 2-4 are measured; window 4 has ten times the requests of window 2.
  const snaps = [
    [0, 0, 0, 0, 0, 0, 0, 0],
    [100, 100_000, 10_000, 50_000, 100, 90_000, 40_000, 30_000],
    [110, 102_000, 10_100, 51_000, 110, 93_000, 40_100, 31_000],
    [130, 106_000, 10_300, 53_000, 130, 99_000, 40_300, 33_000],
    [230, 146_000, 11_300, 73_000, 230, 139_000, 41_300, 53_000],
  ].map(
    ([es, eUs, eq, ei, ts, tUs, tq, ti]) =>
      new Map([
        ['ens', counters(es!, eUs!, eq!, ei!)],
        ['tok', counters(ts!, tUs!, tq!, ti!)],
      ]),
  );

  it('covers the reported windows with one delta: the top line and every composing line over the same requests', async () => {
    const { serverOverWindows } = await import('../src/profiler.ts');
    const s = serverOverWindows('ens', ['tok'], snaps, 3)!;
    // Windows 2-4: 130 requests, 46,000 µs in total: 353.8 µs each, request-weighted.
    expect(s.requestCount).toBe(130);
    expect(s.avgRequestUs).toBeCloseTo(46_000 / 130, 6);
    const tok = s.composing[0]!.breakdown;
    expect(tok.requestCount).toBe(130); // the same windows as the top line, not the last window's 100
    expect(tok.queueUs).toBeCloseTo(1_300 / 130, 6);
    expect(tok.computeInferUs).toBeCloseTo(23_000 / 130, 6);
    expect(serverOverWindows('ens', ['tok'], snaps.slice(0, 2), 3)).toBeUndefined();
  });

  it("prints a padding step's token counts on its composing line (Tritium's statistics fields)", async () => {
    const { breakdown } = await import('../src/server-stats.ts');
    const zero = new Map([['ens', counters(0, 0, 0, 0)], ['tok', counters(0, 0, 0, 0)], ['bert', counters(0, 0, 0, 0)]]);
    // bert ran 4 length groups: 300 real tokens padded to 400 (100 per execution).
    const after = new Map([
      ['ens', { ...counters(10, 100_000, 0, 0), realTokens: 300, paddedTokens: 400, tokenExecutions: 4 }],
      ['tok', counters(10, 60_000, 5_000, 10_000)],
      ['bert', { ...counters(10, 25_000, 5_000, 20_000), realTokens: 300, paddedTokens: 400, tokenExecutions: 4 }],
    ]);
    const b = breakdown('ens', ['tok', 'bert'], zero, after);
    expect(b.paddingEfficiency).toBe(0.75);
    expect(b.composing[0]!.breakdown.paddingEfficiency).toBeUndefined();
    const text = levelBlock({ ...level(1, 50, 1000), server: b }, 'http');
    expect(text).toContain('    Tokens: padding efficiency 0.75, padded tokens per execution 100\n');
    expect(text).toContain('    Composing model tok: executions 10, requests 10, queue 500 usec, compute infer 1000 usec\n');
    expect(text).toContain('    Composing model bert: executions 10, requests 10, queue 500 usec, compute infer 2000 usec, padding efficiency 0.75, padded tokens per execution 100\n');
  });

  it("reads an ensemble as perf_analyzer does: queue and compute are the composing models' only (the pipeline wait is in the first step's queue)", async () => {
    const { breakdown } = await import('../src/server-stats.ts');
    // 10 ensemble requests; the ensemble's own queue (the pipeline batcher's wait, 5 ms each) is
    // also in the first step's queue, as the server reports it: counted once, from the step.
    const before = new Map([['ens', counters(0, 0, 0, 0)], ['tok', counters(0, 0, 0, 0)], ['bert', counters(0, 0, 0, 0)]]);
    const after = new Map([
      ['ens', { ...counters(10, 100_000, 50_000, 0), computeInferNs: 30_000_000 }],
      ['tok', counters(10, 60_000, 55_000, 10_000)],
      ['bert', counters(10, 25_000, 5_000, 20_000)],
    ]);
    const b = breakdown('ens', ['tok', 'bert'], before, after);
    expect(b.queueUs).toBeCloseTo(5_500 + 500, 6);
    expect(b.computeInferUs).toBeCloseTo(1_000 + 2_000, 6);
    expect(b.overheadUs).toBeCloseTo(10_000 - 6_000 - 3_000, 6);
  });
});

