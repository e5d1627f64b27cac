/**
 * Every file the generator writes, from the one source, model_config.proto (the client's vendored
 * copy of Triton's, which the gRPC service also loads): core's ModelConfig schema table and types,
 * and the datatype tables of core and the client. Paths are relative to the repository root.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderClientDataTypes, renderCoreDataTypes } from './data-types.ts';
import { readProtoSchema, type ProtoSchema } from './proto-schema.ts';
import { renderSchemaTable } from './render-schema.ts';
import { renderTypes } from './render-types.ts';

export const MODEL_CONFIG_PROTO = 'packages/client/proto/model_config.proto';

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

/** The generated files of the repository at `root`, as the generator writes them now. */
export function generatedFiles(root: string): GeneratedFile[] {
  return renderAll(readProtoSchema(readFileSync(path.join(root, MODEL_CONFIG_PROTO), 'utf8')));
}
