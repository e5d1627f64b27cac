/**
 * What `tritium dev` does when a model's files change: its generated types follow its config (when
 * the folder has them), then the server loads it again (explicit mode: the new version loads and
 * warms beside the serving one and takes traffic only once READY; the old one drains). A reload
 * that fails leaves the old version serving, and its error is shown once until it changes. A
 * model whose folder is gone is unloaded. One reload at a time; a change during one runs after it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { MODEL_TYPES_BASENAME, writeModelTypes } from '@tritium/backend-python-like';
import { InferError, type InferenceServerApi, type Logger } from '@tritium/core';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';

export interface ReloadOutcome {
  readonly model: string;
  readonly ok: boolean;
  readonly ms: number;
}

export class DevReloader {
  private running: Promise<void> = Promise.resolve();
  private readonly pending = new Set<string>();
  /** The error last shown per model (shown again only once it changes). */
  private readonly shown = new Map<string, string>();

  constructor(
    private readonly repository: string,
    private readonly api: Pick<InferenceServerApi, 'loadModel' | 'unloadModel'>,
    private readonly log: Logger,
    private readonly onReload?: (outcome: ReloadOutcome) => void,
  ) {}

  /** Schedules a reload of `model` (changes arriving meanwhile fold into one). */
  changed(model: string): void {
    if (this.pending.has(model)) return;
    this.pending.add(model);
    this.running = this.running.then(async () => {
      this.pending.delete(model);
      await this.reload(model);
    });
  }

  /** Resolves once every scheduled reload ran. */
  settled(): Promise<void> {
    return this.running;
  }

  private async reload(model: string): Promise<void> {
    const dir = path.join(this.repository, model);
    const started = performance.now();
    if (!existsSync(dir)) {
      await this.api.unloadModel(model).then(
        () => this.log.info(`tritium dev: model '${model}' unloaded: its folder is gone`),
        () => undefined,
      );
      return;
    }
    try {
      await this.refreshTypes(model, dir);
      await this.api.loadModel(model);
      const ms = performance.now() - started;
      this.shown.delete(model);
      this.log.info(`tritium dev: model '${model}' reloaded in ${ms.toFixed(0)} ms`);
      this.onReload?.({ model, ok: true, ms });
    } catch (error) {
      const message = InferError.from(error).message.trim();
      if (this.shown.get(model) !== message) {
        this.shown.set(model, message);
        this.log.error(`tritium dev: model '${model}' was not reloaded (the version loaded before keeps serving):\n${message}`);
      } else {
        this.log.error(`tritium dev: model '${model}' was not reloaded: the same error as above`);
      }
      this.onReload?.({ model, ok: false, ms: performance.now() - started });
    }
  }

  /** Regenerates `model-types.*` when the model has them and its config declares its inputs and outputs. */
  private async refreshTypes(model: string, dir: string): Promise<void> {
    const file = path.join(dir, 'config.pbtxt');
    if (!existsSync(file)) return;
    const hasTypes = (await readdir(dir)).some((v) => /^\d+$/.test(v) && existsSync(path.join(dir, v, `${MODEL_TYPES_BASENAME}.d.ts`)));
    if (!hasTypes) return;
    let config;
    try {
      config = normalizeModelConfig(parseModelConfigText(readFileSync(file, 'utf8'), { file }), { modelName: model });
    } catch {
      return; // the load reports the config's problem
    }
    if (config.backend !== 'python' || (config.input.length === 0 && config.output.length === 0)) return;
    for (const written of await writeModelTypes(dir, config)) {
      if (written.status === 'written') this.log.info(`tritium dev: ${written.file} follows the config`);
    }
  }
}
