/** The config.pbtxt language: parse, normalize, validate, print (Triton JSON and text format). */
export { ConfigError } from './config-error.ts';
export type { ConfigErrorLocation } from './config-error.ts';
export { parseModelConfigText, configSourcePosition } from './pbtxt-parser.ts';
export type { ParseOptions } from './pbtxt-parser.ts';
export { normalizeModelConfig, PLATFORMS, BACKENDS, SEQUENCE_IDLE_DEFAULT_MICROSECONDS } from './normalize.ts';
export type { NormalizeOptions, VersionDirEntry } from './normalize.ts';
export { validateModelConfig, ConfigValidationError, pathEscapesParent } from './validate.ts';
export type { ValidateOptions } from './validate.ts';
export { checkModelNameMatchesDirectory } from './model-name.ts';
export { MESSAGES, ENUMS, MODEL_CONFIG, messageDescriptor, enumDescriptor, nearestName } from './schema.ts';
export type { FieldDescriptor, MessageDescriptor, EnumDescriptor, ScalarType, ValueType } from './schema.ts';
export { modelConfigToJson, modelConfigFromJson } from './json.ts';
export type { JsonPrintOptions } from './json.ts';
export { printModelConfigText } from './pbtxt-printer.ts';
