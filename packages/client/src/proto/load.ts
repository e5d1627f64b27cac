/**
 * Loads the vendored Triton protos (`packages/client/proto/*.proto`) with protobufjs at runtime
 * (no codegen). Field names keep the proto's snake_case, so decoded objects read like Triton's JSON.
 */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import protobuf from 'protobufjs';

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
  bytes: Buffer as unknown as typeof String,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: false,
};

/** A message type's (de)serializers over plain objects, as grpc-js method definitions want them. */
export interface PlainCodec {
  readonly type: protobuf.Type;
  encode(value: object): Buffer;
  decode(buf: Buffer): any;
}

/** Codec for `inference.X` / `grpc.health.v1.X` by full name. */
export function plainCodec(fullName: string, options: protobuf.IConversionOptions = TO_OBJECT_OPTIONS): PlainCodec {
  const type = tritonProtoRoot().lookupType(fullName);
  return {
    type,
    encode: (value) => Buffer.from(type.encode(type.fromObject(value)).finish()),
    decode: (buf) => dropNulls(type.toObject(type.decode(buf), options)),
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
