/**
 * @tritium/codegen: the ModelConfig schema table and types of core, and the datatype tables of core
 * and the client, generated from model_config.proto (`npm run generate`).
 *
 * @example
 * import { generatedFiles } from '@tritium/codegen';
 * for (const file of generatedFiles('.')) console.log(file.path, file.text.length);
 */
export { generatedFiles, renderAll, MODEL_CONFIG_PROTO } from './generated-files.ts';
export type { GeneratedFile } from './generated-files.ts';
export { readProtoSchema } from './proto-schema.ts';
export type { ProtoSchema, ProtoMessage, ProtoField, ProtoEnum, ProtoValue, ScalarType } from './proto-schema.ts';
export { NUMBER_TYPED_INT64, typeName } from './render-types.ts';
