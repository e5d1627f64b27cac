/**
 * The client's TypeScript types of the gRPC services (packages/client/src/generated/grpc-types.ts),
 * from grpc_service.proto (with the model_config.proto it imports) and health.proto: each message
 * in the two forms protobufjs gives and takes over plain objects (proto/load.ts's codecs), and each
 * service's methods.
 *
 * - `X`, a message as decoded (`toObject` with `defaults: true`, longs as numbers, bytes as
 *   Buffers, enums as names): scalars, repeated and map fields always present; sub-messages and
 *   oneof members optional; a oneof's own name (`parameter_choice`) names the member set when the
 *   codec was asked for oneofs.
 * - `XInit`, a message as written (`fromObject`): every field optional, 64-bit integers as numbers
 *   or decimal strings (exact past 2^53), arrays and maps readonly.
 * - `<Service>Methods`: per method, its request and response in both forms.
 *
 * Names are the proto path without the package and dots (`ModelMetadataResponse.TensorMetadata` →
 * `ModelMetadataResponseTensorMetadata`); `inference.DataType` is `ConfigDataType`, as in core.
 */
import type { ProtoField, ProtoMessage, ProtoSchema, ProtoService } from './proto-schema.ts';
import { generatedHeader } from './header.ts';
import { docComment, typeName } from './render-types.ts';

type Form = 'decoded' | 'init';

function scalarType(scalar: string, form: Form): string {
  switch (scalar) {
    case 'string':
      return 'string';
    case 'bool':
      return 'boolean';
    case 'bytes':
      return 'Uint8Array';
    case 'int64':
    case 'uint64':
      return form === 'init' ? 'number | string' : 'number';
    default:
      return 'number';
  }
}

function fieldType(f: ProtoField, pkg: string, form: Form): string {
  const v = f.value;
  const suffix = form === 'init' ? 'Init' : '';
  const t =
    v.kind === 'scalar' ? scalarType(v.scalar, form) : v.kind === 'enum' ? typeName(v.enumName, pkg) : `${typeName(v.messageName, pkg)}${suffix}`;
  const element = t.includes(' | ') ? `(${t})` : t;
  if (f.label === 'repeated') return form === 'init' ? `readonly ${element}[]` : `${element}[]`;
  if (f.label === 'map') return form === 'init' ? `Readonly<Record<string, ${t}>>` : `Record<string, ${t}>`;
  return t;
}

function fieldComment(f: ProtoField): string | undefined {
  if (f.label !== 'map' || f.mapKey === 'string') return f.comment;
  return `${f.comment ? `${f.comment}\n` : ''}Map keys are ${f.mapKey} values written as decimal strings.`;
}

/** Whether a decoded message always has `f` (protobufjs's `toObject` with `defaults: true`). */
export function presentWhenDecoded(f: ProtoField): boolean {
  return !(f.label === 'singular' && (f.value.kind === 'message' || f.oneof !== undefined));
}

function renderMessage(m: ProtoMessage, pkg: string, form: Form): string[] {
  const name = `${typeName(m.name, pkg)}${form === 'init' ? 'Init' : ''}`;
  const out = docComment(form === 'init' ? `${m.comment ? `${m.comment}\n` : ''}\`${m.name}\` as written.` : m.comment, '');
  if (m.fields.length === 0) return [...out, `export type ${name} = Record<string, never>;`, ''];
  out.push(`export interface ${name} {`);
  const oneofs = new Map<string, string[]>();
  for (const f of m.fields) {
    if (f.oneof) oneofs.set(f.oneof, [...(oneofs.get(f.oneof) ?? []), f.name]);
    const optional = form === 'init' || !presentWhenDecoded(f);
    out.push(...docComment(fieldComment(f), '  '));
    out.push(`  ${form === 'init' ? 'readonly ' : ''}${f.name}${optional ? '?' : ''}: ${fieldType(f, pkg, form)};`);
  }
  if (form === 'decoded') {
    for (const [oneof, members] of oneofs) {
      out.push(`  /** The member of oneof \`${oneof}\` that is set, when decoded with \`oneofs: true\`. */`);
      out.push(`  ${oneof}?: ${members.map((n) => `'${n}'`).join(' | ')};`);
    }
  }
  out.push('}', '');
  return out;
}

function renderService(s: ProtoService, pkg: string): string[] {
  const local = typeName(s.name, pkg);
  const out = [`/** \`${s.name}\`: each method's request and response, as decoded and as written. */`, `export interface ${local}Methods {`];
  for (const m of s.methods) {
    const req = typeName(m.requestType, pkg);
    const res = typeName(m.responseType, pkg);
    const streams = [m.requestStream ? 'requests' : '', m.responseStream ? 'responses' : ''].filter(Boolean);
    if (streams.length > 0) out.push(`  /** A stream of ${streams.join(' and ')}. */`);
    out.push(`  ${m.name}: { request: ${req}; requestInit: ${req}Init; response: ${res}; responseInit: ${res}Init };`);
  }
  out.push('}', '');
  return out;
}

/** The types of every message, enum and service of `schemas` (one per package), in that order. */
export function renderServiceTypes(schemas: readonly ProtoSchema[], sources: readonly string[]): string {
  const out: string[] = [generatedHeader(sources.join(', '))];
  const seen = new Set<string>();
  const claim = (name: string, what: string): void => {
    if (seen.has(name)) throw new Error(`codegen: ${what} and another type are both named ${name}`);
    seen.add(name);
  };
  for (const schema of schemas) {
    const pkg = schema.packageName;
    for (const e of schema.enums) {
      const name = typeName(e.name, pkg);
      claim(name, e.name);
      out.push(`export type ${name} = ${e.values.map(([n]) => `'${n}'`).join(' | ')};`, '');
    }
    for (const m of schema.messages) {
      claim(typeName(m.name, pkg), m.name);
      claim(`${typeName(m.name, pkg)}Init`, m.name);
      out.push(...renderMessage(m, pkg, 'decoded'), ...renderMessage(m, pkg, 'init'));
    }
    for (const s of schema.services) {
      claim(`${typeName(s.name, pkg)}Methods`, s.name);
      out.push(...renderService(s, pkg));
    }
  }
  return out.join('\n');
}
