/**
 * config.pbtxt parsing speed: a generated ~2,000-line config (inputs, outputs, ensemble steps with
 * maps, dynamic batching, parameters), parsed warm; median of many runs. Target: < 5 ms.
 * Side by side: our JSON reader and the built-in JSON.parse on the same config's Triton JSON, and
 * normalize + validate.
 *
 *   node bench/dist/config-parse.bench.js
 */
import { cpus, loadavg } from 'node:os';
import { modelConfigFromJson, modelConfigToJson, normalizeModelConfig, parseModelConfigText, validateModelConfig } from '@tritium/core/config';

function bigConfig(): string {
  const lines: string[] = ['# generated benchmark config', 'name: "big"', 'platform: "ensemble"', 'max_batch_size: 64', 'input ['];
  const n = 105;
  for (let i = 0; i < n; i++) {
    lines.push('  {', `    name: "INPUT_${i}"`, '    data_type: TYPE_FP32', '    dims: [ -1, 16, 0x10 ]', `  }${i + 1 < n ? ',' : ''}`);
  }
  lines.push(']', 'output [');
  for (let i = 0; i < n; i++) {
    lines.push('  {', `    name: "OUTPUT_${i}"`, '    data_type: TYPE_INT64', '    dims: [ 8 ]', `  }${i + 1 < n ? ',' : ''}`);
  }
  lines.push(']', 'ensemble_scheduling {', '  step [');
  for (let i = 0; i < n; i++) {
    lines.push(
      '    {',
      `      model_name: "model_${i}"`,
      '      model_version: -1',
      '      input_map { key: "IN" value: "INPUT_' + i + '" }',
      '      output_map [',
      `        { key: "OUT" value: "OUTPUT_${i}" }`,
      '      ]',
      `    }${i + 1 < n ? ',' : ''}`,
    );
  }
  lines.push('  ]', '}', 'dynamic_batching {', '  preferred_batch_size: [ 8, 16, 32, 64 ]', '  max_queue_delay_microseconds: 18446744073709551615');
  lines.push('}');
  while (lines.length < 2000) lines.push(`parameters { key: "p${lines.length}" value: { string_value: "v\\t${lines.length}" } }`);
  return `${lines.join('\n')}\n`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Median and minimum (the minimum shows the cost on a quiet machine; the median what a busy one sees). */
function time(fn: () => unknown, runs: number): [number, number] {
  for (let i = 0; i < 30; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  return [median(samples), Math.min(...samples)];
}

const text = bigConfig();
const lineCount = text.split('\n').length - 1;
const parsed = parseModelConfigText(text);
const json = modelConfigToJson(parsed);
const normalized = normalizeModelConfig(parsed, { modelName: 'big' });
validateModelConfig(normalized);

const rows: Array<[string, [number, number]]> = [
  [`parseModelConfigText (${lineCount} lines, ${(text.length / 1024).toFixed(0)} KiB)`, time(() => parseModelConfigText(text), 200)],
  ['modelConfigFromJson (same config as Triton JSON)', time(() => modelConfigFromJson(json), 200)],
  ['JSON.parse (same JSON, no schema, baseline)', time(() => JSON.parse(json), 200)],
  ['modelConfigToJson', time(() => modelConfigToJson(normalized), 200)],
  ['normalize + validate', time(() => validateModelConfig(normalizeModelConfig(parsed, { modelName: 'big' })), 200)],
];
const parseMs = rows[0]![1][0];
console.log(`config-parse benchmark (200 warm runs; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs)`);
console.log(`  ${''.padEnd(58)} ${'median'.padStart(8)}    ${'min'.padStart(8)}    median vs parse`);
for (const [name, [med, min]] of rows) {
  console.log(`  ${name.padEnd(58)} ${med.toFixed(3).padStart(8)} ms ${min.toFixed(3).padStart(8)} ms ${(med / parseMs).toFixed(2).padStart(6)}x`);
}
console.log(`target: parse < 5 ms (median) → ${parseMs < 5 ? 'met' : 'NOT met'}`);
