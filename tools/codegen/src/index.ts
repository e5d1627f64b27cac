/**
 * @tritium/codegen: the ModelConfig schema table and types of core and the datatype tables of core
 * and the client, generated from model_config.proto, and the client's gRPC message and service types,
 * generated from grpc_service.proto and health.proto (`npm run generate`).
 *
 * @example
 * import { generatedFiles } from '@tritium/codegen';
 * for (const file of generatedFiles('.')) console.log(file.path, file.text.length);
 */
export { generatedFiles, renderAll, renderGrpcTypes, GRPC_TYPES_FILE, MODEL_CONFIG_PROTO, PROTO_DIR, SERVICE_PROTOS } from './generated-files.ts';
export type { GeneratedFile } from './generated-files.ts';
export { readProtoPackages, readProtoSchema } from './proto-schema.ts';
export type { ProtoSchema, ProtoMessage, ProtoField, ProtoEnum, ProtoMethod, ProtoService, ProtoValue, ScalarType } from './proto-schema.ts';
export { NUMBER_TYPED_INT64, typeName } from './render-types.ts';
export { presentWhenDecoded } from './render-service-types.ts';
