/**
 * The search: coordinate descent from the configs as written, one knob at a time (batching mode,
 * instances per step, queue delay, preferred size, adaptive batching, token budget), keeping a move only when it
 * measures better (meets the SLO, then more throughput by over 2%, then lower latency). It prunes with
 * what it measured: a step whose extra instance gained under 5% is saturated (the CPU is) and is not
 * raised again; the delay and preferred size walk their ladders only while a step pays (a bisection
 * toward the best rung); no candidate is measured twice; and a candidate starts only when the time
 * left covers the longest one so far.
 */
import { candidateKey, KNOBS, neighbours, baselineCandidate, type Candidate, type ModelPlan } from './search-space.ts';
import { better, type Measured } from './measure-candidate.ts';

export interface SearchArgs {
  readonly plan: ModelPlan;
  readonly maxInstances: number;
  readonly budgetMs: number;
  readonly measure: (c: Candidate) => Promise<Measured>;
  readonly now?: () => number;
  /** Called after every candidate with the results so far and the milliseconds left. */
  readonly progress?: (measured: readonly Measured[], leftMs: number) => void;
}

export interface SearchResult {
  readonly measured: readonly Measured[];
  readonly winner: Measured;
  readonly baseline: Measured;
  /** Why the search stopped: 'converged' (no move helps) or 'time budget'. */
  readonly stopped: 'converged' | 'time budget';
}

const INSTANCE_GAIN = 1.05;

export async function search(args: SearchArgs): Promise<SearchResult> {
  const now = args.now ?? (() => performance.now());
  const started = now();
  const left = () => args.budgetMs - (now() - started);
  const measured: Measured[] = [];
  const seen = new Set<string>();
  let longest = 0;
  const run = async (c: Candidate): Promise<Measured> => {
    const t0 = now();
    seen.add(candidateKey(c));
    const m = await args.measure(c);
    longest = Math.max(longest, now() - t0);
    measured.push(m);
    args.progress?.(measured, left());
    return m;
  };

  const baseline = await run(baselineCandidate(args.plan));
  let best = baseline;
  const saturated = new Set<string>();
  let plan = args.plan;
  let stopped: SearchResult['stopped'] = 'converged';
  for (let round = 0, improved = true; improved && round < 20; round++) {
    improved = false;
    for (const knob of KNOBS) {
      for (const next of neighbours(plan, best.candidate, knob, args.maxInstances)) {
        if (seen.has(candidateKey(next))) continue;
        const grown = knob === 'instances' ? Object.keys(next.instances).find((m) => next.instances[m] !== best.candidate.instances[m]) : undefined;
        if (grown && saturated.has(grown)) continue;
        if (left() < longest) {
          stopped = 'time budget';
          return { measured, winner: best, baseline, stopped };
        }
        const m = await run(next);
        // A server that refuses adaptive batching is not offered it again.
        if (m.error && knob === 'adaptive') plan = { ...plan, adaptiveSupported: false };
        if (grown && !(m.best && best.best && m.best.throughput >= best.best.throughput * INSTANCE_GAIN) && !(m.best && !best.best)) saturated.add(grown);
        if (better(m, best)) {
          best = m;
          improved = true;
          break; // continue from the new point on the next knob
        }
      }
    }
  }
  return { measured, winner: best, baseline, stopped };
}
