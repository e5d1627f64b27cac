/**
 * The ONNX protobuf classes (onnx-proto, a protobufjs static build of onnx.proto). onnx-proto is
 * CommonJS, so it is imported whole and its namespace taken from the default export.
 */
import onnxProto from 'onnx-proto';

export const onnx = onnxProto.onnx;
export type { onnx as OnnxTypes } from 'onnx-proto';
