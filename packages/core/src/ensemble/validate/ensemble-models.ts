/**
 * Load-time ensemble checks that need the composing models' completed configs (Triton's
 * ValidateEnsembleConfig): batch-size limits, every step input mapped exactly once to an
 * existing input, outputs mapped from existing outputs, data types and shapes consistent across
 * producers and consumers (-1 is a wildcard; batching and non-batching models are compared with
 * their full shapes), and no step fed by two different decoupled models.
 */
import { InferError } from '../../errors.ts';
import type { ModelConfig } from '../../config/model-config.ts';
import { shapeToString } from '../../backend/compare-dims.ts';

interface TensorNode {
  model: string;
  dataType: string;
  dims: number[];
  fullDims: number[];
  decoupled: boolean;
  label: number;
  visited: boolean;
  prev: TensorNode[];
  next: TensorNode[];
  /** Shared by every output of one step, so they carry one decouple label. */
  sibling?: { label: number; visited: boolean };
}

function tensorNode(model: string, batching: boolean, dataType: string, dims: readonly number[]): TensorNode {
  return {
    model,
    dataType,
    dims: [...dims],
    fullDims: batching ? [-1, ...dims] : [...dims],
    decoupled: false,
    label: 0,
    visited: false,
    prev: [],
    next: [],
  };
}

function dimsMatch(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((d, i) => d === -1 || b[i] === -1 || d === b[i]);
}


function checkConsistent(lhs: TensorNode, rhs: TensorNode, prefix: string): void {
  if (lhs.dataType !== rhs.dataType) {
    throw new InferError(
      'INVALID_ARG',
      `${prefix}inconsistent data type: ${lhs.dataType} is inferred from model ${lhs.model} while ${rhs.dataType} is inferred from model ${rhs.model}`,
    );
  }
  if (!dimsMatch(lhs.dims, rhs.dims) && !dimsMatch(lhs.fullDims, rhs.fullDims)) {
    throw new InferError(
      'INVALID_ARG',
      `${prefix}inconsistent shape: ${shapeToString(lhs.fullDims)} is inferred from model ${lhs.model} while ${shapeToString(rhs.fullDims)} is inferred from model ${rhs.model}`,
    );
  }
}

/** What the ensemble validation learned: whether the ensemble must be served as decoupled. */
export interface EnsembleValidation {
  readonly decoupled: boolean;
}

/**
 * How the messages name the ensemble and a step's model: Triton prints identifiers
 * (`namespace::name` with model namespacing). Default: the names.
 */
export interface EnsembleModelIds {
  readonly ensemble: string;
  readonly step: (modelName: string) => string;
}

/**
 * Validates `ensemble` against the configs of its composing models (`composing(name)` returns the
 * config of the version a step would use). Throws INVALID_ARG with Triton's message.
 */
export function validateEnsembleModels(
  ensemble: ModelConfig,
  composing: (modelName: string) => ModelConfig,
  ids?: EnsembleModelIds,
): EnsembleValidation {
  const E = ids?.ensemble ?? ensemble.name;
  const tensors = ensembleTensorGraph(ensemble, E);
  for (const step of ensemble.ensemble_scheduling?.step ?? []) {
    const config = composing(step.model_name);
    addStep(tensors, ensemble, step, config, E, ids ? ids.step(step.model_name) : step.model_name);
  }
  return { decoupled: decoupledLabels(ensemble, tensors, E) !== 0 };
}

type EnsembleStep = NonNullable<ModelConfig['ensemble_scheduling']>['step'][number];

/** The ensemble's own inputs and outputs as tensor nodes, by name; every output feeds one sink node. */
function ensembleTensorGraph(ensemble: ModelConfig, E: string): Map<string, TensorNode> {
  const batching = ensemble.max_batch_size > 0;
  const tensors = new Map<string, TensorNode>();
  for (const input of ensemble.input) {
    tensors.set(input.name, tensorNode(E, batching, input.data_type, input.reshape ? input.reshape.shape : input.dims));
  }
  const sink = tensorNode(E, false, '', []);
  for (const output of ensemble.output) {
    const n = tensorNode(E, batching, output.data_type, output.reshape ? output.reshape.shape : output.dims);
    // An ensemble tensor that is both an input and an output keeps the input node (map emplace).
    const node = tensors.get(output.name) ?? n;
    tensors.set(output.name, node);
    sink.prev.push(node);
    node.next.push(sink);
  }
  return tensors;
}

/**
 * Checks one step (model `M`, config `config`) against the ensemble and the tensors known so far,
 * and adds its tensors and edges to the graph.
 */
function addStep(tensors: Map<string, TensorNode>, ensemble: ModelConfig, step: EnsembleStep, config: ModelConfig, E: string, M: string): void {
  if (config.max_batch_size !== 0 && config.max_batch_size < ensemble.max_batch_size) {
    throw new InferError(
      'INVALID_ARG',
      `ensemble ${E} allows maximum batch size ${ensemble.max_batch_size}, but it contains model ${step.model_name} which only allows maximum batch size to be ${config.max_batch_size}`,
    );
  }
  const stepBatching = config.max_batch_size > 0;
  const inputNames = new Set(config.input.map((i) => i.name));
  for (const [inputName, tensor] of Object.entries(step.input_map)) {
    if (!inputNames.has(inputName)) {
      throw new InferError(
        'INVALID_ARG',
        `in ensemble ${E}, ensemble tensor ${tensor} is mapping to non-existing input ${inputName} in model ${M}`,
      );
    }
  }
  for (const input of config.input) {
    const mapped = Object.entries(step.input_map).filter(([k]) => k === input.name);
    if (mapped.length === 0) {
      if (input.optional) continue;
      throw new InferError(
        'INVALID_ARG',
        `in ensemble ${E}, input ${input.name} in model ${M} is not mapped to any ensemble tensors`,
      );
    }
    for (const [, tensor] of mapped) {
      const modelTensor = tensorNode(M, stepBatching, input.data_type, input.dims);
      const existing = tensors.get(tensor);
      if (existing) checkConsistent(existing, modelTensor, `in ensemble ${E}, ensemble tensor ${tensor}: `);
      else tensors.set(tensor, modelTensor);
    }
  }
  const outputNames = new Set(config.output.map((o) => o.name));
  for (const [outputName, tensor] of Object.entries(step.output_map)) {
    if (!outputNames.has(outputName)) {
      throw new InferError(
        'INVALID_ARG',
        `in ensemble ${E}, ensemble tensor ${tensor} is mapped from non-existing output ${outputName} in model ${M}`,
      );
    }
  }
  const sibling = { label: 0, visited: false };
  for (const [outputName, tensor] of Object.entries(step.output_map)) {
    const output = config.output.find((o) => o.name === outputName)!;
    const modelTensor = tensorNode(M, stepBatching, output.data_type, output.dims);
    let node = tensors.get(tensor);
    if (node) checkConsistent(node, modelTensor, `in ensemble ${E}, ensemble tensor ${tensor}: `);
    else {
      node = modelTensor;
      tensors.set(tensor, node);
    }
    node.sibling = sibling;
  }
  const decoupled = config.model_transaction_policy?.decoupled === true;
  for (const tensor of Object.values(step.output_map)) {
    const node = tensors.get(tensor)!;
    node.decoupled = decoupled;
    for (const inputTensor of Object.values(step.input_map)) {
      const prev = tensors.get(inputTensor)!;
      node.prev.push(prev);
      prev.next.push(node);
    }
  }
}

/**
 * Propagates decouple labels from the ensemble's inputs and returns how many decoupled producers
 * it found (0: the ensemble is not decoupled). A node whose inputs carry different labels would
 * mix responses of different decoupled producers, which Triton refuses.
 */
function decoupledLabels(ensemble: ModelConfig, tensors: ReadonlyMap<string, TensorNode>, E: string): number {
  let label = 0;
  const queue: TensorNode[] = [];
  for (const input of ensemble.input) {
    const n = tensors.get(input.name)!;
    n.visited = true;
    queue.push(n);
  }
  for (let i = 0; i < queue.length; i++) {
    for (const next of queue[i]!.next) {
      if (next.visited || !next.prev.every((p) => p.visited)) continue;
      const prevLabel = next.prev[0]!.label;
      if (next.prev.some((p) => p.label !== prevLabel)) {
        throw new InferError(
          'INVALID_ARG',
          `in ensemble ${E}, step of model '${next.model}' receives inputs originated from different decoupled models`,
        );
      }
      if (next.sibling) {
        if (next.sibling.visited) next.label = next.sibling.label;
        else {
          next.label = next.decoupled ? ++label : prevLabel;
          next.sibling.label = next.label;
          next.sibling.visited = true;
        }
      } else next.label = next.decoupled ? ++label : prevLabel;
      next.visited = true;
      queue.push(next);
    }
  }
  return label;
}
