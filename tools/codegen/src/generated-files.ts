/**
 * Every file the generator writes, from the client's vendored protos: from model_config.proto,
 * core's ModelConfig schema table and types and the datatype tables of core and the client; from
 * grpc_service.proto (which imports model_config.proto) and health.proto, the client's types of the
 * gRPC messages and services, which the server's handlers use too. Paths are relative to the
 * repository root.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderClientDataTypes, renderCoreDataTypes } from './data-types.ts';
import { readProtoPackages, readProtoSchema, type ProtoSchema } from './proto-schema.ts';
import { renderSchemaTable } from './render-schema.ts';
import { renderServiceTypes } from './render-service-types.ts';
import { renderTypes } from './render-types.ts';

export const PROTO_DIR = 'packages/client/proto';
export const MODEL_CONFIG_PROTO = `${PROTO_DIR}/model_config.proto`;
/** The service protos and their packages, in the order their types are written. */
export const SERVICE_PROTOS: readonly { readonly file: string; readonly packageName: string }[] = [
  { file: 'grpc_service.proto', packageName: 'inference' },
  { file: 'health.proto', packageName: 'grpc.health.v1' },
];
export const GRPC_TYPES_FILE = 'packages/client/src/generated/grpc-types.ts';

export interface GeneratedFile {
  /** Relative to the repository root, `/`-separated. */
  readonly path: string;
  readonly text: string;
}

/** The generated files for a schema read from `source` (a path relative to the root, named in headers). */
export function renderAll(schema: ProtoSchema, source = MODEL_CONFIG_PROTO): GeneratedFile[] {
  return [
    { path: 'packages/core/src/config/generated/model-config-schema.ts', text: renderSchemaTable(schema, source) },
    { path: 'packages/core/src/config/generated/model-config-types.ts', text: renderTypes(schema, source) },
    { path: 'packages/core/src/tensor/generated/data-types.ts', text: renderCoreDataTypes(schema, source) },
    { path: 'packages/client/src/generated/data-types.ts', text: renderClientDataTypes(schema, source) },
  ];
}

/** The gRPC types file for the service protos read from `protoDir` (an absolute path). */
export function renderGrpcTypes(protoDir: string): GeneratedFile {
  const schemas = readProtoPackages(
    protoDir,
    SERVICE_PROTOS.map((p) => p.file),
    SERVICE_PROTOS.map((p) => p.packageName),
  );
  return { path: GRPC_TYPES_FILE, text: renderServiceTypes(schemas, SERVICE_PROTOS.map((p) => `${PROTO_DIR}/${p.file}`)) };
}

/** The generated files of the repository at `root`, as the generator writes them now. */
export function generatedFiles(root: string): GeneratedFile[] {
  return [...renderAll(readProtoSchema(readFileSync(path.join(root, MODEL_CONFIG_PROTO), 'utf8'))), renderGrpcTypes(path.join(root, PROTO_DIR))];
}
