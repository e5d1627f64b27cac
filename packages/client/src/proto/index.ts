/** The protocol layer shared by the client and the server: vendored protos, their message types and the fast infer codec. */
export { PROTO_DIR, tritonProtoRoot, plainCodec, unaryCodecs, TO_OBJECT_OPTIONS } from './load.ts';
export type { PlainCodec, UnaryMethod } from './load.ts';
export type * from '../generated/grpc-types.ts';
export * from './infer-codec.ts';
export * from './infer-decode.ts';
export { ProtoReader, ProtoWriter, WireFormatError, checkWireFormat } from './wire.ts';
