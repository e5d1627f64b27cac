/** ValidateEnsembleSchedulingConfig: an ensemble's own rules and its data-flow graph, Triton's messages. */
import type { ModelConfig } from './model-config.ts';
import { PLATFORMS } from './normalize.ts';
import { fail } from './validation-error.ts';

interface GraphTensor {
  readonly name: string;
  isOutput: boolean;
  ready: boolean;
  readonly prev: GraphTensor[];
  readonly next: GraphTensor[];
}

/** ValidateEnsembleSchedulingConfig: the ensemble's own rules and its data-flow graph. */
export function validateEnsemble(config: ModelConfig): void {
  const e = config.name;
  if (config.platform !== PLATFORMS.ensemble) {
    fail(`ensemble scheduling cannot be set for model '${e}' whose platform is not ensemble`, 'ensemble_scheduling');
  }
  if (config.instance_group.length !== 0) fail(`instance group should not be specified for ensemble '${e}'`, 'instance_group');
  if (config.optimization) fail(`optimization should not be specified for ensemble '${e}'`, 'optimization');
  if (config.model_warmup.length !== 0) fail(`model_warmup can not be specified for ensemble '${e}'`, 'model_warmup');
  const steps = config.ensemble_scheduling!.step;
  if (steps.length === 0) fail(`must specify 'step' for ensemble '${e}'`, 'ensemble_scheduling');
  const tensors = stepGraph(e, steps);
  markReady(config, tensors);
  const outputs = new Set<string>();
  for (const output of config.output) {
    const t = tensors.get(output.name);
    if (!t) fail(`ensemble output '${output.name}' for ensemble ${e}' is not used`, 'output');
    if (!t.ready) fail(notWrittenMessage(e, output.name, t), 'output');
    outputs.add(output.name);
  }
  for (const t of tensors.values()) {
    if (outputs.has(t.name)) continue;
    if (!t.ready || t.next.length === 0) fail(`ensemble tensor '${t.name}' is unused in ensemble '${e}'`, 'ensemble_scheduling');
  }
}

type EnsembleStep = NonNullable<ModelConfig['ensemble_scheduling']>['step'][number];

/** The ensemble tensors the steps name, by name, each step's outputs linked from its inputs. */
function stepGraph(e: string, steps: readonly EnsembleStep[]): Map<string, GraphTensor> {
  const tensors = new Map<string, GraphTensor>();
  const tensor = (name: string, isOutput: boolean): GraphTensor => {
    let t = tensors.get(name);
    if (!t) {
      t = { name, isOutput, ready: false, prev: [], next: [] };
      tensors.set(name, t);
    }
    return t;
  };
  steps.forEach((step, idx) => {
    const path = `ensemble_scheduling.step[${idx}]`;
    if (step.model_name === '') fail(`must specify 'model_name' in step ${idx} of ensemble '${e}'`, path);
    if (Object.keys(step.input_map).length === 0) fail(`must specify 'input_map' in step ${idx} of ensemble '${e}'`, path);
    if (Object.keys(step.output_map).length === 0) fail(`must specify 'output_map' in step ${idx} of ensemble '${e}'`, path);
    const produced: GraphTensor[] = [];
    for (const ensembleName of Object.values(step.output_map)) {
      const existing = tensors.get(ensembleName);
      if (existing) {
        if (existing.isOutput) {
          fail(`ensemble tensor '${ensembleName}' can appear in an output map only once for ensemble '${e}' step ${idx}`, path);
        }
        existing.isOutput = true;
        produced.push(existing);
      } else {
        produced.push(tensor(ensembleName, true));
      }
    }
    // Map keys are unique, so "input mapped to multiple ensemble tensors" cannot arise from a map.
    for (const ensembleName of Object.values(step.input_map)) {
      const consumed = tensor(ensembleName, false);
      for (const out of produced) {
        out.prev.push(consumed);
        consumed.next.push(out);
      }
    }
  });
  return tensors;
}

/** Marks ready every tensor the ensemble's inputs reach (all of a tensor's inputs ready). */
function markReady(config: ModelConfig, tensors: ReadonlyMap<string, GraphTensor>): void {
  const queue: GraphTensor[] = [];
  for (const input of config.input) {
    const t = tensors.get(input.name);
    if (!t) fail(`ensemble input '${input.name}' for ensemble ${config.name}' is not used`, 'input');
    t.ready = true;
    queue.push(t);
  }
  for (let head = 0; head < queue.length; head++) {
    for (const next of queue[head]!.next) {
      if (next.ready) continue;
      if (next.prev.every((p) => p.ready)) {
        next.ready = true;
        queue.push(next);
      }
    }
  }
}

/** Triton's message for an ensemble output no step writes, naming the first tensor that never became ready. */
function notWrittenMessage(e: string, output: string, t: GraphTensor): string {
  let message = `output '${output}' for ensemble '${e}' is not written`;
  // Walk back to the first tensor that never became ready.
  let last = t;
  let prev: GraphTensor[] | undefined = t.prev;
  const seen = new Set<string>();
  while (prev && prev.length > 0) {
    const nodes: GraphTensor[] = prev;
    prev = undefined;
    for (const node of nodes) {
      if (!node.ready && !seen.has(node.name)) {
        seen.add(node.name);
        last = node;
        prev = node.prev;
        break;
      }
    }
  }
  if (last.name !== t.name) message += `: at least one of its depending tensors, '${last.name}', is not connected`;
  return message;
}
