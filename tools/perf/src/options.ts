/** perf_analyzer's options, as `tritium perf` accepts them (perf_analyzer's docs/cli.md, triton-inference-server/perf_analyzer). */

export type Protocol = 'http' | 'grpc';

/** `start:end:step`. */
export interface Range {
  readonly start: number;
  readonly end: number;
  readonly step: number;
}

export interface PerfOptions {
  /** `-m` */
  readonly model: string;
  /** `-x` (empty: the server's choice). */
  readonly modelVersion: string;
  /** `-u` host:port (default localhost:8000 for HTTP, localhost:8001 for gRPC). */
  readonly url: string;
  /** `-i` */
  readonly protocol: Protocol;
  /** `-b` */
  readonly batchSize: number;
  /** `--concurrency-range` (the default load when neither range is given: 1:1:1). */
  readonly concurrencyRange?: Range;
  /** `--request-rate-range` (requests per second). */
  readonly requestRateRange?: Range;
  /** `--request-distribution` */
  readonly requestDistribution: 'constant' | 'poisson';
  /** `--input-data` (repeatable): `zero`, `random`, or a perf_analyzer JSON file. */
  readonly inputData: readonly string[];
  /** `--shape NAME:d1,d2` (repeatable): dims without the batch dimension. */
  readonly shapes: ReadonlyMap<string, readonly number[]>;
  /** `--string-data`: the value of every BYTES element. */
  readonly stringData?: string;
  /** `--string-length` (random BYTES elements; default 128). */
  readonly stringLength: number;
  /** `-p` / `--measurement-interval` in ms (default 5000). */
  readonly measurementIntervalMs: number;
  /** `--measurement-mode` */
  readonly measurementMode: 'time_windows' | 'count_windows';
  /** `--measurement-request-count` (count_windows; default 50). */
  readonly measurementRequestCount: number;
  /** `--percentile`: stabilize on and report this percentile instead of the average. */
  readonly percentile?: number;
  /** `-s` / `--stability-percentage` (default 10). */
  readonly stabilityPercentage: number;
  /** `-r` / `--max-trials` (default 10). */
  readonly maxTrials: number;
  /** `-l` / `--latency-threshold` in ms (0: none): stop sweeping once exceeded. */
  readonly latencyThresholdMs: number;
  /** `--warmup-request-count` */
  readonly warmupRequestCount: number;
  /** `-f`: CSV file. */
  readonly filename?: string;
  /** `--plot`: SVG of throughput against latency. */
  readonly plot?: string;
  /** `-v` */
  readonly verbose: boolean;
  /** `-H Header:Value` (repeatable): sent with every request, HTTP and gRPC (e.g. a restricted API's key). */
  readonly headers?: Readonly<Record<string, string>>;
  /** `--request-parameter name:value:type` (repeatable; bool, int or string): sent with every inference. */
  readonly requestParameters?: Readonly<Record<string, string | number | boolean>>;
  /** `--streaming` (gRPC only): requests on one bidirectional stream; needed for decoupled models. */
  readonly streaming?: boolean;
}

export const DEFAULTS = {
  batchSize: 1,
  requestDistribution: 'constant',
  stringLength: 128,
  measurementIntervalMs: 5000,
  measurementMode: 'time_windows',
  measurementRequestCount: 50,
  stabilityPercentage: 10,
  maxTrials: 10,
  latencyThresholdMs: 0,
  warmupRequestCount: 0,
} as const;

/** The load levels a run sweeps: concurrencies or request rates, in order. */
export function loadLevels(options: PerfOptions): { mode: 'concurrency' | 'request_rate'; levels: number[] } {
  const range = options.requestRateRange ?? options.concurrencyRange ?? { start: 1, end: 1, step: 1 };
  const levels: number[] = [];
  // Bounded: a range of at most 10,000 levels (validated by the parser).
  for (let v = range.start; v <= range.end + 1e-9 && levels.length < 10_000; v += range.step) levels.push(v);
  return { mode: options.requestRateRange ? 'request_rate' : 'concurrency', levels };
}
