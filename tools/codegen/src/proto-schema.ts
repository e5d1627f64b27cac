/**
 * Protos read with protobufjs into plain data: every message and enum of a package in declaration
 * order (a message's nested types before the message itself), every field with its number, label,
 * type, map key, oneof and doc comment, and every service's methods. The renderers work from this.
 */
import path from 'node:path';
import protobuf from 'protobufjs';

export type ScalarType = 'string' | 'bool' | 'int32' | 'uint32' | 'int64' | 'uint64' | 'float' | 'double' | 'bytes';

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

export interface ProtoMethod {
  readonly name: string;
  /** Full names without the leading dot. */
  readonly requestType: string;
  readonly responseType: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
}

export interface ProtoService {
  /** Full name without the leading dot, e.g. `inference.GRPCInferenceService`. */
  readonly name: string;
  readonly methods: readonly ProtoMethod[];
}

export interface ProtoSchema {
  readonly packageName: string;
  readonly messages: readonly ProtoMessage[];
  readonly enums: readonly ProtoEnum[];
  readonly services: readonly ProtoService[];
}

/** The scalars core's config schema handles (model_config.proto has no `bytes` field). */
const CONFIG_SCALARS: ReadonlySet<ScalarType> = new Set(['string', 'bool', 'int32', 'uint32', 'int64', 'uint64', 'float', 'double']);
/** The scalars the gRPC service's messages use. */
const SERVICE_SCALARS: ReadonlySet<ScalarType> = new Set([...CONFIG_SCALARS, 'bytes']);

function scalar(type: string, where: string, allowed: ReadonlySet<string>): ScalarType {
  if (!allowed.has(type)) throw new Error(`codegen: ${where} has type '${type}', which the generator does not support`);
  return type as ScalarType;
}

const fullName = (t: protobuf.ReflectionObject): string => t.fullName.replace(/^\./, '');

function fieldOf(f: protobuf.Field, where: string, allowed: ReadonlySet<string>): ProtoField {
  const resolved = f.resolvedType;
  const value: ProtoValue =
    resolved instanceof protobuf.Type
      ? { kind: 'message', messageName: fullName(resolved) }
      : resolved instanceof protobuf.Enum
        ? { kind: 'enum', enumName: fullName(resolved) }
        : { kind: 'scalar', scalar: scalar(f.type, where, allowed) };
  return {
    name: f.name,
    number: f.id,
    label: f.map ? 'map' : f.repeated ? 'repeated' : 'singular',
    value,
    ...(f instanceof protobuf.MapField ? { mapKey: scalar(f.keyType, `${where} (map key)`, allowed) } : {}),
    ...(f.partOf ? { oneof: f.partOf.name } : {}),
    ...(f.comment ? { comment: f.comment } : {}),
  };
}

/** Every message, enum and service of `packageName` in `root` (resolved). */
function packageSchema(root: protobuf.Root, packageName: string, allowed: ReadonlySet<string>): ProtoSchema {
  const pkg = root.lookup(packageName);
  if (!(pkg instanceof protobuf.Namespace)) throw new Error(`codegen: package ${packageName} not found`);
  const messages: ProtoMessage[] = [];
  const enums: ProtoEnum[] = [];
  const services: ProtoService[] = [];
  const visit = (ns: protobuf.NamespaceBase): void => {
    for (const nested of ns.nestedArray) {
      if (nested instanceof protobuf.Enum) {
        enums.push({ name: fullName(nested), values: Object.entries(nested.values) });
      } else if (nested instanceof protobuf.Type) {
        visit(nested);
        const name = fullName(nested);
        messages.push({
          name,
          fields: nested.fieldsArray.map((f) => fieldOf(f, `${name}.${f.name}`, allowed)),
          ...(nested.comment ? { comment: nested.comment } : {}),
        });
      } else if (nested instanceof protobuf.Service) {
        services.push({ name: fullName(nested), methods: nested.methodsArray.map(methodOf) });
      }
    }
  };
  visit(pkg);
  return { packageName, messages, enums, services };
}

function methodOf(m: protobuf.Method): ProtoMethod {
  m.resolve();
  return {
    name: m.name,
    requestType: fullName(m.resolvedRequestType!),
    responseType: fullName(m.resolvedResponseType!),
    requestStream: m.requestStream === true,
    responseStream: m.responseStream === true,
  };
}

/** Reads the proto text of one file (package `inference`, no imports) into a ProtoSchema. */
export function readProtoSchema(text: string): ProtoSchema {
  const parsed = protobuf.parse(text, new protobuf.Root(), { keepCase: true });
  parsed.root.resolveAll();
  if (!parsed.package) throw new Error('codegen: the proto declares no package');
  return packageSchema(parsed.root, parsed.package, CONFIG_SCALARS);
}

/**
 * Reads `files` of `dir` with their imports (looked up in `dir` by name) and returns the schema of
 * each package in `packages`, in that order.
 */
export function readProtoPackages(dir: string, files: readonly string[], packages: readonly string[]): ProtoSchema[] {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(dir, path.basename(target));
  root.loadSync([...files], { keepCase: true });
  root.resolveAll();
  return packages.map((p) => packageSchema(root, p, SERVICE_SCALARS));
}
