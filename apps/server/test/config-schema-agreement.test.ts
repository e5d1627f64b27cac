/**
 * `inference.ModelConfig` is written down three times: Triton's model_config.proto (vendored in
 * packages/client, served over gRPC), core's schema table (`config/schema.ts`, which drives the
 * parser and printers) and core's TypeScript types (`config/model-config.ts`). Core may not import
 * the client, so instead of generating one from another this test reads all three and fails on any
 * difference: messages, field names, numbers, declaration order, labels (singular / repeated / map),
 * scalar, enum and message types, oneofs, enum values; and for the types, every property, its
 * optionality (proto3 presence) and its TypeScript type. A drift cannot land.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ENUMS, MESSAGES, MODEL_CONFIG, type FieldDescriptor, type MessageDescriptor } from '@tritium/core';
import { PROTO_DIR } from '@tritium/client/proto';

const MODEL_CONFIG_TS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../packages/core/src/config/model-config.ts');

function loadProto(file: string, text?: string): protobuf.Root {
  const root = new protobuf.Root();
  if (text === undefined) root.loadSync(file, { keepCase: true });
  else protobuf.parse(text, root, { keepCase: true });
  root.resolveAll();
  return root;
}

const presence = (f: FieldDescriptor): boolean => f.label === 'singular' && (f.value.kind === 'message' || f.oneof !== undefined);

/** Every difference between the proto's messages and enums reachable from ModelConfig and core's schema table. */
function protoVsSchema(root: protobuf.Root, messages: ReadonlyMap<string, MessageDescriptor> = MESSAGES): string[] {
  const problems: string[] = [];
  const seenMessages = new Set<string>();
  const seenEnums = new Set<string>();
  const visit = (type: protobuf.Type): void => {
    const name = type.fullName.slice(1);
    if (seenMessages.has(name)) return;
    seenMessages.add(name);
    const desc = messages.get(name);
    if (!desc) {
      problems.push(`${name}: in the proto, not in schema.ts`);
      return;
    }
    const protoNames = type.fieldsArray.map((f) => f.name);
    const schemaNames = desc.fields.map((f) => f.name);
    if (protoNames.join() !== schemaNames.join()) problems.push(`${name}: fields [${protoNames}] in the proto, [${schemaNames}] in schema.ts`);
    for (const pf of type.fieldsArray) {
      const sf = desc.byName.get(pf.name);
      if (!sf) continue;
      const where = `${name}.${pf.name}`;
      const label = pf.map ? 'map' : pf.repeated ? 'repeated' : 'singular';
      if (sf.number !== pf.id) problems.push(`${where}: number ${pf.id} in the proto, ${sf.number} in schema.ts`);
      if (sf.label !== label) problems.push(`${where}: ${label} in the proto, ${sf.label} in schema.ts`);
      if (pf instanceof protobuf.MapField && sf.mapKey !== pf.keyType) problems.push(`${where}: map key ${pf.keyType} in the proto, ${sf.mapKey} in schema.ts`);
      const oneof = pf.partOf?.name;
      if (sf.oneof !== oneof) problems.push(`${where}: oneof ${oneof} in the proto, ${sf.oneof} in schema.ts`);
      const resolved = pf.resolvedType;
      if (resolved instanceof protobuf.Type) {
        if (sf.value.kind !== 'message' || sf.value.messageName !== resolved.fullName.slice(1)) {
          problems.push(`${where}: message ${resolved.fullName.slice(1)} in the proto, ${JSON.stringify(sf.value)} in schema.ts`);
        }
        visit(resolved);
      } else if (resolved instanceof protobuf.Enum) {
        if (sf.value.kind !== 'enum' || sf.value.enumName !== resolved.fullName.slice(1)) {
          problems.push(`${where}: enum ${resolved.fullName.slice(1)} in the proto, ${JSON.stringify(sf.value)} in schema.ts`);
        }
        const enumName = resolved.fullName.slice(1);
        if (!seenEnums.has(enumName)) {
          seenEnums.add(enumName);
          const se = ENUMS.get(enumName);
          const protoValues = Object.entries(resolved.values).map(([k, v]) => `${k}=${v}`);
          const schemaValues = se ? se.values.map((k) => `${k}=${se.byName.get(k)}`) : [];
          if (protoValues.join() !== schemaValues.join()) problems.push(`${enumName}: values [${protoValues}] in the proto, [${schemaValues}] in schema.ts`);
        }
      } else if (sf.value.kind !== 'scalar' || sf.value.scalar !== pf.type) {
        problems.push(`${where}: ${pf.type} in the proto, ${JSON.stringify(sf.value)} in schema.ts`);
      }
    }
  };
  visit(root.lookupType(MODEL_CONFIG));
  for (const name of messages.keys()) if (!seenMessages.has(name)) problems.push(`${name}: in schema.ts, not reachable from ModelConfig in the proto`);
  for (const name of ENUMS.keys()) if (!seenEnums.has(name)) problems.push(`${name}: enum in schema.ts, not used by the proto`);
  return problems;
}

/** Every difference between core's schema table and the TypeScript type `ModelConfig` of `file` (optionally with `text`). */
const TS_OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: [],
  lib: ['lib.es2022.d.ts'],
  allowImportingTsExtensions: true,
  module: ts.ModuleKind.ESNext,
  target: ts.ScriptTarget.ES2022,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
};
/** Parsed files shared between programs (the standard library is most of the work). */
const parsed = new Map<string, ts.SourceFile>();

function schemaVsTypes(file: string, text?: string): string[] {
  const host = ts.createCompilerHost(TS_OPTIONS);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) => {
    if (text !== undefined && path.resolve(name) === file) return ts.createSourceFile(name, text, lang);
    let sf = parsed.get(name);
    if (!sf) {
      sf = read(name, lang, ...rest);
      if (sf) parsed.set(name, sf);
    }
    return sf;
  };
  const program = ts.createProgram([file], TS_OPTIONS, host);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const moduleSymbol = checker.getSymbolAtLocation(source)!;
  const root = checker.getExportsOfModule(moduleSymbol).find((s) => s.name === 'ModelConfig')!;
  const problems: string[] = [];
  const str = (t: ts.Type) => checker.typeToString(t);
  const literals = (t: ts.Type): string[] | undefined => {
    const parts = t.isUnion() ? t.types : [t];
    return parts.every((p) => p.isStringLiteral()) ? parts.map((p) => (p as ts.StringLiteralType).value).sort() : undefined;
  };
  const checkValue = (where: string, field: FieldDescriptor, t: ts.Type, seen: Set<string>): void => {
    const v = field.value;
    if (v.kind === 'message') {
      checkMessage(where, MESSAGES.get(v.messageName)!, t, seen);
      return;
    }
    if (v.kind === 'enum') {
      const want = [...ENUMS.get(v.enumName)!.values].sort();
      const got = literals(t);
      if (!got || got.join() !== want.join()) problems.push(`${where}: ${str(t)} in model-config.ts, enum ${v.enumName} [${want}] in schema.ts`);
      return;
    }
    const flags = (t.isUnion() ? t.types : [t]).map((p) => p.flags);
    const only = (f: ts.TypeFlags) => flags.every((x) => (x & f) !== 0);
    const ok =
      v.scalar === 'string'
        ? only(ts.TypeFlags.String)
        : v.scalar === 'bool'
          ? only(ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLiteral)
          : v.scalar === 'int64' || v.scalar === 'uint64'
            ? only(ts.TypeFlags.Number | ts.TypeFlags.BigInt)
            : only(ts.TypeFlags.Number);
    if (!ok) problems.push(`${where}: ${str(t)} in model-config.ts, ${v.scalar} in schema.ts`);
  };
  const checkMessage = (where: string, desc: MessageDescriptor, t: ts.Type, seen: Set<string>): void => {
    if (seen.has(desc.name)) return;
    const inner = new Set(seen).add(desc.name);
    const props = checker.getPropertiesOfType(t);
    const propNames = props.map((p) => p.name).sort();
    const fieldNames = desc.fields.map((f) => f.name).sort();
    if (propNames.join() !== fieldNames.join()) problems.push(`${where} (${desc.name}): properties [${propNames}] in model-config.ts, fields [${fieldNames}] in schema.ts`);
    for (const field of desc.fields) {
      const prop = props.find((p) => p.name === field.name);
      if (!prop) continue;
      const at = `${where}.${field.name}`;
      const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
      if (optional !== presence(field)) problems.push(`${at}: ${optional ? 'optional' : 'required'} in model-config.ts, ${presence(field) ? 'has' : 'no'} presence in schema.ts`);
      const type = checker.getNonNullableType(checker.getTypeOfSymbol(prop));
      if (field.label === 'repeated') {
        if (!checker.isArrayType(type)) problems.push(`${at}: ${str(type)} in model-config.ts, repeated in schema.ts`);
        else checkValue(`${at}[]`, field, checker.getTypeArguments(type as ts.TypeReference)[0]!, inner);
      } else if (field.label === 'map') {
        const value = checker.getIndexTypeOfType(type, ts.IndexKind.String);
        if (!value) problems.push(`${at}: ${str(type)} in model-config.ts, map in schema.ts`);
        else checkValue(`${at}{}`, field, value, inner);
      } else checkValue(at, field, type, inner);
    }
  };
  checkMessage('ModelConfig', MESSAGES.get(MODEL_CONFIG)!, checker.getDeclaredTypeOfSymbol(root), new Set());
  return problems;
}

describe('the three statements of inference.ModelConfig agree', () => {
  const proto = loadProto(path.join(PROTO_DIR, 'model_config.proto'));

  it('schema.ts matches model_config.proto: messages, fields, numbers, order, labels, types, oneofs, enums', () => {
    expect(protoVsSchema(proto)).toEqual([]);
    expect(MESSAGES.size).toBeGreaterThan(40);
  });

  it('model-config.ts matches schema.ts: properties, presence and types', () => {
    expect(schemaVsTypes(MODEL_CONFIG_TS)).toEqual([]);
  });

  it('reports a drift in any of them', () => {
    const protoText = readFileSync(path.join(PROTO_DIR, 'model_config.proto'), 'utf8');
    const renumbered = loadProto('', protoText.replace('bool optional = 8;', 'bool optional = 10;'));
    expect(protoVsSchema(renumbered)).toEqual(['inference.ModelInput.optional: number 10 in the proto, 8 in schema.ts']);
    const added = loadProto('', protoText.replace('bool passive = 7;', 'bool passive = 7;\n  string tag = 10;'));
    expect(protoVsSchema(added)).toEqual([
      'inference.ModelInstanceGroup: fields [name,kind,count,rate_limiter,gpus,secondary_devices,profile,passive,tag,host_policy] in the proto, [name,kind,count,rate_limiter,gpus,secondary_devices,profile,passive,host_policy] in schema.ts',
    ]);

    const typesText = readFileSync(MODEL_CONFIG_TS, 'utf8');
    const drifted = typesText
      .replace('  reshape?: ModelTensorReshape;\n  is_shape_tensor: boolean;\n  allow', '  reshape: ModelTensorReshape;\n  is_shape_tensor: boolean;\n  allow')
      .replace('  allow_ragged_batch: boolean;\n', '')
      .replace('  label_filename: string;', '  label_filename: number;')
      .replace("export type TimeoutAction = 'REJECT' | 'DELAY';", "export type TimeoutAction = 'REJECT';");
    expect(schemaVsTypes(MODEL_CONFIG_TS, drifted).sort()).toEqual(
      [
        'ModelConfig.input[] (inference.ModelInput): properties [data_type,dims,format,is_non_linear_format_io,is_shape_tensor,name,optional,reshape] in model-config.ts, fields [allow_ragged_batch,data_type,dims,format,is_non_linear_format_io,is_shape_tensor,name,optional,reshape] in schema.ts',
        'ModelConfig.input[].reshape: required in model-config.ts, has presence in schema.ts',
        'ModelConfig.output[].label_filename: number in model-config.ts, string in schema.ts',
        "ModelConfig.dynamic_batching.default_queue_policy.timeout_action: \"REJECT\" in model-config.ts, enum inference.ModelQueuePolicy.TimeoutAction [DELAY,REJECT] in schema.ts",
        "ModelConfig.dynamic_batching.priority_queue_policy{}.timeout_action: \"REJECT\" in model-config.ts, enum inference.ModelQueuePolicy.TimeoutAction [DELAY,REJECT] in schema.ts",
      ].sort(),
    );
  });
});
