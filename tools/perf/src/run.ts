import { writeFileSync } from 'node:fs';
import { UsageError } from './args.ts';
import { loadLevels, type PerfOptions } from './options.ts';
import { buildRequests } from './input-data.ts';
import { createPerfClient, toInferInputs, type PerfClient } from './perf-client.ts';
import { profileLevel, type LevelResult } from './profiler.ts';
import { finalTable, levelBlock, settingsBlock } from './report/console.ts';
import { composingCsv, composingCsvPath, toCsv } from './report/csv.ts';
import { plotSvg } from './report/plot-svg.ts';

export interface RunOptions {
  /** Console output (default: nothing). */
  readonly write?: (text: string) => void;
  /** An existing client (default: one from `options.protocol`/`options.url`, closed at the end). */
  readonly client?: PerfClient;
}

/**
 * Runs a whole perf session: reads the model's metadata/config, prepares the requests once,
 * sweeps the load levels (stopping early past `--latency-threshold`), prints perf_analyzer's
 * blocks, and writes `-f` CSV and `--plot` SVG. Returns every level's result.
 */
export async function runPerf(options: PerfOptions, run: RunOptions = {}): Promise<LevelResult[]> {
  const write = run.write ?? (() => {});
  const { mode, levels } = loadLevels(options);
  const client =
    run.client ??
    createPerfClient(options.protocol, options.url, mode === 'concurrency' ? Math.max(...levels) : 256, {
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.requestParameters ? { parameters: options.requestParameters } : {}),
      ...(options.streaming ? { streaming: true } : {}),
    });
  try {
    const metadata = await client.metadata(options.model, options.modelVersion);
    const config = await client.config(options.model, options.modelVersion);
    const policy = config.model_transaction_policy;
    if (policy?.decoupled && !options.streaming) {
      // As Triton's ModelInfer and HTTP infer refuse such a model: say how to measure it instead.
      throw new UsageError(`model '${options.model}' is decoupled (model_transaction_policy { decoupled: true }): measure it with -i grpc --streaming`);
    }
    const steps = config.ensemble_scheduling?.step ?? [];
    const composing = steps.map((s) => String(s.model_name));
    const composingVersions = steps.map((s) => {
      const v = Number(s.model_version ?? -1);
      return v > 0 ? String(v) : '1';
    });
    const serverStats = await client.hasStatistics().catch(() => false);
    const requests = buildRequests(metadata, config, options).map(toInferInputs);
    let next = 0;
    const send = () => client.infer(options.model, options.modelVersion, requests[next++ % requests.length]!);

    write(settingsBlock(options));
    for (let i = 0; i < options.warmupRequestCount; i++) await send();
    const results: LevelResult[] = [];
    for (const level of levels) {
      write(mode === 'concurrency' ? `Request concurrency: ${level}\n` : `Request rate: ${level}\n`);
      const result = await profileLevel({ client, options, send, composing, serverStats, decoupled: policy?.decoupled === true }, mode, level, {
        progress: (line) => write(`${line}\n`),
      });
      results.push(result);
      write(`${levelBlock(result, options.protocol)}\n`);
      if (options.latencyThresholdMs > 0 && result.latency.avgUs / 1000 > options.latencyThresholdMs) {
        write(`Measured latency went over the set limit of ${options.latencyThresholdMs} msec.\n`);
        break;
      }
    }
    write(finalTable(results));
    if (options.filename) {
      writeFileSync(options.filename, toCsv(results));
      composing.forEach((model, i) => writeFileSync(composingCsvPath(options.filename!, model, composingVersions[i]!), composingCsv(results, model)));
    }
    if (options.plot) writeFileSync(options.plot, plotFor(options, results));
    return results;
  } finally {
    if (!run.client) client.close();
  }
}

/**
 * Throughput (x) against p50 and p99 latency (y), one point per load level, labelled with it. The
 * line runs in throughput order (as the CSV's rows): joined in load-level order it would double
 * back wherever more concurrency brought less throughput. A level that never measured stably is a
 * hollow marker, labelled as such.
 */
export function plotFor(options: PerfOptions, results: readonly LevelResult[]): string {
  const label = (r: LevelResult) => `${r.mode === 'concurrency' ? `c${r.level}` : `${r.level}/s`}${r.stable ? '' : ' (unstable)'}`;
  const ordered = [...results].sort((a, b) => a.throughput - b.throughput);
  return plotSvg({
    title: `${options.model}: throughput vs latency (${options.protocol}, batch ${options.batchSize})`,
    xLabel: 'throughput (infer/sec)',
    yLabel: 'latency (ms)',
    hollowLabel: 'unstable level',
    series: [
      { name: 'p50', points: ordered.map((r) => ({ x: r.throughput, y: r.latency.p50Us / 1000, label: label(r), hollow: !r.stable })) },
      { name: 'p99', dashed: true, points: ordered.map((r) => ({ x: r.throughput, y: r.latency.p99Us / 1000, hollow: !r.stable })) },
    ],
  });
}
