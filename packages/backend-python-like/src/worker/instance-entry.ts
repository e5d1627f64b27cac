/**
 * The worker entry the core host runs for each instance: imports the model's bundle (plain
 * JavaScript: the model, the author API and `model-runtime.ts` in one module) and lets it build
 * the instance. Kept tiny and type-only so a worker does not load the server's code.
 */
import type { WorkerContext, WorkerModelInstance } from '@tritium/core/worker';
import type { PythonLikeInit } from './init.ts';

type Bundle = {
  model: Record<string, unknown>;
  createModelInstance(init: PythonLikeInit, ctx: WorkerContext, exports: Record<string, unknown>): Promise<WorkerModelInstance>;
};

export async function createInstance(init: PythonLikeInit, ctx: WorkerContext): Promise<WorkerModelInstance> {
  // Stack traces of the model name model.ts lines (the bundle carries an inline source map).
  process.setSourceMapsEnabled(true);
  if (init.inspect) {
    // Before the bundle loads, so a debugger that attaches sees its script and source map.
    const inspector = await import('node:inspector');
    inspector.open(0, '127.0.0.1');
    ctx.log.info(`model '${init.modelName}' instance '${init.instance.name}': inspector listening at ${inspector.url()} (attach VS Code or chrome://inspect; breakpoints in ${init.modelFile} map through its source map)`);
  }
  const bundle = (await import(init.bundleUrl)) as Bundle;
  return bundle.createModelInstance(init, ctx, bundle.model);
}
