/**
 * Length-aware batching in an ensemble (`tritium.batch_tokens`, scheduler/token-budget.ts; beyond
 * Triton). The steps up to the one that produces the rows' lengths (the tokenizer) run on the whole
 * batch, as before. Then the rows are grouped by length (scheduler/length-groups.ts) and every step
 * that reads what that step produced, and every step after those, runs once per group: each
 * group's rows, with the tensors padded to the batch's longest row cut to the group's own longest.
 * The groups run at once (each step's scheduler runs them on as many instances as are free), and
 * their outputs are put back in row order, so each request's rows come back where they were.
 *
 * Which tensors are cut: those the lengths' producer (a step, or the ensemble's inputs) makes with a
 * variable first dim (`-1` in its config) and as long as the lengths tensor. Cutting removes only
 * positions every row of the group has as padding (mask 0), so a model that ignores masked
 * positions answers each row as it would alone (within float rounding of its own batch shapes).
 *
 * Failures keep the ensemble's rule: the first error wins, no new step starts in any group, steps in
 * flight drain, and the batch fails as a whole (the pipeline's batcher then isolates the request
 * that caused it). Statistics: each step counts each ensemble request once, in the group that holds
 * its first row; the token counts of each group go to the ensemble's statistics and, on the steps
 * that read cut tensors, to the executing model's.
 */
import type { ModelConfig } from '../../config/model-config.ts';
import { InferError } from '../../errors.ts';
import { groupByLength } from '../../scheduler/length-groups.ts';
import type { TokenBudget } from '../../scheduler/token-budget.ts';
import { putRowsBack, takeRows } from '../../tensor/rows.ts';
import { typedView, type Tensor } from '../../tensor/tensor.ts';
import type { CarriedRequest, TokenCount } from '../../types.ts';
import { ensemblePrefix, runSteps, stepVersion, type EnsembleContext, type EnsembleObservation, type EnsembleTensors, type SharedFailure } from './ensemble-run.ts';

/** Row lengths of an attention mask [rows, positions]: the last non-zero position + 1 (0 for none). */
export function maskLengths(mask: Tensor): Int32Array {
  if (mask.shape.length !== 2 || mask.datatype === 'BYTES') {
    throw new InferError('INVALID_ARG', `length tensor '${mask.name}' must be a [rows, positions] numeric mask, got ${mask.datatype} [${mask.shape.join(',')}]`);
  }
  const [rows, width] = mask.shape as [number, number];
  const values = typedView(mask);
  const out = new Int32Array(rows);
  for (let r = 0; r < rows; r++) {
    let last = width;
    // 0n == 0 and 0 == 0: one comparison reads every element type.
    while (last > 0 && values[r * width + last - 1] == 0) last--;
    out[r] = last;
  }
  return out;
}

/** Where the lengths tensor comes from, and which steps run per group (from the config; fixed at load). */
interface LengthPlan {
  /** Index of the step that writes the lengths tensor; -1 when it is an ensemble input. */
  readonly producer: number;
  /** Steps that run once per group. */
  readonly grouped: ReadonlySet<number>;
  /** Every other step (run on the whole batch first). */
  readonly whole: ReadonlySet<number>;
}

/** Plans length grouping for `config`; refuses a lengths tensor that nothing in the ensemble makes. */
export function planLengthGroups(config: ModelConfig, lengths: string): LengthPlan {
  const steps = config.ensemble_scheduling?.step ?? [];
  const isInput = config.input.some((i) => i.name === lengths);
  const producer = isInput ? -1 : steps.findIndex((s) => Object.values(s.output_map).includes(lengths));
  if (!isInput && producer < 0) {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter 'tritium.batch_tokens.lengths' names '${lengths}', which is neither an ensemble input nor a step's output`,
    );
  }
  const produced = new Set(producer < 0 ? config.input.map((i) => i.name) : Object.values(steps[producer]!.output_map));
  // Grouped: steps reading what the producer made, then every step reading what a grouped step made.
  const grouped = new Set<number>();
  const groupedTensors = new Set(produced);
  for (let changed = true; changed; ) {
    changed = false;
    steps.forEach((s, i) => {
      if (grouped.has(i) || i === producer || !Object.values(s.input_map).some((t) => groupedTensors.has(t))) return;
      grouped.add(i);
      for (const t of Object.values(s.output_map)) groupedTensors.add(t);
      changed = true;
    });
  }
  const whole = new Set(steps.map((_, i) => i).filter((i) => !grouped.has(i)));
  return { producer, grouped, whole };
}

/** The runner an ensemble context calls (EnsembleContext.lengthGroups). */
export function lengthGroupRunner(ctx: Omit<EnsembleContext, 'lengthGroups'>, policy: TokenBudget): NonNullable<EnsembleContext['lengthGroups']> {
  const plan = planLengthGroups(ctx.config, policy.lengths);
  const steps = ctx.config.ensemble_scheduling?.step ?? [];
  // What the grouped steps read (the only tensors each group needs).
  const read = new Set([...plan.grouped].flatMap((i) => Object.values(steps[i]!.input_map)));
  return async (request, tensors, observe) => {
    await runSteps(ctx, request, tensors, plan.whole, observe);
    const mask = tensors.get(policy.lengths);
    const rows = mask?.shape[0];
    // Nothing to regroup (no lengths, or tensors that do not share its rows): the rest runs as one batch.
    if (!mask || rows === undefined || !sameRows(tensors, read, rows)) return runSteps(ctx, request, tensors, plan.grouped, observe);
    const lengths = maskLengths(mask);
    const cut = cutTensors(ctx, plan, mask, tensors);
    const groups = groupByLength(lengths, { budget: policy.budget, maxRows: maxRows(ctx, plan), executionTokens: policy.executionTokens });
    const readsCut = new Set([...plan.grouped].filter((i) => Object.values(steps[i]!.input_map).some((t) => cut.has(t))));
    const tokensOf = (group: readonly number[]): { tokens: TokenCount; width: number } => {
      let width = 0;
      let real = 0;
      for (const r of group) {
        width = Math.max(width, lengths[r]!);
        real += lengths[r]!;
      }
      width = Math.max(1, width);
      return { tokens: { real, padded: width * group.length }, width };
    };
    if (groups.length === 1 && tokensOf(groups[0]!).width === mask.shape[1]) {
      // One group as long as the batch: the batch runs as it is.
      const { tokens } = tokensOf(groups[0]!);
      observe?.groupTokens?.(tokens);
      return runSteps(ctx, request, tensors, plan.grouped, { ...observe, stepTokens: (i) => (readsCut.has(i) ? tokens : undefined) });
    }
    const owners = rowOwners(observe, rows);
    const shared: SharedFailure = {};
    const results = groups.map((group) => {
      const { tokens, width } = tokensOf(group);
      observe?.groupTokens?.(tokens);
      const own: EnsembleTensors = new Map();
      for (const name of read) {
        const t = tensors.get(name);
        if (t !== undefined) own.set(name, t && takeRows(t, group, cut.has(name) ? width : undefined));
      }
      const groupObserve: EnsembleObservation = {
        ...(observe?.computeSink ? { computeSink: observe.computeSink } : {}),
        ...carriedOf(observe, owners, group),
        stepTokens: (i) => (readsCut.has(i) ? tokens : undefined),
      };
      return runSteps(ctx, request, own, plan.grouped, groupObserve, shared).then(() => own);
    });
    const settled = await Promise.allSettled(results);
    if (shared.error) {
      const prefix = ensemblePrefix(ctx.config.name);
      throw shared.error.message.startsWith(prefix) ? shared.error : shared.error.withPrefix(prefix);
    }
    for (const s of settled) if (s.status === 'rejected') throw s.reason;
    const outputs = (settled as PromiseFulfilledResult<EnsembleTensors>[]).map((s) => s.value);
    putBack(ctx.config, tensors, outputs, groups, rows);
  };
}

/** Every tensor the grouped steps read has `rows` rows (so each can be regrouped). */
function sameRows(tensors: EnsembleTensors, read: ReadonlySet<string>, rows: number): boolean {
  for (const name of read) {
    const t = tensors.get(name);
    if (t && (t.shape.length === 0 || t.shape[0] !== rows)) return false;
  }
  return true;
}

/**
 * Tensors to cut to a group's longest row: the mask, and what its producer makes with a variable
 * first dim in its config and as wide as the mask.
 */
function cutTensors(ctx: Omit<EnsembleContext, 'lengthGroups'>, plan: LengthPlan, mask: Tensor, tensors: EnsembleTensors): Set<string> {
  const steps = ctx.config.ensemble_scheduling?.step ?? [];
  const variable: string[] = [];
  if (plan.producer < 0) {
    for (const i of ctx.config.input) if (i.dims[0] === -1) variable.push(i.name);
  } else {
    const step = steps[plan.producer]!;
    const stepConfig = ctx.getModelConfig?.(step.model_name, stepVersion(step));
    for (const [modelOutput, tensor] of Object.entries(step.output_map)) {
      if (stepConfig?.output.find((o) => o.name === modelOutput)?.dims[0] === -1) variable.push(tensor);
    }
  }
  const out = new Set([mask.name]);
  for (const name of variable) {
    const t = tensors.get(name);
    if (t && t.shape.length >= 2 && t.shape[1] === mask.shape[1]) out.add(name);
  }
  return out;
}

/** Rows one group may hold: the smallest max_batch_size of the grouped steps' batching models (and the ensemble's). */
function maxRows(ctx: Omit<EnsembleContext, 'lengthGroups'>, plan: LengthPlan): number {
  const steps = ctx.config.ensemble_scheduling?.step ?? [];
  let limit = ctx.config.max_batch_size > 0 ? ctx.config.max_batch_size : Number.POSITIVE_INFINITY;
  for (const i of plan.grouped) {
    const s = steps[i]!;
    const m = ctx.getModelConfig?.(s.model_name, stepVersion(s))?.max_batch_size ?? 0;
    if (m > 0) limit = Math.min(limit, m);
  }
  return limit;
}

/** Row → index of the carried request it belongs to (undefined when the request carries no others). */
function rowOwners(observe: EnsembleObservation | undefined, rows: number): Int32Array | undefined {
  const per = observe?.carriedRows;
  if (!per) return undefined;
  const owners = new Int32Array(rows).fill(-1);
  let r = 0;
  per.forEach((n, i) => {
    for (let k = 0; k < n && r < rows; k++) owners[r++] = i;
  });
  return owners;
}

/** The carried requests a group counts: those whose first row it holds. */
function carriedOf(observe: EnsembleObservation | undefined, owners: Int32Array | undefined, group: readonly number[]): Pick<EnsembleObservation, 'carried' | 'firstCarried'> {
  if (!observe?.carried || !owners) return { ...(observe?.carried ? { carried: observe.carried } : {}), ...(observe?.firstCarried ? { firstCarried: observe.firstCarried } : {}) };
  const firsts = group.filter((r) => r === 0 || owners[r - 1] !== owners[r]).map((r) => owners[r]!).filter((i) => i >= 0);
  const pick = (list: readonly CarriedRequest[] | undefined) => (list ? firsts.map((i) => list[i]!).filter((c) => c !== undefined) : undefined);
  const carried = pick(observe.carried)!;
  const firstCarried = pick(observe.firstCarried);
  return { carried, ...(firstCarried ? { firstCarried } : {}) };
}

/** The grouped steps' outputs the ensemble answers with, put back in row order into `tensors`. */
function putBack(config: ModelConfig, tensors: EnsembleTensors, outputs: readonly EnsembleTensors[], groups: readonly (readonly number[])[], rows: number): void {
  for (const { name } of config.output) {
    if (tensors.has(name)) continue; // made before the groups (the whole batch's)
    const parts = outputs.map((o) => o.get(name));
    if (parts.every((p) => p === undefined)) continue;
    if (parts.every((p) => p === null)) {
      tensors.set(name, null);
      continue;
    }
    if (parts.some((p) => !p)) throw new InferError('INTERNAL', `in ensemble '${config.name}', output '${name}' was produced for some length groups only`);
    tensors.set(name, putRowsBack(parts as Tensor[], groups, rows));
  }
}
