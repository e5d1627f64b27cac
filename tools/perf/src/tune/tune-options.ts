/**
 * `tritium tune`'s command line: what to tune, the SLO, the load, the budget and where to write the
 * winner. Every bad value is refused here, naming the flag, before a server starts or a request is sent.
 */
import { parseRange, UsageError } from '../args.ts';
import type { Protocol } from '../options.ts';

export interface LatencyBudget {
  /** Which latency percentile the budget bounds (50, 90, 95 or 99). */
  readonly percentile: 50 | 90 | 95 | 99;
  readonly ms: number;
}

export interface TuneOptions {
  /** `-m`: the model or ensemble to tune. */
  readonly model: string;
  /** `--model-repository`: tune against a server tune starts itself on this repository. */
  readonly modelRepository?: string;
  /** `-u`: tune against a running server (it must allow config overrides: explicit model control). */
  readonly url?: string;
  /** `-i` (default http). */
  readonly protocol: Protocol;
  /** `--latency-budget p99=50ms` (default p99=100ms). */
  readonly latencyBudget: LatencyBudget;
  /** `--min-throughput` (infer/s; 0 = none). */
  readonly minThroughput: number;
  /** `--concurrency-range start:end[:step]`, expanded (default 1, 8, 32, 64 as 1:64 doubling). */
  readonly concurrency: readonly number[];
  /** `--input-data` (as tritium perf). */
  readonly inputData: readonly string[];
  /** `--time-budget` (e.g. 10m, 90s; default 10m). */
  readonly timeBudgetMs: number;
  /** `--output-repository`: where the winning config.pbtxt files go. */
  readonly outputRepository?: string;
  /** `-p` / `--measurement-interval` per window (default 1500 ms; perf's stability rules apply). */
  readonly measurementIntervalMs: number;
  /** `--max-instances` per step (default 4). */
  readonly maxInstances: number;
  /** `--report`: also write the table (markdown) and the Pareto plot (SVG) at this path prefix. */
  readonly report?: string;
}

export const TUNE_USAGE = `usage: tritium tune -m <model or ensemble> (--model-repository <dir> | -u <host:port>) [options]

  -m <name>                       model or ensemble to tune
  --model-repository <dir>        start a server on this repository (explicit model control) and tune there
  -u <host:port>                  tune a running server instead (it must allow config overrides: --model-control-mode=explicit)
  -i http|grpc                    protocol (default http)
  --latency-budget p<N>=<ms>ms    SLO on a latency percentile, N one of 50, 90, 95, 99 (default p99=100ms)
  --min-throughput <infer/s>      also require this throughput (default none)
  --concurrency-range <a:b[:s]>   load levels; without a step, doubling from a to b (default 1:64)
  --input-data zero|random|<file> request data, as tritium perf
  --time-budget <n>s|<n>m         stop searching when the next candidate would not fit (default 10m)
  --output-repository <dir>       write the winner's config.pbtxt files (with the model folders) there
  --report <path prefix>          also write <prefix>.md (the table) and <prefix>.svg (the Pareto front)
  -p, --measurement-interval <ms> window length (default 1500); each load level needs >= 3 windows
  --max-instances <n>             most instances tried per step (default 4)
`;

function durationMs(flag: string, v: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v.trim());
  if (!m) throw new UsageError(`invalid value for ${flag}: '${v}' (expected e.g. 90s, 10m)`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  return n * (unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000);
}

function latencyBudget(v: string): LatencyBudget {
  const m = /^p(50|90|95|99)=(\d+(?:\.\d+)?)(ms|s)?$/.exec(v.trim());
  if (!m || Number(m[2]) <= 0) throw new UsageError(`invalid value for --latency-budget: '${v}' (expected p<50|90|95|99>=<milliseconds>ms, e.g. p99=50ms)`);
  return { percentile: Number(m[1]) as LatencyBudget['percentile'], ms: Number(m[2]) * (m[3] === 's' ? 1000 : 1) };
}

function positive(flag: string, v: string, integer = false): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || (integer && !Number.isSafeInteger(n))) throw new UsageError(`invalid value for ${flag}: '${v}'`);
  return n;
}

/** Concurrency levels: a range with a step, or doubling from start to end. */
function levels(v: string): number[] {
  const parts = v.split(':');
  if (parts.length === 2) {
    const [a, b] = parts.map((p) => positive('--concurrency-range', p, true));
    if (!a || !b || a > b) throw new UsageError(`invalid value for --concurrency-range: '${v}'`);
    const out: number[] = [];
    for (let c = a; c <= b && out.length < 32; c *= 2) out.push(c);
    if (out.at(-1) !== b) out.push(b);
    return out;
  }
  const r = parseRange('--concurrency-range', v, true);
  const out: number[] = [];
  for (let c = r.start; c <= r.end && out.length < 32; c += r.step) out.push(c);
  return out;
}

/** `TuneOptions` as the command line fills them in, from the defaults. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type TuneDraft = Mutable<Omit<TuneOptions, 'model' | 'inputData'>> & { model?: string; inputData: string[] };

function defaults(): TuneDraft {
  return {
    protocol: 'http',
    latencyBudget: { percentile: 99, ms: 100 },
    minThroughput: 0,
    concurrency: levels('1:64'),
    inputData: [],
    timeBudgetMs: 600_000,
    measurementIntervalMs: 1500,
    maxInstances: 4,
  };
}

/** Each option (by its long name) and how its value is read; `flag` is the name as given. */
const OPTIONS: Readonly<Record<string, (o: TuneDraft, value: string, flag: string) => void>> = {
  '--model-name': (o, v) => void (o.model = v),
  '--model-repository': (o, v) => void (o.modelRepository = v),
  '--url': (o, v) => void (o.url = v),
  '--protocol': (o, v) => {
    const p = v.toLowerCase();
    if (p !== 'http' && p !== 'grpc') throw new UsageError(`invalid value for -i: '${p}' (expected http or grpc)`);
    o.protocol = p;
  },
  '--latency-budget': (o, v) => void (o.latencyBudget = latencyBudget(v)),
  '--min-throughput': (o, v, flag) => void (o.minThroughput = positive(flag, v)),
  '--concurrency-range': (o, v) => void (o.concurrency = levels(v)),
  '--input-data': (o, v) => void o.inputData.push(v),
  '--time-budget': (o, v, flag) => void (o.timeBudgetMs = durationMs(flag, v)),
  '--output-repository': (o, v) => void (o.outputRepository = v),
  '--report': (o, v) => void (o.report = v),
  '--measurement-interval': (o, v, flag) => {
    o.measurementIntervalMs = positive(flag, v, true);
    if (o.measurementIntervalMs < 100) throw new UsageError(`invalid value for ${flag}: '${o.measurementIntervalMs}' (at least 100 ms)`);
  },
  '--max-instances': (o, v, flag) => {
    o.maxInstances = positive(flag, v, true);
    if (o.maxInstances < 1 || o.maxInstances > 64) throw new UsageError(`invalid value for --max-instances: '${o.maxInstances}' (1 to 64)`);
  },
};

const SHORT: Readonly<Record<string, string>> = { '-m': '--model-name', '-u': '--url', '-i': '--protocol', '-p': '--measurement-interval' };

/** The reader of option `flag` (long or short); undefined for a name that is no option. */
function optionReader(flag: string): ((o: TuneDraft, value: string, flag: string) => void) | undefined {
  const long = Object.hasOwn(SHORT, flag) ? SHORT[flag]! : flag;
  return Object.hasOwn(OPTIONS, long) ? OPTIONS[long] : undefined;
}

export function parseTuneArgs(argv: readonly string[]): TuneOptions {
  const o = defaults();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const read = optionReader(flag);
    if (!read) throw new UsageError(`unknown option '${flag}'\n${TUNE_USAGE}`);
    const v = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (v === undefined) throw new UsageError(`${flag} needs a value`);
    read(o, v, flag);
  }
  const { model, modelRepository, url, outputRepository, report, ...rest } = o;
  if (!model) throw new UsageError(`-m <model> is required\n${TUNE_USAGE}`);
  if (!modelRepository === !url) throw new UsageError('give either --model-repository (tune starts its own server) or -u (a running server), not both or neither');
  return {
    model,
    ...(modelRepository ? { modelRepository } : {}),
    ...(url ? { url } : {}),
    ...rest,
    ...(outputRepository ? { outputRepository } : {}),
    ...(report ? { report } : {}),
  };
}
