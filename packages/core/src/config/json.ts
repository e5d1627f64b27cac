/**
 * Triton's JSON form of a ModelConfig (core:src/model_config_utils.cc ModelConfigToJson /
 * JsonToModelConfig): protobuf's JSON printer with `preserve_proto_field_names` and
 * `always_print_primitive_fields` (every scalar, repeated and map field printed, set sub-messages
 * and set oneof members only), enums by name, 64-bit integers as JSON strings except the fields
 * Triton rewrites to numbers (schema `jsonNumber`). Map keys are strings. Reading accepts proto or
 * lowerCamelCase names, rejects unknown fields, takes enums case-insensitively and 64-bit values
 * as numbers or strings. bigints print and read exactly.
 */
export { formatFloat32, modelConfigToJson } from './json-printer.ts';
export type { JsonPrintOptions } from './json-printer.ts';
export { modelConfigFromJson } from './json-reader.ts';
