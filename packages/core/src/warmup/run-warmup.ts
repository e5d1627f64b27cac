/**
 * Runs `model_warmup` on each instance before its version turns READY; any failure fails the load
 * with Triton's wording (`failed to run warmup sample '<name>': <error>`).
 */
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { ModelInstance } from '../backend/spi.ts';
import { executeDecoupledToEnd } from '../backend/decoupled-to-end.ts';
import type { InferRequest } from '../types.ts';
import { warmupTensors } from './warmup-data.ts';

export async function runWarmup(config: ModelConfig, modelDir: string, instances: readonly ModelInstance[]): Promise<void> {
  for (const sample of config.model_warmup ?? []) {
    let batches: Awaited<ReturnType<typeof warmupTensors>>;
    try {
      batches = await warmupTensors(config, modelDir, sample);
    } catch (err) {
      throw new InferError('INVALID_ARG', `failed to run warmup sample '${sample.name}': ${InferError.from(err).message}`);
    }
    const repeats = Math.max(1, sample.count);
    for (const instance of instances) {
      for (let r = 0; r < repeats; r++) {
        const batch: InferRequest[] = batches.map((inputs, i) => ({
          id: `warmup_${sample.name}_${r}_${i}`,
          model: config.name,
          inputs: inputs.map((t) => ({ ...t, data: t.data.slice() })),
        }));
        let failed: InferError | undefined;
        try {
          failed = await executeOnce(config, instance, batch);
        } catch (err) {
          throw new InferError('INTERNAL', `failed to run warmup sample '${sample.name}': ${InferError.from(err).message}`);
        }
        if (failed) {
          throw new InferError(failed.code, `failed to run warmup sample '${sample.name}': ${failed.message}`);
        }
      }
    }
  }
}

/** One warmup execution; decoupled models run through their response sinks. Returns the first request error. */
async function executeOnce(config: ModelConfig, instance: ModelInstance, batch: InferRequest[]): Promise<InferError | undefined> {
  const signal = new AbortController().signal;
  if (config.model_transaction_policy?.decoupled && instance.executeDecoupled) {
    let failed: InferError | undefined;
    const sinks = batch.map(() => ({
      response: () => {},
      complete: (error?: InferError) => {
        failed ??= error;
      },
    }));
    await executeDecoupledToEnd(instance, batch, sinks, signal);
    return failed;
  }
  const { results } = await instance.execute(batch, signal);
  return results.find((r): r is InferError => InferError.is(r));
}
