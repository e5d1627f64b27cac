/** The protocol layer shared by the client and the server: vendored protos and the fast infer codec. */
export { PROTO_DIR, tritonProtoRoot, plainCodec, TO_OBJECT_OPTIONS } from './load.ts';
export type { PlainCodec } from './load.ts';
export * from './infer-codec.ts';
export { ProtoReader, ProtoWriter, WireFormatError, checkWireFormat } from './wire.ts';
