/**
 * Loads the vendored Triton protos (`packages/client/proto/*.proto`) with protobufjs at runtime.
 * Field names keep the proto's snake_case, so decoded objects read like Triton's JSON; their types
 * are generated from the same protos (generated/grpc-types.ts, `npm run generate`).
 */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import protobuf from 'protobufjs';
import type { GRPCInferenceServiceMethods } from '../generated/grpc-types.ts';

/** Folder holding grpc_service.proto, model_config.proto and health.proto. */
export const PROTO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../proto');

let cached: protobuf.Root | undefined;

/** The parsed protos (inference.* and grpc.health.v1.*), loaded once per process. */
export function tritonProtoRoot(): protobuf.Root {
  if (cached) return cached;
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(PROTO_DIR, path.basename(target));
  root.loadSync(['grpc_service.proto', 'health.proto'], { keepCase: true });
  root.resolveAll();
  cached = root;
  return root;
}

/** Options that turn a decoded message into plain data: enums as names, 64-bit ints as numbers. */
export const TO_OBJECT_OPTIONS: protobuf.IConversionOptions = {
  enums: String,
  longs: Number,
  bytes: Buffer,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: false,
};

/**
 * A message type's (de)serializers over plain objects, as grpc-js method definitions want them:
 * `Init` is what `encode` takes, `Decoded` what `decode` gives (generated/grpc-types.ts has both forms
 * of every message: `X` and `XInit`).
 */
export interface PlainCodec<Decoded = unknown, Init extends object = object> {
  readonly type: protobuf.Type;
  encode(value: Init): Buffer;
  decode(buf: Buffer): Decoded;
}

/**
 * Codec for `inference.X` / `grpc.health.v1.X` by full name. The caller names the message's types;
 * `unaryCodecs` names them from the method.
 */
export function plainCodec<Decoded = unknown, Init extends object = object>(
  fullName: string,
  options: protobuf.IConversionOptions = TO_OBJECT_OPTIONS,
): PlainCodec<Decoded, Init> {
  const type = tritonProtoRoot().lookupType(fullName);
  return {
    type,
    encode: (value) => Buffer.from(type.encode(type.fromObject(value)).finish()),
    // protobufjs's toObject is typed as a string-keyed record; with these options its fields are the
    // message's generated type (`defaults` fills scalars, `dropNulls` removes unset sub-messages).
    decode: (buf) => dropNulls(type.toObject(type.decode(buf), options)) as Decoded,
  };
}

/** inference.GRPCInferenceService's methods coded by protobufjs: all but the two with their own codec (infer-codec.ts). */
export type UnaryMethod = Exclude<keyof GRPCInferenceServiceMethods, 'ModelInfer' | 'ModelStreamInfer'>;

type Messages<M extends UnaryMethod> = GRPCInferenceServiceMethods[M];

/** The request and response codecs of `method`; `oneofs` makes the decoded oneofs name their member. */
export function unaryCodecs<M extends UnaryMethod>(
  method: M,
  options: { readonly requestOneofs?: boolean; readonly responseOneofs?: boolean } = {},
): { request: PlainCodec<Messages<M>['request'], Messages<M>['requestInit']>; response: PlainCodec<Messages<M>['response'], Messages<M>['responseInit']> } {
  const withOneofs = (on: boolean | undefined): protobuf.IConversionOptions => (on ? { ...TO_OBJECT_OPTIONS, oneofs: true } : TO_OBJECT_OPTIONS);
  return {
    request: plainCodec(`inference.${method}Request`, withOneofs(options.requestOneofs)),
    response: plainCodec(`inference.${method}Response`, withOneofs(options.responseOneofs)),
  };
}

/** protobufjs writes unset sub-messages as `null` with `defaults: true`; absent reads like Triton's JSON. */
function dropNulls<T>(value: T): T {
  if (Array.isArray(value)) {
    for (const v of value) dropNulls(v);
  } else if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if (o[k] === null) delete o[k];
      else dropNulls(o[k]);
    }
  }
  return value;
}
