import type { LevelResult } from '../profiler.ts';

/**
 * perf_analyzer's CSV header (report_writer.cc), first column by load mode; a decoupled model's
 * file has its "Response Throughput" after "Inferences/Second".
 */
export function csvHeader(mode: 'concurrency' | 'request_rate', decoupled = false): string {
  return [
    mode === 'concurrency' ? 'Concurrency' : 'Request Rate',
    'Inferences/Second',
    ...(decoupled ? ['Response Throughput'] : []),
    'Client Send',
    'Network+Server Send/Recv',
    'Server Queue',
    'Server Compute Input',
    'Server Compute Infer',
    'Server Compute Output',
    'Client Recv',
    'p50 latency',
    'p90 latency',
    'p95 latency',
    'p99 latency',
  ].join(',');
}

/** A number as C++'s default ostream prints a double (6 significant digits, no trailing zeros). */
export function cppDouble(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return '0';
  const exp = Math.floor(Math.log10(Math.abs(value)));
  if (exp < -5 || exp >= 6) {
    const [m, e] = value.toExponential(5).split('e');
    const mantissa = m!.replace(/\.?0+$/, '');
    const n = Number(e);
    return `${mantissa}e${n < 0 ? '-' : '+'}${String(Math.abs(n)).padStart(2, '0')}`;
  }
  return String(Number(value.toPrecision(6)));
}

/**
 * One CSV row, every latency in integer microseconds as perf_analyzer writes them. The client
 * send/recv split is not observable through the client library, so those columns are 0 and the
 * whole client-side remainder lands in "Network+Server Send/Recv" (avg latency − server queue −
 * server compute).
 */
export function csvRow(r: LevelResult): string {
  const s = r.server;
  const queue = s?.queueUs ?? 0;
  const input = s?.computeInputUs ?? 0;
  const infer = s?.computeInferUs ?? 0;
  const output = s?.computeOutputUs ?? 0;
  const network = Math.max(0, r.latency.avgUs - queue - input - infer - output);
  const us = (v: number) => String(Math.round(v));
  return [
    cppDouble(r.level),
    cppDouble(r.throughput),
    ...(r.responseThroughput !== undefined ? [cppDouble(r.responseThroughput)] : []),
    '0',
    us(network),
    us(queue),
    us(input),
    us(infer),
    us(output),
    '0',
    us(r.latency.p50Us),
    us(r.latency.p90Us),
    us(r.latency.p95Us),
    us(r.latency.p99Us),
  ].join(',');
}

/** The whole file: header, then rows sorted by increasing throughput (as perf_analyzer). */
export function toCsv(results: readonly LevelResult[]): string {
  if (results.length === 0) return '';
  const rows = [...results].sort((a, b) => a.throughput - b.throughput).map(csvRow);
  return `${csvHeader(results[0]!.mode, results[0]!.responseThroughput !== undefined)}\n${rows.join('\n')}\n`;
}

/**
 * perf_analyzer's extra file per composing model of an ensemble (`<model>_v<version>.<file>` beside
 * the main one): the same rows, with that model's own server queue and compute columns.
 */
export function composingCsv(results: readonly LevelResult[], model: string): string {
  const own = results.map((r): LevelResult => {
    const part = r.server?.composing.find((c) => c.model === model)?.breakdown;
    const { server: _ensemble, ...rest } = r;
    return part ? { ...rest, server: part } : rest;
  });
  return toCsv(own);
}

/** `dir/perf.csv` + `tokenizer`, version `1` → `dir/tokenizer_v1.perf.csv`. */
export function composingCsvPath(file: string, model: string, version: string): string {
  const slash = file.lastIndexOf('/');
  return `${file.slice(0, slash + 1)}${model}_v${version}.${file.slice(slash + 1)}`;
}
