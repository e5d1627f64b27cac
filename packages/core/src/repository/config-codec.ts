/**
 * The config.pbtxt language as the repository uses it: parse text, read Triton's JSON form (load
 * API override), fill Triton's defaults (including core autofill of backend/platform from the
 * first version folder's files), validate. Backed by core's config module; injectable so an
 * embedder can substitute its own reader.
 */
import type { ModelConfig } from '../config/model-config.ts';
import { parseModelConfigText } from '../config/pbtxt-parser.ts';
import { normalizeModelConfig, type VersionDirEntry } from '../config/normalize.ts';
import { validateModelConfig } from '../config/validate.ts';
import { modelConfigFromJson } from '../config/json.ts';
import { checkModelNameMatchesDirectory } from '../config/model-name.ts';

export interface NormalizeContext {
  /** The model's folder name (fills an empty `name`; names the backend of `<name>.<backend>` models). */
  readonly modelName: string;
  /** Entries of the lexically first version folder, for core autofill; undefined without one. */
  readonly firstVersionEntries?: readonly VersionDirEntry[];
}

export interface ConfigCodec {
  /** Parses config.pbtxt text (proto3 defaults only). Throws a ConfigError naming `file:line:column`. */
  parseText(text: string, file: string): ModelConfig;
  /** Triton's JSON form (the load API's `config` parameter). */
  fromJson(json: string): ModelConfig;
  /** Applies Triton's defaults and core autofill. */
  normalize(config: ModelConfig, context: NormalizeContext): ModelConfig;
  /** Throws INVALID_ARG with Triton's message when the config is invalid or its name is not the folder's. */
  validate(config: ModelConfig, modelName: string): void;
}

export const defaultConfigCodec: ConfigCodec = {
  parseText: (text, file) => parseModelConfigText(text, { file }),
  fromJson: (json) => modelConfigFromJson(json),
  normalize: (config, context) =>
    normalizeModelConfig(config, { modelName: context.modelName, firstVersionEntries: context.firstVersionEntries }),
  validate: (config, modelName) => {
    validateModelConfig(config);
    checkModelNameMatchesDirectory(config, modelName);
  },
};
