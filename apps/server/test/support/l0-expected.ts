/**
 * Comparing a served config with Triton's `expected` text protos from qa/L0_model_config:
 * protobuf-level equality, and the expectation adapted to a host without GPUs.
 */
import { type ModelConfig } from '@tritium/core';
import { plainCodec } from '@tritium/client/proto';
import { protoSafe } from '../../src/grpc/unary-handlers.ts';

const codec = plainCodec('inference.ModelConfig', { enums: String, longs: String, defaults: false, arrays: false, objects: false });

/** Protobuf-level equality: encode, decode without defaults (so absent == default, as proto3). */
export const canonicalConfig = (config: unknown): string => JSON.stringify(codec.decode(codec.encode(protoSafe(config) as object)));

/**
 * The expected files were produced on Triton's CI host with GPU 0; on a host without one, Triton's
 * auto-complete gives KIND_CPU instance groups (the ONNX Runtime backend: count 2). Only that is adapted.
 */
export function onCpuHost(expected: ModelConfig): ModelConfig {
  for (const g of expected.instance_group ?? []) {
    if (g.kind !== 'KIND_GPU') continue;
    g.kind = 'KIND_CPU';
    g.gpus = [];
    if (expected.backend === 'onnxruntime' || expected.platform === 'onnxruntime_onnx') g.count = 2;
  }
  return expected;
}
