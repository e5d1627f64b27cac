/**
 * What `tritium tune` shows and writes: the table of every candidate measured, the Pareto front of
 * latency against throughput as an SVG (the winner marked), and the winning config.pbtxt files,
 * each headed by comments giving the figures that chose it.
 */
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { modelConfigFromJson, printModelConfigText } from '@tritium/core/config';
import { plotSvg, type PlotPoint } from '../report/plot-svg.ts';
import { describe } from './search-space.ts';
import type { Measured } from './measure-candidate.ts';
import type { SearchResult } from './search.ts';
import type { TuneOptions } from './tune-options.ts';

const f1 = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(1));

/** One row per candidate: its knobs, its best level within the SLO (or its first level), and whether it meets it. */
export function candidateTable(result: SearchResult, tune: TuneOptions): { text: string; markdown: string } {
  const p = `p${tune.latencyBudget.percentile}`;
  const header = ['#', 'candidate', 'conc', 'infer/s', 'p50 ms', `${p} ms`, 'cpu ms/inf', 'batch sizes', 'SLO'];
  const rows = result.measured.map((m, i) => {
    const level = m.best ?? m.levels[0];
    const batches = level ? Object.entries(level.batchSizes).map(([k, v]) => `${k}:${v.toFixed(1)}`).join(' ') : '';
    // The config as written may also be the winner: say both.
    const marks = [m === result.baseline ? 'as written' : '', m === result.winner ? 'winner' : ''].filter((x) => x);
    const mark = marks.length > 0 ? ` (${marks.join(', ')})` : '';
    return [
      String(i + 1),
      `${describe(m.candidate)}${mark}`,
      level ? String(level.concurrency) : '-',
      level ? level.throughput.toFixed(0) : '-',
      f1(level?.p50Ms),
      f1(level?.budgetMs),
      f1(m.cpuPerInferenceMs),
      m.error ? `load failed: ${m.error.slice(0, 80)}` : batches,
      m.best ? 'meets' : 'misses',
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const text = [header, widths.map((w) => '-'.repeat(w)), ...rows].map((r) => r.map((c, i) => (i === 1 || i === 7 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
  const markdown = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
  return { text, markdown };
}

/** Every (candidate, level) point, the non-dominated ones joined as the front, the winner marked. */
export function paretoSvg(result: SearchResult, tune: TuneOptions): string {
  const points = result.measured.flatMap((m, i) => m.levels.map((l) => ({ x: l.throughput, y: l.budgetMs, label: `#${i + 1} c${l.concurrency}` })));
  const front = points
    .filter((a) => !points.some((b) => b !== a && b.x >= a.x && b.y <= a.y && (b.x > a.x || b.y < a.y)))
    .sort((a, b) => a.x - b.x);
  const w = result.winner.best;
  const winner: PlotPoint[] = w ? [{ x: w.throughput, y: w.budgetMs, label: `winner #${result.measured.indexOf(result.winner) + 1}` }] : [];
  const p = `p${tune.latencyBudget.percentile}`;
  return plotSvg({
    title: `tritium tune ${tune.model}: ${p} latency vs throughput (budget ${tune.latencyBudget.ms} ms)`,
    xLabel: 'throughput (infer/sec)',
    yLabel: `${p} latency (ms)`,
    series: [
      { name: 'candidates (each load level)', markersOnly: true, points: points.map((pt) => ({ x: pt.x, y: pt.y, hollow: true })) },
      { name: 'Pareto front', points: front },
      { name: `SLO ${p} <= ${tune.latencyBudget.ms} ms`, dashed: true, points: [{ x: 0, y: tune.latencyBudget.ms }, { x: Math.max(1, ...points.map((q) => q.x)), y: tune.latencyBudget.ms }] },
      { name: 'winner', markersOnly: true, points: winner },
    ],
    hollowLabel: 'candidate level',
  });
}

/** The comment block heading a written config: what chose it. */
function header(m: Measured, result: SearchResult, tune: TuneOptions, model: string): string {
  const b = m.best;
  const base = result.baseline.best;
  const p = `p${tune.latencyBudget.percentile}`;
  const lines = [
    `# Written by tritium tune -m ${tune.model} (${new Date().toISOString()}): candidate #${result.measured.indexOf(m) + 1} of ${result.measured.length}, ${describe(m.candidate)}`,
    b
      ? `# Measured: ${b.throughput.toFixed(0)} infer/s at concurrency ${b.concurrency}, p50 ${b.p50Ms.toFixed(1)} ms, ${p} ${b.budgetMs.toFixed(1)} ms (budget ${tune.latencyBudget.ms} ms)${m.cpuPerInferenceMs !== undefined ? `, ${m.cpuPerInferenceMs.toFixed(2)} ms CPU per inference` : ''}`
      : `# No candidate met ${p} <= ${tune.latencyBudget.ms} ms; this is the closest measured.`,
    base && b ? `# As written: ${base.throughput.toFixed(0)} infer/s at ${p} ${base.budgetMs.toFixed(1)} ms (${(b.throughput / base.throughput).toFixed(2)}x)` : '# As written: did not meet the budget',
    `# This file: ${model}`,
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * Writes the winner into `out`: each touched model's folder copied from `source` (when given, so the
 * output loads as a repository) and its config.pbtxt replaced by the winner's, with the header above.
 */
export function writeWinner(result: SearchResult, tune: TuneOptions, out: string, source: string | undefined): string[] {
  const written: string[] = [];
  for (const [model, json] of Object.entries(result.winner.configs)) {
    const dir = join(out, model);
    if (source && existsSync(join(source, model))) cpSync(join(source, model), dir, { recursive: true });
    mkdirSync(dir, { recursive: true });
    const text = printModelConfigText(modelConfigFromJson(JSON.stringify(json)));
    const file = join(dir, 'config.pbtxt');
    writeFileSync(file, header(result.winner, result, tune, model) + text);
    written.push(file);
  }
  return written;
}
