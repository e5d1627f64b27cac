import { DEFAULTS, type PerfOptions, type Protocol, type Range } from './options.ts';

/** A bad command line: the message says which option and why. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Options that take a value, by every spelling perf_analyzer accepts. */
const VALUE_OPTIONS: Readonly<Record<string, string>> = {
  '-m': 'model',
  '--model-name': 'model',
  '-x': 'model-version',
  '--model-version': 'model-version',
  '-u': 'url',
  '--url': 'url',
  '-i': 'protocol',
  '--protocol': 'protocol',
  '-b': 'batch-size',
  '--batch-size': 'batch-size',
  '--concurrency-range': 'concurrency-range',
  '--request-rate-range': 'request-rate-range',
  '--request-distribution': 'request-distribution',
  '--input-data': 'input-data',
  '--shape': 'shape',
  '--string-data': 'string-data',
  '--string-length': 'string-length',
  '-p': 'measurement-interval',
  '--measurement-interval': 'measurement-interval',
  '--measurement-mode': 'measurement-mode',
  '--measurement-request-count': 'measurement-request-count',
  '--percentile': 'percentile',
  '-s': 'stability-percentage',
  '--stability-percentage': 'stability-percentage',
  '-r': 'max-trials',
  '--max-trials': 'max-trials',
  '-l': 'latency-threshold',
  '--latency-threshold': 'latency-threshold',
  '--warmup-request-count': 'warmup-request-count',
  '-f': 'filename',
  '--filename': 'filename',
  '--plot': 'plot',
  '--service-kind': 'service-kind',
  '--max-threads': 'max-threads',
  '-H': 'header',
  '--request-parameter': 'request-parameter',
};
/** Flags (no value). `--async`/`--sync` are accepted: the load generator is always asynchronous. */
const FLAGS = new Set(['-v', '--verbose', '-a', '--async', '--sync', '--streaming', '-h', '--help']);

export const USAGE = `usage: tritium perf -m <model> [options]   (perf_analyzer's options)
  -m <model>                      model to measure (required)
  -x <version>                    model version (default: the server's choice)
  -u <host:port>                  server (default localhost:8000 for http, localhost:8001 for grpc)
  -i http|grpc                    protocol (default http)
  --streaming                     gRPC bidirectional streaming (-i grpc); required for decoupled models
  -b <n>                          batch size of each request (default 1)
  --concurrency-range s[:e[:st]]  closed loop: n requests always outstanding (default 1)
  --request-rate-range s[:e[:st]] open loop: requests per second
  --request-distribution constant|poisson
  --input-data zero|random|<file.json>   perf_analyzer's JSON input format (repeatable)
  --shape NAME:d1,d2              dims of a variable-size input, batch excluded (repeatable)
  --string-data <s>               value of every BYTES element (default: random strings)
  --string-length <n>             length of random strings (default 128)
  -p, --measurement-interval <ms> window length (default 5000)
  --measurement-mode time_windows|count_windows, --measurement-request-count <n>
  --percentile <n>                stabilize on and report the nth percentile latency
  -s <pct>                        stability threshold (default 10): 3 windows within it
  -r, --max-trials <n>            windows tried per load level before giving up (default 10)
  -l <ms>                         latency threshold that ends the sweep
  --warmup-request-count <n>      requests sent and discarded before measuring
  -f <file.csv>                   CSV with perf_analyzer's columns
  --plot <file.svg>               throughput against latency
  -v                              print every window
  -H <Header:Value>               header sent with every request, HTTP and gRPC (repeatable)
  --request-parameter <name:value:type>   inference parameter, type bool|int|string (repeatable)
`;

function int(name: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`invalid value '${value}' for ${name}: expected an integer >= ${min}`);
  return n;
}

function num(name: string, value: string, minExclusive: number): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= minExclusive) throw new UsageError(`invalid value '${value}' for ${name}: expected a number > ${minExclusive}`);
  return n;
}

/** perf_analyzer's `start:end:step` (end defaults to start, step to 1). */
export function parseRange(name: string, value: string, integer: boolean): Range {
  const parts = value.split(':');
  if (parts.length > 3 || parts.some((p) => p.trim() === '')) {
    throw new UsageError(`invalid value '${value}' for ${name}: expected start:end:step`);
  }
  const parse = (p: string) => (integer ? int(name, p, 1) : num(name, p, 0));
  const start = parse(parts[0]!);
  const end = parts[1] !== undefined ? parse(parts[1]) : start;
  const step = parts[2] !== undefined ? parse(parts[2]) : 1;
  if (end < start) throw new UsageError(`invalid value '${value}' for ${name}: end (${end}) is less than start (${start})`);
  if ((end - start) / step > 10_000) throw new UsageError(`invalid value '${value}' for ${name}: more than 10000 steps`);
  return { start, end, step };
}

/** `NAME:d1,d2,...` */
export function parseShape(value: string): [string, number[]] {
  const colon = value.lastIndexOf(':');
  if (colon <= 0 || colon === value.length - 1) throw new UsageError(`invalid value '${value}' for --shape: expected NAME:d1,d2,...`);
  const dims = value
    .slice(colon + 1)
    .split(',')
    .map((d) => int('--shape', d, 0));
  return [value.slice(0, colon), dims];
}

/** perf_analyzer's `-H Header:Value` (the value may itself hold colons). */
function parseHeaders(values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const colon = v.indexOf(':');
    if (colon <= 0) throw new UsageError(`invalid value '${v}' for -H: expected Header:Value`);
    out[v.slice(0, colon).trim().toLowerCase()] = v.slice(colon + 1).trim();
  }
  return out;
}

/** perf_analyzer's `--request-parameter name:value:type` (type bool, int or string). */
function parseRequestParameters(values: readonly string[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const v of values) {
    const first = v.indexOf(':');
    const last = v.lastIndexOf(':');
    if (first <= 0 || last === first) throw new UsageError(`invalid value '${v}' for --request-parameter: expected name:value:type`);
    const [name, value, type] = [v.slice(0, first), v.slice(first + 1, last), v.slice(last + 1)];
    if (type === 'string') out[name] = value;
    else if (type === 'int') out[name] = int('--request-parameter', value, Number.MIN_SAFE_INTEGER);
    else if (type === 'bool' && (value === 'true' || value === 'false')) out[name] = value === 'true';
    else throw new UsageError(`invalid value '${v}' for --request-parameter: type must be bool (true|false), int or string`);
  }
  return out;
}

/** The name option `key` stores its values under; undefined for a key that is no value option. */
function valueOption(key: string): string | undefined {
  return Object.hasOwn(VALUE_OPTIONS, key) ? VALUE_OPTIONS[key] : undefined;
}

/** A command line as read: each value option's values in order (by option name), and the flags given. */
interface ReadArgs {
  readonly values: ReadonlyMap<string, string[]>;
  readonly flags: ReadonlySet<string>;
}

/** Splits argv into options and their values as getopt does (`--key=value`, `-p5000`, `-p 5000`). */
function readArgs(argv: readonly string[]): ReadArgs {
  const values = new Map<string, string[]>();
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    let key = arg;
    let value: string | undefined;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      key = arg.slice(0, eq);
      value = arg.slice(eq + 1);
    } else if (/^-[a-zA-Z]./.test(arg) && valueOption(arg.slice(0, 2))) {
      key = arg.slice(0, 2); // getopt's -p5000
      value = arg.slice(2);
    }
    if (FLAGS.has(key) && value === undefined) {
      flags.add(key);
      continue;
    }
    const name = valueOption(key);
    if (!name) throw new UsageError(`unknown option '${arg}'`);
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`option '${key}' needs a value`);
    }
    values.set(name, [...(values.get(name) ?? []), value]);
  }
  return { values, flags };
}

/** The options that pick one of a few values (model, protocol, service kind, load and measurement modes), checked. */
function checkedChoices(last: (name: string) => string | undefined, flags: ReadonlySet<string>) {
  const model = last('model');
  if (!model) throw new UsageError('-m (model name) is required');
  const protocol = (last('protocol') ?? 'http').toLowerCase();
  if (protocol !== 'http' && protocol !== 'grpc') throw new UsageError(`invalid value '${protocol}' for -i: expected http or grpc`);
  if (flags.has('--streaming') && protocol !== 'grpc') throw new UsageError('streaming is only allowed with gRPC protocol');
  const serviceKind = last('service-kind');
  if (serviceKind !== undefined && serviceKind !== 'triton') {
    throw new UsageError(`invalid value '${serviceKind}' for --service-kind: only triton is supported`);
  }
  const concurrency = last('concurrency-range');
  const rate = last('request-rate-range');
  if (concurrency && rate) throw new UsageError('--concurrency-range and --request-rate-range cannot be used together');
  const distribution = last('request-distribution') ?? DEFAULTS.requestDistribution;
  if (distribution !== 'constant' && distribution !== 'poisson') {
    throw new UsageError(`invalid value '${distribution}' for --request-distribution: expected constant or poisson`);
  }
  const mode = last('measurement-mode') ?? DEFAULTS.measurementMode;
  if (mode !== 'time_windows' && mode !== 'count_windows') {
    throw new UsageError(`invalid value '${mode}' for --measurement-mode: expected time_windows or count_windows`);
  }
  return { model, protocol: protocol as Protocol, concurrency, rate, distribution, mode } as const;
}

/** Parses a `tritium perf` command line. Throws UsageError; returns `'help'` for -h. */
export function parsePerfArgs(argv: readonly string[]): PerfOptions | 'help' {
  const { values, flags } = readArgs(argv);
  if (flags.has('-h') || flags.has('--help')) return 'help';

  const last = (name: string) => values.get(name)?.at(-1);
  const { model, protocol, concurrency, rate, distribution, mode } = checkedChoices(last, flags);
  const percentile = last('percentile');
  const shapes = new Map<string, number[]>();
  for (const s of values.get('shape') ?? []) {
    const [name, dims] = parseShape(s);
    shapes.set(name, dims);
  }
  const options: PerfOptions = {
    model,
    modelVersion: last('model-version') ?? '',
    url: last('url') ?? (protocol === 'grpc' ? 'localhost:8001' : 'localhost:8000'),
    protocol,
    batchSize: int('-b', last('batch-size') ?? String(DEFAULTS.batchSize), 1),
    ...(concurrency ? { concurrencyRange: parseRange('--concurrency-range', concurrency, true) } : {}),
    ...(rate ? { requestRateRange: parseRange('--request-rate-range', rate, false) } : {}),
    requestDistribution: distribution,
    inputData: values.get('input-data') ?? [],
    shapes,
    ...(last('string-data') !== undefined ? { stringData: last('string-data')! } : {}),
    stringLength: int('--string-length', last('string-length') ?? String(DEFAULTS.stringLength), 0),
    measurementIntervalMs: int('-p', last('measurement-interval') ?? String(DEFAULTS.measurementIntervalMs), 1),
    measurementMode: mode,
    measurementRequestCount: int('--measurement-request-count', last('measurement-request-count') ?? String(DEFAULTS.measurementRequestCount), 1),
    ...(percentile !== undefined ? { percentile: int('--percentile', percentile, 1) } : {}),
    stabilityPercentage: num('-s', last('stability-percentage') ?? String(DEFAULTS.stabilityPercentage), 0),
    maxTrials: int('-r', last('max-trials') ?? String(DEFAULTS.maxTrials), 1),
    latencyThresholdMs: int('-l', last('latency-threshold') ?? String(DEFAULTS.latencyThresholdMs), 0),
    warmupRequestCount: int('--warmup-request-count', last('warmup-request-count') ?? String(DEFAULTS.warmupRequestCount), 0),
    ...(last('filename') ? { filename: last('filename')! } : {}),
    ...(last('plot') ? { plot: last('plot')! } : {}),
    verbose: flags.has('-v') || flags.has('--verbose'),
    ...(values.has('header') ? { headers: parseHeaders(values.get('header')!) } : {}),
    ...(values.has('request-parameter') ? { requestParameters: parseRequestParameters(values.get('request-parameter')!) } : {}),
    ...(flags.has('--streaming') ? { streaming: true } : {}),
  };
  if (options.percentile !== undefined && options.percentile > 99) {
    throw new UsageError(`invalid value '${options.percentile}' for --percentile: expected 1..99`);
  }
  return options;
}
