/**
 * Triton's identity backend, model side (identity_backend `ModelState::ValidateModelConfig` and
 * `CreationDelay`): INPUT<i> → OUTPUT<i> pairs of equal datatype and shape, optional inputs,
 * `execute_delay_ms`, `instance_wise_delay_multiplier`, `creation_delay_sec`, with its messages.
 */
import { type DataType, type ModelConfig } from '@tritium/core';
import { shapeToString, type LoadSpec } from '@tritium/core/backend';
import { configToWireDataType } from '@tritium/core/tensor';
import { setTimeout as sleep } from 'node:timers/promises';
import { backendShape, intParameter, invalidArg } from '../config-read.ts';
import type { ExampleModelPlan } from '../example-backend.ts';

/** An optional input's zero output when the client leaves it out but asks for its output. */
export interface OptionalZero {
  readonly datatype: DataType;
  /** Dims without the batch dim, -1 read as 1 (Triton's rule). */
  readonly shape: readonly number[];
}

export interface IdentityInit {
  readonly model: string;
  readonly version: number;
  readonly batching: boolean;
  /** The config's output names, in order: what a request naming no output gets. */
  readonly outputs: readonly string[];
  /** Optional inputs by index suffix (`'0'` for INPUT0). */
  readonly optional: Readonly<Record<string, OptionalZero>>;
  readonly executeDelayMs: number;
  readonly delayMultiplier: number;
  /** Creation order of the instance within the model (Triton's `instance_count_`). */
  readonly instanceIndex: number;
}

/** Triton bounds nothing here; a config asking a load to sleep for hours is refused instead. */
const MAX_CREATION_DELAY_SEC = 600;

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** Throws INVALID_ARG with Triton's message when the config is not an identity model. */
export function planIdentity(spec: Pick<LoadSpec, 'config' | 'version'>): ExampleModelPlan<IdentityInit> {
  const config: ModelConfig = spec.config;
  const inputs = config.input;
  const outputs = config.output;
  if (inputs.length !== outputs.length) throw invalidArg('model configuration must have equal input/output pairs');
  // Keyed by the text after INPUT / OUTPUT; the first of two equal keys wins, as std::map::insert.
  const inputInfos = new Map<string, { type: string; shape: number[] }>();
  const outputInfos = new Map<string, { type: string; shape: number[] }>();
  const optional: Record<string, OptionalZero> = {};
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i]!;
    const output = outputs[i]!;
    if (!input.name.startsWith('INPUT')) throw invalidArg(`expected input name to follow INPUT<index> pattern, got '${input.name}'`);
    if (!output.name.startsWith('OUTPUT')) throw invalidArg(`expected output name to follow OUTPUT<index> pattern, got '${output.name}'`);
    const inKey = input.name.slice('INPUT'.length);
    const outKey = output.name.slice('OUTPUT'.length);
    if (!inputInfos.has(inKey)) inputInfos.set(inKey, { type: input.data_type, shape: backendShape(input) });
    if (!outputInfos.has(outKey)) outputInfos.set(outKey, { type: output.data_type, shape: backendShape(output) });
    if (input.optional) {
      const datatype = configToWireDataType(input.data_type);
      if (!/^\d+$/.test(inKey) || !datatype) {
        throw invalidArg(`model '${config.name}': optional input '${input.name}' needs a numeric INPUT<index> name and a known datatype`);
      }
      optional[String(Number(inKey))] = { datatype, shape: backendShape(input).map((d) => (d === -1 ? 1 : d)) };
    }
  }
  for (const [key, out] of [...outputInfos.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const input = inputInfos.get(key);
    if (!input) throw invalidArg('expected input and output indices to match');
    if (input.type !== out.type) throw invalidArg(`expected input and output datatype to match, got ${input.type} and ${out.type}`);
    if (!sameShape(input.shape, out.shape)) {
      throw invalidArg(`expected input and output shape to match, got ${shapeToString(input.shape)} and ${shapeToString(out.shape)}`);
    }
  }
  const executeDelayMs = intParameter(config, 'execute_delay_ms') ?? 0;
  // Triton reads the multiplier only when an execute delay is configured.
  const delayMultiplier = config.parameters?.['execute_delay_ms'] ? (intParameter(config, 'instance_wise_delay_multiplier') ?? 0) : 0;
  const creationDelaySec = intParameter(config, 'creation_delay_sec');
  if (creationDelaySec !== undefined && (creationDelaySec < 0 || creationDelaySec > MAX_CREATION_DELAY_SEC)) {
    throw invalidArg(`model '${config.name}': parameter 'creation_delay_sec' must be between 0 and ${MAX_CREATION_DELAY_SEC}, got ${creationDelaySec}`);
  }
  return {
    init: {
      model: config.name,
      version: spec.version,
      batching: config.max_batch_size > 0,
      outputs: outputs.map((o) => o.name),
      optional,
      executeDelayMs: Math.max(0, executeDelayMs),
      delayMultiplier: Math.max(0, delayMultiplier),
      instanceIndex: 0,
    },
    ...(creationDelaySec ? { beforeInstances: () => sleep(creationDelaySec * 1000).then(() => undefined) } : {}),
  };
}

/** Triton's delay of one execute: `execute_delay_ms × max(multiplier × instance index, 1)`. */
export function executeDelayOf(init: IdentityInit): number {
  const multiplier = init.delayMultiplier > 0 ? init.delayMultiplier * init.instanceIndex : 0;
  return init.executeDelayMs * Math.max(multiplier, 1);
}
