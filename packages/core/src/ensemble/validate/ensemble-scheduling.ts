/**
 * Config-only ensemble checks (Triton's ValidateEnsembleSchedulingConfig): fields each step must
 * have, ensemble tensors written once, every input used, every output written, no dangling
 * tensors. Runs without the composing models; `validateEnsembleModels` does the rest at load.
 */
import { InferError } from '../../errors.ts';
import type { ModelConfig } from '../../config/model-config.ts';

const ENSEMBLE = 'ensemble';

interface TensorNode {
  ready: boolean;
  isOutput: boolean;
  prev: TensorNode[];
  next: TensorNode[];
}

function invalid(message: string): InferError {
  return new InferError('INVALID_ARG', message);
}

/** Builds the tensor graph of the steps; step indices in messages are 0-based, as Triton's. */
function buildGraph(config: ModelConfig): Map<string, TensorNode> {
  const graph = new Map<string, TensorNode>();
  const node = (name: string, isOutput: boolean): TensorNode => {
    let n = graph.get(name);
    if (!n) {
      n = { ready: false, isOutput, prev: [], next: [] };
      graph.set(name, n);
    }
    return n;
  };
  const steps = config.ensemble_scheduling?.step ?? [];
  steps.forEach((step, idx) => {
    const where = `in step ${idx} of ensemble '${config.name}'`;
    if (!step.model_name) throw invalid(`must specify 'model_name' ${where}`);
    if (Object.keys(step.input_map ?? {}).length === 0) throw invalid(`must specify 'input_map' ${where}`);
    if (Object.keys(step.output_map ?? {}).length === 0) throw invalid(`must specify 'output_map' ${where}`);
    const outputs: TensorNode[] = [];
    for (const tensor of Object.values(step.output_map)) {
      const existing = graph.get(tensor);
      if (existing) {
        if (existing.isOutput) {
          throw invalid(
            `ensemble tensor '${tensor}' can appear in an output map only once for ensemble '${config.name}' step ${idx}`,
          );
        }
        existing.isOutput = true;
        outputs.push(existing);
      } else outputs.push(node(tensor, true));
    }
    // input_map keys are unique by construction (a JSON map), so Triton's "mapped to multiple
    // ensemble tensors" cannot arise here; the parser reports duplicate keys.
    for (const tensor of Object.values(step.input_map)) {
      const input = node(tensor, false);
      for (const out of outputs) {
        out.prev.push(input);
        input.next.push(out);
      }
    }
  });
  return graph;
}

/** A tensor the output depends on that nothing writes and no ensemble input feeds. */
function unconnectedDependency(start: TensorNode, graph: Map<string, TensorNode>): string | undefined {
  const names = new Map<TensorNode, string>();
  for (const [name, n] of graph) names.set(n, name);
  const seen = new Set<TensorNode>();
  const stack = [...start.prev];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    if (!n.ready && n.prev.length === 0) return names.get(n);
    stack.push(...n.prev);
  }
  return undefined;
}

/**
 * Triton's config-level ensemble rules. Throws INVALID_ARG with Triton's message; a no-op for a
 * model that is neither an ensemble nor carries `ensemble_scheduling`.
 */
export function validateEnsembleScheduling(config: ModelConfig): void {
  const isEnsemble = config.platform === ENSEMBLE;
  if (!isEnsemble && !config.ensemble_scheduling) return;
  if (!isEnsemble) {
    throw invalid(`ensemble scheduling cannot be set for model '${config.name}' whose platform is not ${ENSEMBLE}`);
  }
  if (config.backend) {
    throw invalid(`Ensemble model '${config.name}' must have platform type 'ensemble' and empty backend type`);
  }
  if (!config.ensemble_scheduling) {
    throw invalid(`ensemble scheduling must be set for ensemble ${config.name} whose platform is ${ENSEMBLE}`);
  }
  if ((config.instance_group ?? []).length !== 0) {
    throw invalid(`instance group should not be specified for ensemble '${config.name}'`);
  }
  if (config.optimization) throw invalid(`optimization should not be specified for ensemble '${config.name}'`);
  if ((config.model_warmup ?? []).length !== 0) {
    throw invalid(`model_warmup can not be specified for ensemble '${config.name}'`);
  }
  if ((config.ensemble_scheduling.step ?? []).length === 0) {
    throw invalid(`must specify 'step' for ensemble '${config.name}'`);
  }

  const graph = buildGraph(config);
  const queue: TensorNode[] = [];
  for (const input of config.input ?? []) {
    const n = graph.get(input.name);
    // The unbalanced quote is Triton's own message.
    if (!n) throw invalid(`ensemble input '${input.name}' for ensemble ${config.name}' is not used`);
    n.ready = true;
    queue.push(n);
  }
  for (let i = 0; i < queue.length; i++) {
    for (const next of queue[i]!.next) {
      if (next.ready) continue;
      if (next.prev.every((p) => p.ready)) {
        next.ready = true;
        queue.push(next);
      }
    }
  }
  const outputs = new Set<string>();
  for (const output of config.output ?? []) {
    const n = graph.get(output.name);
    if (!n) throw invalid(`ensemble output '${output.name}' for ensemble ${config.name}' is not used`);
    if (!n.ready) {
      const missing = unconnectedDependency(n, graph);
      const detail = missing ? `: at least one of its depending tensors, '${missing}', is not connected` : '';
      throw invalid(`output '${output.name}' for ensemble '${config.name}' is not written${detail}`);
    }
    outputs.add(output.name);
  }
  for (const [name, n] of graph) {
    if (outputs.has(name)) continue;
    if (!n.ready || n.next.length === 0) throw invalid(`ensemble tensor '${name}' is unused in ensemble '${config.name}'`);
  }
}
