/**
 * model_config.proto read with protobufjs into plain data: every message and enum of the file's
 * package in declaration order (a message's nested types before the message itself), every field
 * with its number, label, type, map key, oneof and doc comment. Both renderers work from this.
 */
import protobuf from 'protobufjs';

export type ScalarType = 'string' | 'bool' | 'int32' | 'uint32' | 'int64' | 'uint64' | 'float' | 'double';

export type ProtoValue =
  | { readonly kind: 'scalar'; readonly scalar: ScalarType }
  | { readonly kind: 'enum'; readonly enumName: string }
  | { readonly kind: 'message'; readonly messageName: string };

export interface ProtoField {
  readonly name: string;
  readonly number: number;
  readonly label: 'singular' | 'repeated' | 'map';
  readonly value: ProtoValue;
  readonly mapKey?: ScalarType;
  readonly oneof?: string;
  /** The `///` or `/** *\/` comment above the field in the proto, if any. */
  readonly comment?: string;
}

export interface ProtoMessage {
  /** Full name without the leading dot, e.g. `inference.ModelEnsembling.Step`. */
  readonly name: string;
  readonly fields: readonly ProtoField[];
  readonly comment?: string;
}

export interface ProtoEnum {
  readonly name: string;
  /** Value names and numbers in declaration order. */
  readonly values: readonly (readonly [string, number])[];
}

export interface ProtoSchema {
  readonly packageName: string;
  readonly messages: readonly ProtoMessage[];
  readonly enums: readonly ProtoEnum[];
}

const SCALARS: ReadonlySet<string> = new Set(['string', 'bool', 'int32', 'uint32', 'int64', 'uint64', 'float', 'double']);

function scalar(type: string, where: string): ScalarType {
  if (!SCALARS.has(type)) throw new Error(`codegen: ${where} has type '${type}', which the config schema does not support`);
  return type as ScalarType;
}

const fullName = (t: protobuf.ReflectionObject): string => t.fullName.replace(/^\./, '');

function fieldOf(f: protobuf.Field, where: string): ProtoField {
  const resolved = f.resolvedType;
  const value: ProtoValue =
    resolved instanceof protobuf.Type
      ? { kind: 'message', messageName: fullName(resolved) }
      : resolved instanceof protobuf.Enum
        ? { kind: 'enum', enumName: fullName(resolved) }
        : { kind: 'scalar', scalar: scalar(f.type, where) };
  return {
    name: f.name,
    number: f.id,
    label: f.map ? 'map' : f.repeated ? 'repeated' : 'singular',
    value,
    ...(f instanceof protobuf.MapField ? { mapKey: scalar(f.keyType, `${where} (map key)`) } : {}),
    ...(f.partOf ? { oneof: f.partOf.name } : {}),
    ...(f.comment ? { comment: f.comment } : {}),
  };
}

/** Reads the proto text of one file (package `inference`) into a ProtoSchema. */
export function readProtoSchema(text: string): ProtoSchema {
  const parsed = protobuf.parse(text, new protobuf.Root(), { keepCase: true });
  const root = parsed.root;
  root.resolveAll();
  const packageName = parsed.package;
  if (!packageName) throw new Error('codegen: the proto declares no package');
  const pkg = root.lookup(packageName);
  if (!(pkg instanceof protobuf.Namespace)) throw new Error(`codegen: package ${packageName} not found`);
  const messages: ProtoMessage[] = [];
  const enums: ProtoEnum[] = [];
  const visit = (ns: protobuf.NamespaceBase): void => {
    for (const nested of ns.nestedArray) {
      if (nested instanceof protobuf.Enum) {
        enums.push({ name: fullName(nested), values: Object.entries(nested.values) });
      } else if (nested instanceof protobuf.Type) {
        visit(nested);
        const name = fullName(nested);
        messages.push({
          name,
          fields: nested.fieldsArray.map((f) => fieldOf(f, `${name}.${f.name}`)),
          ...(nested.comment ? { comment: nested.comment } : {}),
        });
      }
    }
  };
  visit(pkg);
  return { packageName, messages, enums };
}
