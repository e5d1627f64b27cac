import type { PerfOptions } from '../options.ts';
import type { LevelResult } from '../profiler.ts';
import type { ServerBreakdown } from '../server-stats.ts';

/** perf_analyzer's settings block. */
export function settingsBlock(options: PerfOptions): string {
  const stab = options.percentile !== undefined ? `p${options.percentile} latency` : 'average latency';
  return [
    '*** Measurement Settings ***',
    `  Batch size: ${options.batchSize}`,
    '  Service Kind: TRITON',
    `  Using "${options.measurementMode}" mode for stabilization`,
    `  Stabilizing using ${stab} and throughput`,
    options.measurementMode === 'time_windows'
      ? `  Measurement window: ${options.measurementIntervalMs} msec`
      : `  Minimum number of samples in each window: ${options.measurementRequestCount}`,
    '  Using asynchronous calls for inference',
    '',
  ].join('\n');
}

/** The per-level block perf_analyzer prints (client, then server). */
export function levelBlock(r: LevelResult, protocol: string): string {
  const lines = [
    r.mode === 'concurrency' ? `Request concurrency: ${r.level}` : `Request Rate: ${r.level} inference requests per seconds`,
    '  Client: ',
    `    Request count: ${r.requestCount}`,
    `    Throughput: ${r.throughput.toFixed(1)} infer/sec`,
  ];
  if (r.responseThroughput !== undefined) lines.push(`    Response Throughput: ${r.responseThroughput.toFixed(1)} infer/sec`);
  if (r.mode === 'request_rate') lines.push(`    Avg send lag: ${(r.avgLagMs * 1000).toFixed(0)} usec`);
  lines.push(
    `    p50 latency: ${Math.round(r.latency.p50Us)} usec`,
    `    p90 latency: ${Math.round(r.latency.p90Us)} usec`,
    `    p95 latency: ${Math.round(r.latency.p95Us)} usec`,
    `    p99 latency: ${Math.round(r.latency.p99Us)} usec`,
    `    Avg ${protocol.toUpperCase()} time: ${Math.round(r.latency.avgUs)} usec (standard deviation ${Math.round(r.latency.stdUs)} usec)`,
  );
  const s = r.server;
  if (s) {
    lines.push(
      '  Server: ',
      `    Inference count: ${s.inferenceCount}`,
      `    Execution count: ${s.executionCount}`,
      `    Successful request count: ${s.requestCount}`,
      `    Avg request latency: ${Math.round(s.avgRequestUs)} usec (overhead ${Math.round(s.overheadUs)} usec + queue ${Math.round(s.queueUs)} usec + compute input ${Math.round(s.computeInputUs)} usec + compute infer ${Math.round(s.computeInferUs)} usec + compute output ${Math.round(s.computeOutputUs)} usec)`,
    );
    if (s.paddingEfficiency !== undefined) lines.push(`    Tokens: ${tokensText(s)}`);
    for (const c of s.composing) {
      const b = c.breakdown;
      lines.push(
        `    Composing model ${c.model}: executions ${b.executionCount}, requests ${b.requestCount}, queue ${Math.round(b.queueUs)} usec, compute infer ${Math.round(b.computeInferUs)} usec` +
          (b.paddingEfficiency !== undefined ? `, ${tokensText(b)}` : ''),
      );
    }
  }
  if (!r.stable) lines.push('  Failed to obtain stable measurement within the max trials; the last windows are reported.');
  return `${lines.join('\n')}\n`;
}

/** Tritium's token counts of a window (models that pad rows): padding efficiency and padded tokens per execution. */
function tokensText(b: ServerBreakdown): string {
  return `padding efficiency ${b.paddingEfficiency!.toFixed(2)}, padded tokens per execution ${Math.round(b.paddedTokensPerExecution!)}`;
}

/** The closing summary and a table of every level. */
export function finalTable(results: readonly LevelResult[]): string {
  if (results.length === 0) return '';
  const mode = results[0]!.mode;
  const out = [`Inferences/Second vs. Client Average Batch Latency`];
  for (const r of results) {
    out.push(`${mode === 'concurrency' ? 'Concurrency' : 'Request Rate'}: ${r.level}, throughput: ${r.throughput.toFixed(1)} infer/sec, latency ${Math.round(r.latency.avgUs)} usec`);
  }
  const head = [mode === 'concurrency' ? 'concurrency' : 'rate', 'infer/s', 'avg ms', 'p50 ms', 'p90 ms', 'p99 ms', 'queue ms', 'compute ms', 'stable'];
  const rows = results.map((r) => [
    String(r.level),
    r.throughput.toFixed(1),
    (r.latency.avgUs / 1000).toFixed(2),
    (r.latency.p50Us / 1000).toFixed(2),
    (r.latency.p90Us / 1000).toFixed(2),
    (r.latency.p99Us / 1000).toFixed(2),
    r.server ? (r.server.queueUs / 1000).toFixed(2) : '-',
    r.server ? ((r.server.computeInputUs + r.server.computeInferUs + r.server.computeOutputUs) / 1000).toFixed(2) : '-',
    r.stable ? 'yes' : 'no',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
  out.push('', fmt(head), fmt(widths.map((w) => '-'.repeat(w))), ...rows.map(fmt));
  return `${out.join('\n')}\n`;
}
