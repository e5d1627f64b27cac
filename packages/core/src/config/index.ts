/**
 * `@tritium/core/config`: the config.pbtxt language — parse, normalize (Triton's defaults and
 * auto-complete), validate, print (Triton's JSON and text formats) — and the schema table it is
 * driven by, and the checks across a repository's configs (ensemble wiring, cycles). The ModelConfig
 * types themselves are in the root entry.
 */
export { ConfigError } from './config-error.ts';
export type { ConfigErrorLocation } from './config-error.ts';
export { parseModelConfigText, configSourcePosition } from './pbtxt-parser.ts';
export type { ParseOptions } from './pbtxt-parser.ts';
export { normalizeModelConfig } from './normalize.ts';
export type { NormalizeOptions, VersionDirEntry } from './normalize.ts';
export { validateModelConfig, ConfigValidationError } from './validate.ts';
export type { ValidateOptions } from './validate.ts';
export { MESSAGES, ENUMS, nearestName } from './schema.ts';
export type { FieldDescriptor, MessageDescriptor, EnumDescriptor, ScalarType, ValueType } from './schema.ts';
export { modelConfigToJson, modelConfigFromJson } from './json.ts';
export type { JsonPrintOptions } from './json.ts';
export { printModelConfigText } from './pbtxt-printer.ts';
export { emptyDynamicBatching } from './model-config.ts';
/** Checks across a repository's configs: how an ensemble wires its steps, and cycles between ensembles. */
export { validateEnsembleModels } from '../ensemble/validate/ensemble-models.ts';
export type { EnsembleValidation, EnsembleModelIds } from '../ensemble/validate/ensemble-models.ts';
export { composingModels, findCircularDependency } from '../ensemble/validate/ensemble-dependencies.ts';
export { isEnsembleConfig } from '../scheduler/create-scheduler.ts';
