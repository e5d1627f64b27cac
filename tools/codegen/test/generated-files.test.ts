/**
 * model_config.proto is the one source of core's ModelConfig schema table and types and of the
 * datatype tables of core and the client; grpc_service.proto and health.proto of the client's gRPC
 * message and service types. The generated files are committed (so `tsc -b` needs no generation
 * step); this test fails while any of them differs from what `npm run generate` writes, and checks
 * that what the generator writes follows the protos (and protobufjs's decoding, for presence).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ELEMENT_SIZE, TYPED_ARRAYS } from '@tritium/client';
import { plainCodec, tritonProtoRoot } from '@tritium/client/proto';
import { DATA_TYPES } from '@tritium/core';
import { ENUMS, MESSAGES } from '@tritium/core/config';
import { CONFIG_DATA_TYPES, DATA_TYPE_SIZE, TYPED_ARRAY_CONSTRUCTORS } from '@tritium/core/tensor';
import {
  generatedFiles,
  MODEL_CONFIG_PROTO,
  presentWhenDecoded,
  PROTO_DIR,
  readProtoPackages,
  readProtoSchema,
  renderAll,
  renderGrpcTypes,
  SERVICE_PROTOS,
} from '../src/index.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const protoText = readFileSync(path.join(ROOT, MODEL_CONFIG_PROTO), 'utf8');
const render = (text: string) => new Map(renderAll(readProtoSchema(text)).map((f) => [f.path, f.text]));

describe('generated files', () => {
  it.each(generatedFiles(ROOT).map((f) => [f.path, f.text] as const))('%s is what `npm run generate` writes', (file, text) => {
    const committed = readFileSync(path.join(ROOT, file), 'utf8');
    // A failure here: model_config.proto or the generator changed; run `npm run generate` and commit.
    expect(committed === text, `${file} is stale: run \`npm run generate\``).toBe(true);
  });

  it('core serves the table it was generated with: every proto field, number and enum value', () => {
    const schema = readProtoSchema(protoText);
    expect(schema.messages.length).toBeGreaterThan(40);
    expect([...MESSAGES.keys()]).toEqual(schema.messages.map((m) => m.name));
    for (const m of schema.messages) {
      expect(MESSAGES.get(m.name)!.fields.map((f) => `${f.name}=${f.number}/${f.label}/${f.oneof ?? ''}`)).toEqual(
        m.fields.map((f) => `${f.name}=${f.number}/${f.label}/${f.oneof ?? ''}`),
      );
    }
    expect([...ENUMS.keys()]).toEqual(schema.enums.map((e) => e.name));
    expect(Object.entries(CONFIG_DATA_TYPES)).toEqual(schema.enums.find((e) => e.name === 'inference.DataType')!.values);
  });

  it('a field renumbered, added or retyped in the proto changes the schema table and the types', () => {
    const before = render(protoText);
    const after = render(
      protoText
        .replace('bool optional = 8;', 'bool optional = 10;')
        .replace('bool passive = 7;', 'bool passive = 7;\n  string tag = 10;')
        .replace('string label_filename = 4;', 'int32 label_filename = 4;'),
    );
    const table = 'packages/core/src/config/generated/model-config-schema.ts';
    const types = 'packages/core/src/config/generated/model-config-types.ts';
    expect(before.get(table)).toContain("{ name: 'optional', number: 8, label: 'singular', value: { kind: 'scalar', scalar: 'bool' } }");
    expect(after.get(table)).toContain("{ name: 'optional', number: 10, label: 'singular', value: { kind: 'scalar', scalar: 'bool' } }");
    expect(after.get(table)).toContain("{ name: 'tag', number: 10, label: 'singular', value: { kind: 'scalar', scalar: 'string' } }");
    expect(after.get(types)).toContain('  passive: boolean;\n  tag: string;\n  host_policy: string;');
    expect(before.get(types)).toContain('  label_filename: string;');
    expect(after.get(types)).toContain('  label_filename: number;');
  });

  it('types follow proto3 presence: sub-messages and oneof members optional, the rest always present', () => {
    const types = render(protoText).get('packages/core/src/config/generated/model-config-types.ts')!;
    expect(types).toContain('  reshape?: ModelTensorReshape;');
    expect(types).toContain('  zero_data?: boolean;');
    expect(types).toContain('  dynamic_batching?: ModelDynamicBatching;');
    expect(types).toContain('  instance_group: ModelInstanceGroup[];');
    expect(types).toContain('  parameters: Record<string, ModelParameter>;');
    expect(types).toContain('  priority_levels: Int64;');
    expect(types).toContain('  dims: number[];');
    expect(types).toContain('export type ModelVersionPolicyAll = Record<string, never>;');
  });

  it('core and the client hold the same datatype table, in the proto order', () => {
    expect(DATA_TYPES).toEqual(['BOOL', 'UINT8', 'UINT16', 'UINT32', 'UINT64', 'INT8', 'INT16', 'INT32', 'INT64', 'FP16', 'FP32', 'FP64', 'BYTES', 'BF16']);
    for (const datatype of DATA_TYPES) {
      expect([datatype, TYPED_ARRAYS[datatype], ELEMENT_SIZE[datatype]]).toEqual([datatype, TYPED_ARRAY_CONSTRUCTORS[datatype], DATA_TYPE_SIZE[datatype]]);
    }
    expect(Object.keys(TYPED_ARRAYS)).toEqual([...DATA_TYPES]);
  });

  it('refuses a datatype the table has no row for, naming it', () => {
    expect(() => render(protoText.replace('TYPE_BF16 = 14;', 'TYPE_BF16 = 14;\n  TYPE_FP8 = 15;'))).toThrow(
      'codegen: inference.DataType value TYPE_FP8 has no row in tools/codegen/src/data-types.ts',
    );
  });
});

describe('generated gRPC types', () => {
  const protoDir = path.join(ROOT, PROTO_DIR);
  const schemas = () => readProtoPackages(protoDir, SERVICE_PROTOS.map((p) => p.file), SERVICE_PROTOS.map((p) => p.packageName));
  const withEdit = (edit: (text: string) => string): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'codegen-'));
    for (const file of readdirSync(protoDir)) writeFileSync(path.join(dir, file), readFileSync(path.join(protoDir, file), 'utf8'));
    const file = path.join(dir, 'grpc_service.proto');
    writeFileSync(file, edit(readFileSync(file, 'utf8')));
    try {
      return renderGrpcTypes(dir).text;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('a field added or retyped in grpc_service.proto changes both forms of its message', () => {
    const before = renderGrpcTypes(protoDir).text;
    const after = withEdit((t) => t.replace('message ModelReadyRequest {\n  string name = 1;', 'message ModelReadyRequest {\n  uint64 name = 1;\n  bytes tag = 3;'));
    expect(before).toContain('export interface ModelReadyRequest {\n  name: string;\n  version: string;\n}');
    expect(after).toContain('export interface ModelReadyRequest {\n  name: number;\n  tag: Uint8Array;\n  version: string;\n}');
    expect(after).toContain('export interface ModelReadyRequestInit {\n  readonly name?: number | string;\n  readonly tag?: Uint8Array;');
  });

  it('every method of both services has its request and response, in both forms', () => {
    const text = renderGrpcTypes(protoDir).text;
    const root = tritonProtoRoot();
    for (const service of ['inference.GRPCInferenceService', 'grpc.health.v1.Health']) {
      for (const m of root.lookupService(service).methodsArray) {
        const req = m.requestType.split('.').pop()!;
        const res = m.responseType.split('.').pop()!;
        expect(text).toContain(`  ${m.name}: { request: ${req}; requestInit: ${req}Init; response: ${res}; responseInit: ${res}Init };`);
      }
    }
    expect(text).toContain("  parameter_choice?: 'bool_param' | 'int64_param' | 'string_param' | 'bytes_param';");
  });

  it('a field the types say is always there is in every decoded message, even an empty one', () => {
    let checked = 0;
    for (const schema of schemas()) {
      for (const m of schema.messages) {
        if (m.name.startsWith('inference.ModelInfer')) continue; // coded by infer-codec.ts, not protobufjs
        const codec = plainCodec(m.name);
        const decoded = codec.decode(codec.encode({})) as Record<string, unknown>;
        expect(Object.keys(decoded).sort(), m.name).toEqual(m.fields.filter(presentWhenDecoded).map((f) => f.name).sort());
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(80);
  });

  it('refuses two messages whose flattened names collide, naming them', () => {
    expect(() => withEdit((t) => `${t}\nmessage ModelReadyRequestInit { string x = 1; }\n`)).toThrow(
      'codegen: inference.ModelReadyRequestInit and another type are both named ModelReadyRequestInit',
    );
  });
});
